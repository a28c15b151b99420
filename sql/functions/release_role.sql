-- Give a role up (on a clean stop) so another consumer can claim it at once.
CREATE OR REPLACE FUNCTION quick.release_role(role text, holder text)
RETURNS boolean
LANGUAGE sql VOLATILE AS $$
    DELETE FROM quick.consumer_roles r WHERE r.role = release_role.role AND r.holder = release_role.holder
    RETURNING true
$$;
