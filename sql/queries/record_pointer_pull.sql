-- Enqueue protocol: its files change together (docs/protocol.md#where-the-enqueue-protocol-lives).
-- Item $1, which the fast path found enqueued into a parked zone, needs its zone's pointer to
-- vest no later than the item. By default ($2 false) record a pull request, which a consumer
-- applies after the caller's commit. With EnqueueOptions::pull_in_transaction ($2 true) a READ
-- COMMITTED caller first tries to move the pointer itself, inside its transaction, if it can lock
-- it FOR NO KEY UPDATE without waiting (held until the caller commits), and records the request
-- only otherwise. Callers that are not READ COMMITTED may hold an older pointer version: they
-- always record a request. The lock re-reads the pointer, so one that a visit settled since this
-- statement's snapshot is judged on its settled version.
WITH item AS MATERIALIZED (
    SELECT i.tenant, i.vesting_time FROM quick.items i WHERE i.id = $1),
claimed AS MATERIALIZED (
    SELECT p.tenant, i.vesting_time
      FROM item i
     CROSS JOIN LATERAL (
           SELECT p.tenant FROM quick.pointers p
            WHERE $2::boolean AND p.tenant = i.tenant AND p.vesting_time > i.vesting_time
              AND p.lease_id IS NULL AND current_setting('transaction_isolation') = 'read committed'
              FOR NO KEY UPDATE SKIP LOCKED) p),
moved AS (
    UPDATE quick.pointers p SET vesting_time = c.vesting_time
      FROM claimed c WHERE p.tenant = c.tenant AND p.vesting_time > c.vesting_time)
INSERT INTO quick.pointer_pulls (tenant, vesting_time)
SELECT i.tenant, i.vesting_time FROM item i WHERE NOT EXISTS (SELECT 1 FROM claimed)
