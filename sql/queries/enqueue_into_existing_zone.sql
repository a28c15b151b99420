-- Enqueue protocol: its files change together (docs/protocol.md#where-the-enqueue-protocol-lives).
-- The C++ producer's fast path: quick.enqueue's protocol for the common case, in one statement.
-- Locks the tenant's pointer FOR KEY SHARE, then inserts the item (the INSERT reads the lock's
-- result, so it runs after it). No row when the pointer does not exist or the payload is over
-- quick.max_payload_bytes(): the producer then calls quick.enqueue, which creates the pointer or
-- raises the error. needs_pull: the pointer is parked later than the item and not leased, or the
-- caller is not READ COMMITTED (it may see an older pointer version): the producer then records a
-- pull request with record_pointer_pull, as quick.enqueue does.
WITH p AS MATERIALIZED (
    SELECT p.vesting_time, p.lease_id FROM quick.pointers p WHERE p.tenant = $1 FOR KEY SHARE),
inserted AS (
    INSERT INTO quick.items (tenant, job_type, priority, vesting_time, payload)
    SELECT $1, $2, $5, statement_timestamp() + $4::interval, $3::jsonb FROM p
     WHERE pg_column_size($3::jsonb) <= quick.max_payload_bytes()
    RETURNING id, vesting_time)
SELECT inserted.id,
       (p.vesting_time > inserted.vesting_time AND p.lease_id IS NULL)
           OR current_setting('transaction_isolation') <> 'read committed' AS needs_pull
  FROM p, inserted
