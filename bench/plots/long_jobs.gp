# Long jobs beside short ones: tenant B's pickup latency, job by job, beside tenant A's 50 ms jobs,
# per run; and tenant A's throughput. Reads long_jobs_b_latency.csv and long_jobs.csv.
name = "long_jobs"
heading = "Long jobs beside short ones: A's jobs take 50 ms, B's 0.5 ms"
load system("dirname ".ARG0)."/_b_latency.gp"
