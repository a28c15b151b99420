-- Enqueue protocol: its files change together (docs/protocol.md#where-the-enqueue-protocol-lives).
-- The C++ producer's batch fast path: quick.enqueue_batch's protocol for the common case, in one
-- statement read straight from the same JSON array ($1, built by enqueue_batch_in from items it
-- has validated): FOR KEY SHARE on each distinct tenant's pointer (in tenant order, each through
-- its own index lookup), the pull requests quick.enqueue_batch would record, then the items.
-- Items and requests are written only when every tenant's pointer was locked and every payload is
-- within quick.max_payload_bytes(): the InitPlan over `locked` runs, and so takes every lock,
-- before either insert reads a row. Otherwise no row comes back and nothing but locks was taken:
-- the producer then calls quick.enqueue_batch, which creates the pointers or raises the error.
-- Batches with client item ids always go to quick.enqueue_batch.
--
-- $2 (EnqueueOptions::pull_in_transaction): a READ COMMITTED caller moves a parked pointer itself
-- instead of recording a pull request, when it can lock the pointer FOR NO KEY UPDATE without
-- waiting (SKIP LOCKED: a consumer holds it right now, or another enqueuer pulled it first); it
-- then holds that lock until it commits. Pointers it cannot lock get a request as usual.
--
-- Returns the new ids, one per input item. The items are inserted in input order and each takes
-- its id from the identity sequence as it is inserted, so the ids ascend in input order: the
-- producer sorts them and need not be told which id is whose. (Drawing the ids in `input` and
-- joining them back by position cost about 1.5 us per item, a tenth of the statement.)
-- Absent keys take quick.enqueue_batch's defaults; the producer leaves out default values, whose
-- parsing (an interval per item) cost about 1 us per item.
WITH input AS MATERIALIZED (
    SELECT a.ord, a.e->>'tenant' AS tenant, a.e->>'job_type' AS job_type,
           coalesce(a.e->'payload', '{}'::jsonb) AS payload,
           -- Measured here, on the value as built, as quick.enqueue_batch measures it: once stored
           -- in the CTE a small value has a shorter header and measures 3 bytes less.
           pg_column_size(coalesce(a.e->'payload', '{}'::jsonb)) AS payload_bytes,
           statement_timestamp() + coalesce((a.e->>'vesting_delay')::interval, interval '0') AS vesting_time,
           coalesce((a.e->>'priority')::integer, 0) AS priority
      FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS a(e, ord)),
wanted AS MATERIALIZED (
    SELECT i.tenant, min(i.vesting_time) AS first FROM input i GROUP BY i.tenant),
locked AS MATERIALIZED (
    SELECT p.tenant, p.vesting_time, p.lease_id, w.first
      FROM (SELECT * FROM wanted ORDER BY tenant) w
      CROSS JOIN LATERAL (
            SELECT p.tenant, p.vesting_time, p.lease_id FROM quick.pointers p
             WHERE p.tenant = w.tenant FOR KEY SHARE) p),
-- One row, computed once: the settings are read once per statement, not once per item.
complete AS MATERIALIZED (
    SELECT (SELECT count(*) FROM locked) = (SELECT count(*) FROM wanted)
           AND (SELECT max(i.payload_bytes) FROM input i) <= quick.max_payload_bytes() AS ok,
           current_setting('transaction_isolation') <> 'read committed' AS always_pull),
-- Pulled in the caller's transaction ($2): the parked, unleased pointers locked without waiting,
-- in tenant order. The lock re-reads the pointer, so one that a visit settled since this
-- statement's snapshot is judged on its settled version.
claimed AS MATERIALIZED (
    SELECT m.tenant, m.first
      FROM (SELECT l.tenant, l.first FROM locked l, complete c
             WHERE $2::boolean AND c.ok AND NOT c.always_pull AND l.vesting_time > l.first AND l.lease_id IS NULL
             ORDER BY l.tenant) m
     CROSS JOIN LATERAL (
           SELECT 1 FROM quick.pointers p
            WHERE p.tenant = m.tenant AND p.vesting_time > m.first AND p.lease_id IS NULL
              FOR NO KEY UPDATE SKIP LOCKED) x),
moved AS (
    UPDATE quick.pointers p SET vesting_time = c.first
      FROM claimed c WHERE p.tenant = c.tenant AND p.vesting_time > c.first),
pulls AS (
    INSERT INTO quick.pointer_pulls (tenant, vesting_time)
    SELECT l.tenant, l.first FROM locked l, complete c
     WHERE c.ok AND ((l.vesting_time > l.first AND l.lease_id IS NULL) OR c.always_pull)
       AND NOT EXISTS (SELECT 1 FROM claimed m WHERE m.tenant = l.tenant))
INSERT INTO quick.items (tenant, job_type, priority, vesting_time, payload)
SELECT i.tenant, i.job_type, i.priority, i.vesting_time, i.payload
  FROM input i, complete c
 WHERE c.ok
 ORDER BY i.ord
RETURNING id
