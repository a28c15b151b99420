-- Enqueue protocol: its files change together (docs/protocol.md#where-the-enqueue-protocol-lives).
-- One pointer per zone (docs/protocol.md#pointer-slots). quick.pointers has no unique index (a
-- unique index checks each non-HOT update's new entry against every earlier version of the
-- pointer, thousands while a long snapshot holds vacuum back); quick.pointer_slots holds one row
-- per tenant that has a pointer, written only when the pointer is created or deleted. These
-- triggers keep the two together, whoever writes the pointer:
--   * BEFORE INSERT claims the tenant's slot with INSERT ... ON CONFLICT DO NOTHING, and skips
--     the pointer's row when the slot is taken: an INSERT into quick.pointers behaves as INSERT
--     ... ON CONFLICT (tenant) DO NOTHING did on the old unique index. It waits for a transaction
--     that is creating or deleting the tenant's pointer, and under REPEATABLE READ / SERIALIZABLE
--     a slot taken by a transaction the snapshot does not see raises 40001. A slot whose pointer
--     is gone (deleted while the triggers did not exist or were disabled: the upgrade to
--     migration 0011, session_replication_role = replica) is taken over instead of skipping
--     the insert for ever, which would make quick.enqueue's loop spin;
--   * AFTER DELETE frees the slot, in the deleting transaction;
--   * AFTER TRUNCATE empties the slots;
--   * BEFORE UPDATE OF tenant refuses the update: a pointer never changes tenant.
-- Like wake_consumers.sql, the triggers sit beside their functions and are re-created by every
-- quick migrate. The functions are SECURITY DEFINER: an admin writing quick.pointers directly
-- needs no rights on the slots.
CREATE OR REPLACE FUNCTION quick.claim_pointer_slot()
RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    slot_version tid;
BEGIN
    LOOP
        INSERT INTO quick.pointer_slots (tenant) VALUES (NEW.tenant) ON CONFLICT (tenant) DO NOTHING;
        IF FOUND THEN
            RETURN NEW;
        END IF;
        -- The slot is taken, by a committed transaction (ON CONFLICT waited for one in
        -- progress). Its pointer was created with it, so a new statement sees the pointer (under
        -- READ COMMITTED; under REPEATABLE READ the snapshot saw the slot, hence the pointer), or
        -- sees it being deleted, not yet committed: the caller then waits on it, as on any
        -- pointer. The common case, and no lock taken.
        IF EXISTS (SELECT 1 FROM quick.pointers p
                    WHERE p.tenant >= NEW.tenant AND p.tenant <= NEW.tenant  -- newest version first
                    ORDER BY p.tenant DESC LIMIT 1) THEN
            RETURN NULL;  -- the tenant has a pointer: insert nothing
        END IF;
        -- No pointer: a stale slot (its pointer deleted while the triggers did not fire), or one
        -- freed or taken over since. The slot there is now is locked, so that no other creator
        -- takes it over while this one decides (deciding on one slot and deleting another, one a
        -- concurrent takeover put in its place, would leave the tenant two pointers), and looked
        -- at again. Freed meanwhile: claim again.
        SELECT s.ctid INTO slot_version FROM quick.pointer_slots s WHERE s.tenant = NEW.tenant FOR UPDATE;
        CONTINUE WHEN NOT FOUND;
        IF EXISTS (SELECT 1 FROM quick.pointers p
                    WHERE p.tenant >= NEW.tenant AND p.tenant <= NEW.tenant
                    ORDER BY p.tenant DESC LIMIT 1) THEN
            RETURN NULL;  -- a concurrent takeover's pointer, committed with the slot just locked
        END IF;
        -- Stale, and locked: that slot, and only that one, is taken over.
        DELETE FROM quick.pointer_slots s WHERE s.ctid = slot_version;
    END LOOP;
END
$$;
REVOKE ALL ON FUNCTION quick.claim_pointer_slot() FROM PUBLIC;

CREATE OR REPLACE FUNCTION quick.free_pointer_slot()
RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    DELETE FROM quick.pointer_slots s WHERE s.tenant = OLD.tenant;
    RETURN NULL;
END
$$;
REVOKE ALL ON FUNCTION quick.free_pointer_slot() FROM PUBLIC;

CREATE OR REPLACE FUNCTION quick.free_all_pointer_slots()
RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    TRUNCATE quick.pointer_slots;
    RETURN NULL;
END
$$;
REVOKE ALL ON FUNCTION quick.free_all_pointer_slots() FROM PUBLIC;

CREATE OR REPLACE FUNCTION quick.refuse_pointer_tenant_change()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF NEW.tenant IS DISTINCT FROM OLD.tenant THEN
        RAISE EXCEPTION 'quick.pointers: a pointer''s tenant cannot change (from % to %)', OLD.tenant, NEW.tenant
            USING ERRCODE = 'check_violation';
    END IF;
    RETURN NEW;
END
$$;
REVOKE ALL ON FUNCTION quick.refuse_pointer_tenant_change() FROM PUBLIC;

CREATE OR REPLACE TRIGGER claim_pointer_slot BEFORE INSERT ON quick.pointers
    FOR EACH ROW EXECUTE FUNCTION quick.claim_pointer_slot();
CREATE OR REPLACE TRIGGER free_pointer_slot AFTER DELETE ON quick.pointers
    FOR EACH ROW EXECUTE FUNCTION quick.free_pointer_slot();
CREATE OR REPLACE TRIGGER free_all_pointer_slots AFTER TRUNCATE ON quick.pointers
    FOR EACH STATEMENT EXECUTE FUNCTION quick.free_all_pointer_slots();
CREATE OR REPLACE TRIGGER refuse_pointer_tenant_change BEFORE UPDATE OF tenant ON quick.pointers
    FOR EACH ROW EXECUTE FUNCTION quick.refuse_pointer_tenant_change();
