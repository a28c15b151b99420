-- The largest accepted payload, in bytes of its jsonb representation (pg_column_size): the
-- setting quick.max_payload_bytes, default 1 MiB. A Postgres setting rather than a table row, so
-- that reading it costs no query per enqueue; set it like any other:
--   ALTER DATABASE app SET quick.max_payload_bytes = 4194304;   -- or ALTER ROLE ..., or SET
-- and read it with: SELECT quick.max_payload_bytes();
CREATE OR REPLACE FUNCTION quick.invalid_setting(name text, value text)
RETURNS integer
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
        MESSAGE = format('setting %s must be a positive integer, got %s', name, quote_literal(value));
END
$$;

-- A single expression, so that Postgres inlines it into the statements that call it.
CREATE OR REPLACE FUNCTION quick.max_payload_bytes()
RETURNS integer
LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN coalesce(current_setting('quick.max_payload_bytes', true), '') = '' THEN 1048576
                WHEN current_setting('quick.max_payload_bytes', true) ~ '^[0-9]{1,9}$'
                     AND current_setting('quick.max_payload_bytes', true)::integer > 0
                    THEN current_setting('quick.max_payload_bytes', true)::integer
                ELSE quick.invalid_setting('quick.max_payload_bytes', current_setting('quick.max_payload_bytes', true))
           END
$$;
