# Load sweep: end-to-end p99 against the load, as a share of each system's own drain rate and
# in items/s, one line per system; 50 ms is the steady state's target.
# Reads load_sweep.csv: system, load_fraction, offered_items_per_s, e2e_p99_ms.
load system("dirname ".ARG0)."/_common.gp"
file = dir."/load_sweep.csv"
if (!has(file)) { print "skip: no ".file; exit }
set output dir."/load_sweep.png"
systems = values_of(file, 1)
set multiplot layout 1,2 title "Load sweep: end-to-end p99"
set ylabel "e2e p99 ms"
set logscale y
set key inside top left vertical
set xlabel "load, % of the system's own drain rate"
plot for [s in systems] rows(file, 1, unspace(s)) using (100 * column("load_fraction")):"e2e_p99_ms" \
       with linespoints lw 2 pt 7 title unspace(s), \
     50 with lines dt 2 lc rgb "gray" title "50 ms"
set xlabel "offered load, items/s"
plot for [s in systems] rows(file, 1, unspace(s)) using "offered_items_per_s":"e2e_p99_ms" \
       with linespoints lw 2 pt 7 title unspace(s), \
     50 with lines dt 2 lc rgb "gray" title "50 ms"
unset multiplot
