# Shared by the two-tenant plots (noisy_neighbour, long_jobs): tenant B's pickup latency, job by
# job, per system; and tenant A's throughput meanwhile. Reads <name>_b_latency.csv (system, seq,
# latency_ms) and <name>.csv (system, a_jobs_per_s). The loading script sets `name` and `heading`.
load system("dirname ".ARG0)."/_common.gp"
file = dir."/".name.".csv"
raw = dir."/".name."_b_latency.csv"
if (!has(file)) { print "skip: no ".file; exit }
set output dir."/".name.".png"
set terminal pngcairo size 1400,520 font "sans,10" noenhanced
set multiplot layout 1,2 title heading
if (has(raw)) {
  systems = values_of(raw, 1)
  set title "tenant B: pickup latency of each job"
  set xlabel "B's job number"
  set ylabel "ms"
  set logscale y
  plot for [s in systems] rows(raw, 1, unspace(s)) using "seq":"latency_ms" with linespoints lw 2 pt 7 ps 0.6 title unspace(s)
  unset logscale y
}
set title "tenant A: throughput while B is served"
set xlabel ""
set ylabel "A's jobs/s"
set yrange [0:*]
set style fill solid 0.6 border -1
set boxwidth 0.6
set xrange [-0.6:*]
set offsets 0, 0, graph 0.1, 0  # room for the labels
unset key
set xtics rotate by 20 right
plot file using 0:"a_jobs_per_s":xtic(1) with boxes, \
     "" using 0:"a_jobs_per_s":(sprintf("%.0f", column("a_jobs_per_s"))) with labels offset 0,1
unset multiplot
