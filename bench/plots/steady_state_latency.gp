# Steady state: end-to-end latency (enqueue -> handler start) by percentile, one line per system.
# Reads steady_state_latency.csv: system, percentile, ms.
load system("dirname ".ARG0)."/_common.gp"
file = dir."/steady_state_latency.csv"
if (!has(file)) { print "skip: no ".file; exit }
set output dir."/steady_state_latency.png"
systems = values_of(file, 1)
set title "Steady state: end-to-end latency by percentile"
set xlabel "percentile"
set ylabel "ms"
set logscale y
set key inside top left vertical
plot for [s in systems] rows(file, 1, unspace(s)) using "percentile":"ms" with linespoints lw 2 pt 7 title unspace(s)
