-- 0010_replicas: several cschedd replicas on one database.
--
-- Each replica has a row, kept under its --replica-id. Its epoch, a fencing
-- token from replica_epochs, changes at every start and at every takeover:
-- every batch a replica commits first calls csched_fence(id, epoch), which
-- share-locks the row and fails unless the epoch is still the replica's
-- own, so a replica that was paused or cut off past its lease can never
-- commit after another took over (the takeover's update of the row waits for
-- the batches in flight, and every later one fails).
--
-- Times are the database's own clock (timestamptz, now()): every replica
-- compares leases against it, so no two machines' clocks are compared.
-- lease_until: after it, others may take over the replica's work.
-- attempts_until: the deadline its minders last heard of; after it (and a
-- margin, docs/operations.md) its running attempts may be taken for lost.
CREATE SEQUENCE replica_epochs;

CREATE TABLE replica_states (
    state smallint PRIMARY KEY,
    name text NOT NULL UNIQUE
);

INSERT INTO replica_states (state, name) VALUES
    (1, 'standby'),
    (2, 'active'),
    (3, 'draining'),
    (4, 'left'),
    (5, 'fenced');

CREATE TABLE replicas (
    id text PRIMARY KEY,
    epoch bigint NOT NULL,
    -- The state directory's own random id: a restart of the replica finds
    -- its own; a second replica given the same id finds another's.
    instance text NOT NULL,
    state smallint NOT NULL REFERENCES replica_states (state),
    address text NOT NULL DEFAULT '',
    version text NOT NULL DEFAULT '',
    joined_at timestamptz NOT NULL,
    renewed_at timestamptz NOT NULL,
    lease_until timestamptz NOT NULL,
    attempts_until timestamptz NOT NULL,
    runs_held integer NOT NULL DEFAULT 0
);

-- At most one replica runs the cluster's work at a time.
CREATE UNIQUE INDEX replicas_one_active ON replicas ((true)) WHERE state IN (2, 3);

-- Which replica's machine runs an attempt: '' for attempts recorded before
-- replicas existed (the one server's own).
ALTER TABLE attempts ADD COLUMN replica text NOT NULL DEFAULT '';

CREATE FUNCTION csched_fence(replica_id text, replica_epoch bigint) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM 1 FROM replicas WHERE id = replica_id AND epoch = replica_epoch FOR SHARE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'replica % is fenced: epoch % was taken over', replica_id, replica_epoch
            USING ERRCODE = 'CSFEN';
    END IF;
END
$$;
