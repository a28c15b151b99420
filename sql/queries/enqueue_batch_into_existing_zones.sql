-- Enqueue protocol: its files change together (docs/protocol.md#where-the-enqueue-protocol-lives).
-- The C++ producer's batch fast path (quick.enqueue_batch_into_existing_zones): the new ids, or no
-- row when it wrote nothing; the producer then calls quick.enqueue_batch.
SELECT id FROM quick.enqueue_batch_into_existing_zones($1::jsonb, $2::boolean) id
