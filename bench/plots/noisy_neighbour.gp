# Noisy neighbour: tenant B's pickup latency, job by job, next to tenant A's backlog, per system;
# and tenant A's throughput meanwhile. Reads noisy_neighbour_b_latency.csv and noisy_neighbour.csv.
name = "noisy_neighbour"
heading = "Noisy neighbour: tenant A has a backlog, tenant B enqueues one job at a time"
load system("dirname ".ARG0)."/_b_latency.gp"
