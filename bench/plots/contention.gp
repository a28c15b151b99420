# Contention (the paper's Figure 7): by selection_frac, (a) pickup latency p50/p99 under steady
# load, (b) pointer-lease failures as % of attempts, split by where they failed, (c) maximum
# throughput (drain). Reads contention.csv: selection_frac, load_p50_ms, load_p99_ms,
# load_failed_pct, load_locked_pct, load_not_vested_pct, drain_failed_pct, max_jobs_per_s.
load system("dirname ".ARG0)."/_common.gp"
file = dir."/contention.csv"
if (!has(file)) { print "skip: no ".file; exit }
set output dir."/contention.png"
set terminal pngcairo size 1200,1100 font "sans,10" noenhanced
set multiplot layout 3,1 title "Effect of selection_frac, 4 consumers with random selection"
set logscale x
set xlabel "selection_frac"
set key outside right vertical
set lmargin 10
set rmargin 45
set autoscale xfix
set offsets graph 0.03, graph 0.03, 0, 0
set title "(a) pickup latency under steady load"
set ylabel "ms"
set logscale y
plot file using "selection_frac":"load_p50_ms" with linespoints lw 2 pt 7 title "p50", \
     "" using "selection_frac":"load_p99_ms" with linespoints lw 2 pt 7 title "p99"
unset logscale y
set title "(b) failures to obtain a pointer lease (% of attempts)"
set ylabel "%"
set yrange [0:100]
plot file using "selection_frac":"load_failed_pct" with linespoints lw 2 pt 7 title "steady load: all", \
     "" using "selection_frac":"load_locked_pct" with linespoints lw 1 pt 6 title "steady load: locked (zone being visited)", \
     "" using "selection_frac":"load_not_vested_pct" with linespoints lw 1 pt 4 title "steady load: not vested (visited since the peek)", \
     "" using "selection_frac":"drain_failed_pct" with linespoints lw 2 pt 5 dt 2 title "drain (saturated): all", \
     10 with lines dt 3 lc rgb "red" title "target at 0.02: 10%"
set title "(c) maximum throughput (drain of a backlog, 1 item per tenant)"
set ylabel "jobs/s"
set yrange [0:*]
plot file using "selection_frac":"max_jobs_per_s" with linespoints lw 2 pt 7 title "jobs/s"
unset multiplot
