-- Single shape, the baseline: one row into the bare table, one autocommit statement.
\set t random(0, 9999)
\set o random(1, 1000000)
INSERT INTO bare_jobs (tenant, job_type, payload)
VALUES ('t' || :t, 'send_receipt', ('{"order_id": ' || :o || ', "channel": "email", "attempt": 1}')::jsonb);
