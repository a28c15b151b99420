-- Resume a paused job type (quick.pause_job_type). Returns true when it was paused. Zones that
-- held only its items had their pointers requeued for later; a pull request for now, per zone
-- with items of the type, brings them back at once. Every such zone gets one, its pointer vested
-- or not: a visit that read the pause before this resume committed may still be about to requeue
-- its zone for later, and the request, applied after both have committed, pulls it back (one whose
-- pointer is vested by then is simply dropped). Finding the zones reads the whole of quick.items
-- (no index leads with job_type), once per resume.
CREATE OR REPLACE FUNCTION quick.resume_job_type(job_type text)
RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    PERFORM quick.check_not_null(resume_job_type.job_type IS NULL, 'job_type', 'quick.resume_job_type');
    PERFORM quick.check_not_empty(resume_job_type.job_type, 'job_type', 'quick.resume_job_type');
    DELETE FROM quick.paused_job_types j WHERE j.job_type = resume_job_type.job_type;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    -- A pull request also notifies idle consumers.
    INSERT INTO quick.pointer_pulls (tenant, vesting_time)
    SELECT DISTINCT i.tenant, statement_timestamp() FROM quick.items i WHERE i.job_type = resume_job_type.job_type;
    RETURN true;
END
$$;
REVOKE ALL ON FUNCTION quick.resume_job_type(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION quick.resume_job_type(text) TO quick_admin;
