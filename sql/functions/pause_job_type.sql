-- Pause a job type: consumers stop taking its items in every zone (quick.visit_zones leaves them
-- out), while enqueue still works and items already leased finish. Returns true when it was not
-- paused before. A zone that holds only paused items keeps its pointer, requeued for
-- quick.limits.max_pointer_lease at a time (quick.visit_zones); an enqueue of another job type
-- pulls it in as usual, and quick.resume_job_type pulls in every zone that has the type.
CREATE OR REPLACE FUNCTION quick.pause_job_type(job_type text, reason text DEFAULT NULL)
RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    PERFORM quick.check_argument(coalesce(length(pause_job_type.job_type) BETWEEN 1 AND 100, false),
        'quick.pause_job_type: job_type must be 1 to 100 characters, got %s',
        coalesce(quote_literal(left(pause_job_type.job_type, 40)), 'NULL'));
    INSERT INTO quick.paused_job_types AS j (job_type, reason)
    VALUES (pause_job_type.job_type, pause_job_type.reason)
    ON CONFLICT ON CONSTRAINT paused_job_types_pkey DO NOTHING;
    RETURN FOUND;
END
$$;
REVOKE ALL ON FUNCTION quick.pause_job_type(text,text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION quick.pause_job_type(text,text) TO quick_admin;
