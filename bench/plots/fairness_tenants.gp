# Fairness per tenant: each tenant's item latency (p50 and p99) against its enqueue rate, per
# load. Reads fairness_tenants.csv: load, rate_per_s, p50_ms, p99_ms.
load system("dirname ".ARG0)."/_common.gp"
file = dir."/fairness_tenants.csv"
if (!has(file)) { print "skip: no ".file; exit }
set output dir."/fairness_tenants.png"
loads = values_of(file, 1)
set title "Fairness per tenant: item latency against the tenant's enqueue rate"
set xlabel "tenant's items/s"
set ylabel "ms"
set logscale xy
set key inside top left vertical
plot for [l in loads] rows(file, 1, unspace(l)) using "rate_per_s":"p99_ms" with points pt 7 ps 0.5 title unspace(l)." p99", \
     for [l in loads] rows(file, 1, unspace(l)) using "rate_per_s":"p50_ms" with points pt 6 ps 0.5 title unspace(l)." p50"
