# Fairness (the paper's Figures 5 and 6): pointer pickup and item latency percentiles, per load.
# Reads fairness_latency.csv: load (uniform, skewed, skewed_fifo), kind (pointer, item),
# percentile, ms.
load system("dirname ".ARG0)."/_common.gp"
file = dir."/fairness_latency.csv"
if (!has(file)) { print "skip: no ".file; exit }
set output dir."/fairness_latency.png"
loads = values_of(file, 1)
set title "Fairness: latency percentiles, uniform vs skewed load"
set xlabel "percentile"
set ylabel "ms"
set logscale y
set xrange [-0.3:2.3]
set key inside top left vertical
plot for [l in loads] for [k in "pointer item"] rows2(file, 1, unspace(l), 2, k) \
     using 0:"ms":xtic(strcol("percentile")) with linespoints lw 2 pt 7 title unspace(l)." ".k
