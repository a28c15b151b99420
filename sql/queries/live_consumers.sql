-- The consumers of this database whose membership lease is live (quick.live_consumers).
SELECT holder FROM quick.live_consumers()
