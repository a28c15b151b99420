# Tenant scale: by the number of tenants with pointers, the Scanner's peek latency, the enqueue
# rate and a consumer's resident memory. Reads tenant_scale.csv: tenants, peek_p50_ms,
# peek_p99_ms, enqueue_per_s, consumer_mib.
load system("dirname ".ARG0)."/_common.gp"
file = dir."/tenant_scale.csv"
if (!has(file)) { print "skip: no ".file; exit }
set output dir."/tenant_scale.png"
set terminal pngcairo size 1500,480 font "sans,10" noenhanced
set multiplot layout 1,3 title "Tenant scale (one pointer per tenant)"
set logscale x
set xlabel "tenants"
set format x "%.0s%c"
set yrange [0:*]
# Room around the points: autoscaling would extend a log axis to the next decade.
set autoscale xfix
set offsets graph 0.08, graph 0.08, graph 0.1, 0
set key inside top right vertical
set title "peek_pointers(1000) latency"
set ylabel "ms"
plot file using "tenants":"peek_p50_ms" with linespoints lw 2 pt 7 title "p50", \
     "" using "tenants":"peek_p99_ms" with linespoints lw 2 pt 7 title "p99"
set title "enqueue rate, 1 item per transaction, 4 clients"
set ylabel "items/s"
plot file using "tenants":"enqueue_per_s" with linespoints lw 2 pt 7 notitle
set title "consumer resident memory (peak - before start)"
set ylabel "MiB"
plot file using "tenants":"consumer_mib" with linespoints lw 2 pt 7 notitle
unset multiplot
