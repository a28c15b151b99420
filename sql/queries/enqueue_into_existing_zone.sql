-- Enqueue protocol: its files change together (docs/protocol.md#where-the-enqueue-protocol-lives).
-- The C++ producer's fast path for one item (quick.enqueue_into_existing_zone). No row when it
-- wrote nothing: the producer then calls quick.enqueue.
SELECT id FROM quick.enqueue_into_existing_zone($1, $2, $3::jsonb, $4::interval, $5, $6::boolean) id
 WHERE id IS NOT NULL
