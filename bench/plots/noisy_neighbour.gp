# Noisy neighbour: tenant B's pickup latency, job by job, next to tenant A's backlog, per system;
# and tenant A's throughput meanwhile. Reads noisy_neighbour_b_latency.csv (system, seq,
# latency_ms) and noisy_neighbour.csv (system, a_jobs_per_s).
load system("dirname ".ARG0)."/_common.gp"
file = dir."/noisy_neighbour.csv"
raw = dir."/noisy_neighbour_b_latency.csv"
if (!has(file)) { print "skip: no ".file; exit }
set output dir."/noisy_neighbour.png"
set terminal pngcairo size 1400,520 font "sans,10" noenhanced
set multiplot layout 1,2 title "Noisy neighbour: tenant A has a backlog, tenant B enqueues one job at a time"
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
plot file using 0:"a_jobs_per_s":xtic(1) with boxes, \
     "" using 0:"a_jobs_per_s":(sprintf("%.0f", column("a_jobs_per_s"))) with labels offset 0,1
unset multiplot
