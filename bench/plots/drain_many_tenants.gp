# Drain throughput, many tenants: jobs/s by parallelism (consumers or worker connections), one
# line per system. Reads drain_many_tenants.csv: system, parallelism, jobs_per_s.
load system("dirname ".ARG0)."/_common.gp"
file = dir."/drain_many_tenants.csv"
if (!has(file)) { print "skip: no ".file; exit }
set output dir."/drain_many_tenants.png"
systems = values_of(file, 2)
set title "Drain throughput, many tenants (no-op jobs)"
set xlabel "consumers (quick-pg) / worker connections (baseline)"
set ylabel "jobs/s"
set logscale x 2
set yrange [0:*]
plot for [s in systems] rows(file, 2, unspace(s)) using "parallelism":"jobs_per_s" \
     with linespoints lw 2 pt 7 title unspace(s)
