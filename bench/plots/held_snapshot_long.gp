# Held snapshot for 10 minutes (issue 19's protocol): per one-minute window, end-to-end p99 and
# jobs done per second, one line per run. Reads held_snapshot_long.csv.
name = "held_snapshot_long"
heading = "1,000 jobs/s, a REPEATABLE READ snapshot held 10 minutes, then 2 minutes of recovery"
load system("dirname ".ARG0)."/_windows.gp"
