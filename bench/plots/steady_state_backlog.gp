# Steady state: items enqueued but not yet done, over time, one line per system. Reads
# steady_state_backlog.csv: system, t_s, backlog.
load system("dirname ".ARG0)."/_common.gp"
file = dir."/steady_state_backlog.csv"
if (!has(file)) { print "skip: no ".file; exit }
set output dir."/steady_state_backlog.png"
systems = values_of(file, 1)
set title "Steady state: backlog over time"
set xlabel "s"
set ylabel "items enqueued, not done"
set yrange [0:*]
set key inside top left vertical
plot for [s in systems] rows(file, 1, unspace(s)) using "t_s":"backlog" with lines lw 2 title unspace(s)
