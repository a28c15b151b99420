-- Enqueue protocol: its files change together (docs/protocol.md#where-the-enqueue-protocol-lives).
-- The placement fence (docs/scaling.md#fencing), checked by quick.enqueue and quick.enqueue_batch
-- before they create a tenant's pointer: a tenant whose pointer exists is in this database (a move
-- deletes the pointer under a lock that conflicts with the enqueue's), so only the creation of a
-- pointer needs the check, and the common enqueue pays nothing.
--
-- quick.tenant_lock_key: the advisory lock a move of the tenant holds exclusively, in both of its
-- databases, until it commits (or until its prepared transaction is resolved).
-- quick.placement_shard: the quick.placement_guards row a move of the tenant updates.
CREATE OR REPLACE FUNCTION quick.tenant_lock_key(tenant text)
RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp AS $$
    SELECT pg_catalog.hashtextextended('quick tenant move/' || tenant, 0);
$$;
REVOKE ALL ON FUNCTION quick.tenant_lock_key(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION quick.placement_shard(tenant text)
RETURNS integer LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp AS $$
    SELECT (pg_catalog.hashtextextended(tenant, 0) & 255)::integer;
$$;
REVOKE ALL ON FUNCTION quick.placement_shard(text) FROM PUBLIC;

-- Raises QM001 when one of `tenants` moved away from this database. Takes each tenant's move lock
-- shared, held to the end of the caller's transaction: a move of these tenants that is running
-- now is waited for (its fence is then read, by a READ COMMITTED caller's next statement), and one
-- that starts later waits for the caller to commit, then moves what it enqueued. A REPEATABLE READ
-- or SERIALIZABLE caller cannot read a fence committed after its snapshot: it locks the tenants'
-- quick.placement_guards rows FOR SHARE, which a move updates, so a move that committed after its
-- snapshot makes it fail with 40001 (retry the transaction, as for any serialization failure).
-- quick.pause_tenant and quick.resume_tenant call it too: a pause is the tenant's, like its items.
CREATE OR REPLACE FUNCTION quick.check_tenants_here(tenants text[], caller text)
RETURNS void LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    fenced record;
BEGIN
    PERFORM pg_catalog.pg_advisory_xact_lock_shared(k.key)
       FROM (SELECT DISTINCT quick.tenant_lock_key(t) AS key FROM unnest(tenants) t) k ORDER BY k.key;
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        PERFORM 1 FROM quick.placement_guards g
         WHERE g.shard IN (SELECT quick.placement_shard(t) FROM unnest(tenants) t)
         ORDER BY g.shard FOR SHARE;
    END IF;
    SELECT m.tenant, m.moved_to INTO fenced FROM quick.moved_tenants m WHERE m.tenant = ANY (tenants)
     ORDER BY m.tenant LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'QM001',
            MESSAGE = format('%s: tenant %s is not in database %s: it moved to database "%s"', caller,
                             quote_literal(fenced.tenant), quote_ident(current_database()), fenced.moved_to),
            DETAIL = json_build_object('tenant', fenced.tenant, 'moved_to', fenced.moved_to)::text,
            HINT = 'Call it at the database that holds the tenant now (quick::Router does so for enqueues).';
    END IF;
END
$$;
REVOKE ALL ON FUNCTION quick.check_tenants_here(text[],text) FROM PUBLIC;
