# Steady load: per 10 s window, end-to-end p99 and jobs done per second, one line per run
# (system, tenants). Reads steady_load.csv.
name = "steady_load"
heading = "two producers, one job per transaction as fast as they can"
load system("dirname ".ARG0)."/_windows.gp"
