-- quick.enqueue_batch itself, with the JSON array built in SQL.
SELECT count(*) FROM quick.enqueue_batch((
    SELECT jsonb_agg(jsonb_build_object(
               'tenant', 't' || (random() * 9999)::int, 'job_type', 'send_receipt',
               'payload', ('{"order_id": ' || (random() * 1e6)::int || ', "channel": "email", "attempt": 1}')::jsonb))
      FROM generate_series(1, 100)));
