# Enqueue throughput: quick-pg against plain INSERTs, per alternating round. Reads enqueue.csv:
# comparison (single|batch), round (1..N; "all" rows = totals, not plotted), phase, jobs_per_s,
# ratio_vs_plain and ratio_vs_queue (quick rows; the latter for batches, against the plain SKIP
# LOCKED queue's jobs table).
load system("dirname ".ARG0)."/_common.gp"
file = dir."/enqueue.csv"
if (!has(file)) { print "skip: no ".file; exit }
set output dir."/enqueue.png"
set terminal pngcairo size 1500,500 font "sans,10" noenhanced
set multiplot layout 1,3 title "Enqueue throughput, 4 clients (rounds alternate baseline and quick-pg)"
set xlabel "round"
set xtics 1
set key inside bottom right vertical
set offsets graph 0.05, graph 0.05, 0, 0
set yrange [0:*]
set ylabel "jobs/s"
set title "1 item per transaction"
plot rows(file, 3, "plain-1") using "round":"jobs_per_s" with linespoints lw 2 pt 7 title "plain one-row INSERT", \
     rows(file, 3, "quick-1") using "round":"jobs_per_s" with linespoints lw 2 pt 7 title "quick::enqueue_in"
set title "100 items per transaction"
plot rows(file, 3, "plain-100") using "round":"jobs_per_s" with linespoints lw 2 pt 7 title "plain 100-row INSERT, bare table", \
     rows(file, 3, "queue-100") using "round":"jobs_per_s" with linespoints lw 2 pt 7 title "plain 100-row INSERT, SKIP LOCKED queue's table", \
     rows(file, 3, "quick-100") using "round":"jobs_per_s" with linespoints lw 2 pt 7 title "quick::enqueue_batch_in"
set title "quick-pg / plain, with the targets"
set ylabel "ratio of jobs/s"
set yrange [0:1.2]
plot rows(file, 3, "quick-1") using "round":"ratio_vs_plain" with linespoints lw 2 pt 7 lc 1 title "1 item", \
     0.8 with lines dt 2 lc 1 title "target 1 item (0.8)", \
     rows(file, 3, "quick-100") using "round":"ratio_vs_plain" with linespoints lw 2 pt 7 lc 2 title "100 items", \
     rows(file, 3, "quick-100") using "round":"ratio_vs_queue" with linespoints lw 2 pt 6 lc 3 title "100 items vs the queue's table", \
     0.5 with lines dt 2 lc 2 title "target 100 items (0.5)"
unset multiplot
