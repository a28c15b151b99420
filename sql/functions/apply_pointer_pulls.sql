-- Apply pull requests recorded by enqueue, after their transactions committed. A pointer that a
-- consumer holds (leased, or locked right now) is never touched: the holder settles it from the
-- zone's real contents, which include the committed item. Never waits on a row lock.
CREATE OR REPLACE FUNCTION quick.apply_pointer_pulls(max_requests integer DEFAULT 10000)
RETURNS integer
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    pulled integer;
BEGIN
    PERFORM quick.check_argument(max_requests > 0,
        'quick.apply_pointer_pulls: max_requests must be positive, got %s', coalesce(max_requests::text, 'NULL'));
    -- Scanners call this before every peek; usually there is nothing to do.
    IF NOT EXISTS (SELECT 1 FROM quick.pointer_pulls) THEN
        RETURN 0;
    END IF;
    -- Requests another applier is working on right now are skipped, so appliers never wait.
    -- Every pointer is reached by one index lookup per tenant (LATERAL), and requests by their
    -- ctid: a join would read the whole pointer table, which under constant leases is large.
    WITH requests AS MATERIALIZED (
        SELECT r.ctid AS request, r.tenant, r.vesting_time FROM quick.pointer_pulls r
         LIMIT max_requests FOR UPDATE SKIP LOCKED),
    wanted AS MATERIALIZED (
        SELECT r.tenant, min(r.vesting_time) AS vesting_time FROM requests r GROUP BY r.tenant),
    free AS MATERIALIZED (
        SELECT p.tenant, p.lease_id, w.vesting_time AS wanted_vesting
          FROM (SELECT * FROM wanted ORDER BY tenant) w
         CROSS JOIN LATERAL (
               SELECT p.tenant, p.lease_id FROM quick.pointers p
                WHERE p.tenant = w.tenant
                  FOR NO KEY UPDATE SKIP LOCKED) p),
    gone AS MATERIALIZED (
        SELECT w.tenant FROM wanted w
          LEFT JOIN LATERAL (SELECT true AS found FROM quick.pointers p
                              WHERE p.tenant = w.tenant LIMIT 1) e ON true
         WHERE e.found IS NULL),
    pulled_pointers AS (
        UPDATE quick.pointers p SET vesting_time = f.wanted_vesting
          FROM free f
         WHERE p.tenant = f.tenant AND f.lease_id IS NULL AND p.vesting_time > f.wanted_vesting
        RETURNING p.tenant),
    done AS (
        -- Requests are finished when applied, when a lease holder will settle the pointer, or when
        -- the pointer is gone; requests for pointers locked right now stay for the next round.
        DELETE FROM quick.pointer_pulls r
         WHERE r.ctid = ANY (ARRAY(SELECT q.request FROM requests q
                                    WHERE q.tenant IN (SELECT f.tenant FROM free f)
                                       OR q.tenant IN (SELECT g.tenant FROM gone g)))
        RETURNING 1)
    SELECT count(*) INTO pulled FROM pulled_pointers;
    RETURN pulled;
END
$$;
