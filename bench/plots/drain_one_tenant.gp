# Drain throughput, one tenant: jobs/s, one bar per drain (quick-pg and baseline batch 10 in
# alternating rounds, batch 1 once). Reads drain_one_tenant.csv: load (the round), system,
# jobs_per_s.
load system("dirname ".ARG0)."/_common.gp"
file = dir."/drain_one_tenant.csv"
if (!has(file)) { print "skip: no ".file; exit }
set output dir."/drain_one_tenant.png"
set title "Drain throughput, one tenant (no-op jobs)"
set ylabel "jobs/s"
set yrange [0:*]
set style fill solid 0.6 border -1
set boxwidth 0.6
set xrange [-0.6:*]
set offsets 0, 0, graph 0.1, 0  # room for the labels
unset key
set bmargin 4
plot file using 0:"jobs_per_s":xtic(sprintf("%s\n%s", strcol("system"), strcol("load"))) with boxes, \
     "" using 0:"jobs_per_s":(sprintf("%.0f", column("jobs_per_s"))) with labels offset 0,1
