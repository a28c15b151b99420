# Shared by the windowed-load plots (support/windowed_load.h: held_snapshot, steady_load): per
# 10 s window, end-to-end p99 and jobs done per second, one line per run. The loading script
# sets `name` (its CSV and PNG) and `heading`, then loads this file.
load system("dirname ".ARG0)."/_common.gp"
file = dir."/".name.".csv"
if (!has(file)) { print "skip: no ".file; exit }
set output dir."/".name.".png"
set terminal pngcairo size 1400,560 font "sans,10" noenhanced
set multiplot layout 1,2 title heading
runs = values_of(file, 1)
set xlabel "s since the load started (window end)"
set title "end-to-end p99 of the jobs started in each window"
set ylabel "ms"
set logscale y
plot for [r in runs] rows(file, 1, unspace(r)) using "t_s":(column("e2e_p99_ms") > 0 ? column("e2e_p99_ms") : NaN) \
     with linespoints lw 2 pt 7 ps 0.6 title unspace(r)
unset logscale y
set title "jobs done per second in each window"
set ylabel "jobs/s"
set yrange [0:*]
plot for [r in runs] rows(file, 1, unspace(r)) using "t_s":"done_per_s" with linespoints lw 2 pt 7 ps 0.6 title unspace(r)
unset multiplot
