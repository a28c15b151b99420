-- Give a role up (on a clean stop) so another consumer can claim it at once. Returns whether the
-- caller held it.
CREATE OR REPLACE FUNCTION quick.release_role(role text, holder text)
RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
BEGIN
    PERFORM quick.check_argument(length(release_role.role) > 0, 'quick.release_role: role must not be NULL or empty');
    PERFORM quick.check_argument(length(release_role.holder) > 0,
        'quick.release_role: holder must not be NULL or empty');
    DELETE FROM quick.consumer_roles r WHERE r.role = release_role.role AND r.holder = release_role.holder;
    RETURN FOUND;
END
$$;
REVOKE ALL ON FUNCTION quick.release_role(text,text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION quick.release_role(text,text) TO quick_consumer, quick_admin;
