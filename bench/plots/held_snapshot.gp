# Held snapshot: per 10 s window, end-to-end p99 and jobs done per second, one line per run
# (system, tenants, with or without the held snapshot). Reads held_snapshot.csv.
name = "held_snapshot"
heading = "1,000 jobs/s, without and with a held REPEATABLE READ snapshot"
load system("dirname ".ARG0)."/_windows.gp"
