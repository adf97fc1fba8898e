-- 0022_event_order: a replica's events are numbered by the database, in
-- the order their transactions commit (docs/design/0029, step 1).
--
-- A batch that writes events first calls csched_fence_ordered, which takes
-- the transaction-level advisory lock of the events' order before it
-- fences: a second writer's batch waits there until the first has
-- committed (PostgreSQL releases the lock after the commit is visible).
-- The events' insert, a later statement of the same transaction and so
-- with a later snapshot, numbers its rows from the highest seq in the
-- table: seq order is commit order, and a reader at seq > n can never pass
-- a row that commits later. The lock writes no WAL and is held from the
-- fence to the commit, the batch's own statements only.
--
-- A batch sent again after a lost connection must not insert its events
-- twice. The writer numbers its events itself, in the order it queues
-- them (their "local" numbers); the replica's row keeps, for its current
-- epoch, the last local number committed and the seq it got. Only the
-- batch in flight can be in doubt, and its events are numbered
-- contiguously, so a resend skips the locals already there and learns
-- their seqs from that pair.
ALTER TABLE replicas
    ADD COLUMN event_epoch bigint NOT NULL DEFAULT 0,
    ADD COLUMN event_local bigint NOT NULL DEFAULT 0,
    ADD COLUMN event_seq bigint NOT NULL DEFAULT 0;

-- "csched" and "events" in ASCII, cut to fit two int4 keys.
CREATE FUNCTION csched_fence_ordered(replica_id text, replica_epoch bigint) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(1668506467, 1702258030);
    PERFORM csched_fence(replica_id, replica_epoch);
END
$$;
