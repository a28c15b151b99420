-- Apply up to $1 pull requests recorded by enqueues that have committed.
SELECT quick.apply_pointer_pulls($1)
