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
-- replicas existed (the one server's own). A replica's connections set
-- csched.replica, so the row's insert names it without a column of its own
-- in every write.
ALTER TABLE attempts ADD COLUMN replica text NOT NULL DEFAULT '';
ALTER TABLE attempts ALTER COLUMN replica SET DEFAULT coalesce(current_setting('csched.replica', true), '');

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

-- Whether a cschedd from before replicas still runs on the database: it
-- holds the session-level advisory lock those versions took ("cschedd" in
-- ASCII, 0x63736368656464, which pg_locks shows as its two halves). No
-- replica takes the active role while it does: upgrading from such a
-- version, the new replicas join as standbys, and the first one takes over
-- once the old server has stopped.
CREATE FUNCTION csched_legacy_server() RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT EXISTS (SELECT 1 FROM pg_locks
                   WHERE locktype = 'advisory' AND classid = 6517603 AND objid = 1751475300
                     AND objsubid = 1 AND granted
                     AND database = (SELECT oid FROM pg_database
                                     WHERE datname = current_database()))
$$;

-- A replica joins (at start): a new epoch, and its role. A row of the same
-- id held by another instance whose lease is still running is refused
-- ('busy'): two replicas were given one id. A restart of the active
-- replica's own instance stays active (its minders are on this machine);
-- otherwise the replica becomes active only when no replica is, and a
-- standby otherwise. prior: 'new' (no row), 'restart' (this instance's
-- row), 'replaced' (another instance's row, its lease run out). sole: the
-- database is the replica's own (embedded), so no other can be alive: any
-- other active row is stale and is fenced at once.
CREATE FUNCTION csched_join(replica_id text, replica_instance text, replica_version text,
                            lease_ms bigint, attempts_ms bigint, sole boolean)
RETURNS TABLE (epoch bigint, state smallint, prior text)
LANGUAGE plpgsql AS $$
DECLARE
    old replicas%ROWTYPE;
    new_epoch bigint;
    new_state smallint := 1;
    how text := 'new';
BEGIN
    SELECT * INTO old FROM replicas r WHERE r.id = replica_id FOR UPDATE;
    IF FOUND THEN
        how := CASE WHEN old.instance = replica_instance THEN 'restart' ELSE 'replaced' END;
        IF how = 'replaced' AND old.state IN (1, 2, 3) AND old.lease_until > now() THEN
            RETURN QUERY SELECT old.epoch, old.state, 'busy'::text;
            RETURN;
        END IF;
        IF how = 'restart' AND old.state IN (2, 3) THEN
            new_state := 2;
        END IF;
        -- Another instance's row gives up the active role first: its
        -- attempts are its own, taken over like a dead replica's.
        UPDATE replicas r SET state = 5 WHERE r.id = replica_id AND new_state = 1 AND r.state IN (2, 3);
    END IF;
    UPDATE replicas r SET state = 5, epoch = nextval('replica_epochs')
    WHERE sole AND r.id <> replica_id AND r.state IN (2, 3);
    new_epoch := nextval('replica_epochs');
    INSERT INTO replicas AS r (id, epoch, instance, state, version, joined_at, renewed_at,
                               lease_until, attempts_until)
    VALUES (replica_id, new_epoch, replica_instance, new_state, replica_version, now(), now(),
            now() + lease_ms * interval '1 millisecond',
            now() + attempts_ms * interval '1 millisecond')
    ON CONFLICT (id) DO UPDATE SET epoch = EXCLUDED.epoch, instance = EXCLUDED.instance,
        state = EXCLUDED.state, version = EXCLUDED.version, joined_at = EXCLUDED.joined_at,
        renewed_at = EXCLUDED.renewed_at, lease_until = EXCLUDED.lease_until,
        attempts_until = CASE WHEN new_state = 2 THEN EXCLUDED.attempts_until
                              ELSE r.attempts_until END,
        runs_held = 0;
    -- With nobody active, the first to ask becomes active; the unique index
    -- lets one of two at once win.
    IF new_state = 1 AND NOT csched_legacy_server()
       AND NOT EXISTS (SELECT 1 FROM replicas r WHERE r.state IN (2, 3)) THEN
        BEGIN
            UPDATE replicas r SET state = 2 WHERE r.id = replica_id;
            new_state := 2;
        EXCEPTION WHEN unique_violation THEN
            new_state := 1;
        END;
    END IF;
    RETURN QUERY SELECT new_epoch, new_state, how;
END
$$;

-- A heartbeat: the replica's lease renewed, if its epoch is still its own
-- (ok false: it was fenced), and what it must know of the active replica
-- (none when no replica is active): its id, epoch, when it last renewed (in
-- microseconds of the database's clock) and whether its lease ran out.
CREATE FUNCTION csched_renew(replica_id text, replica_epoch bigint, lease_ms bigint,
                             attempts_ms bigint, held integer, replica_address text)
RETURNS TABLE (ok boolean, state smallint, active_id text, active_epoch bigint,
               active_renewed_us bigint, active_expired boolean, now_us bigint)
LANGUAGE plpgsql AS $$
DECLARE
    my_state smallint;
BEGIN
    UPDATE replicas r SET renewed_at = now(),
        lease_until = now() + lease_ms * interval '1 millisecond',
        attempts_until = CASE WHEN r.state IN (2, 3)
                              THEN now() + attempts_ms * interval '1 millisecond'
                              ELSE r.attempts_until END,
        runs_held = held, address = replica_address
    WHERE r.id = replica_id AND r.epoch = replica_epoch AND r.state IN (1, 2, 3)
    RETURNING r.state INTO my_state;
    RETURN QUERY
    SELECT my_state IS NOT NULL, coalesce(my_state, 0::smallint), a.id, a.epoch,
           (extract(epoch FROM a.renewed_at) * 1000000)::bigint, a.lease_until < now(),
           (extract(epoch FROM now()) * 1000000)::bigint
    FROM (SELECT 1) one
    LEFT JOIN replicas a ON a.state IN (2, 3);
END
$$;

-- A standby takes the active role: from nobody, or from a replica whose
-- lease ran out, which is fenced (a new epoch it does not know, so none of
-- its batches commits again) only if it is still in the epoch the standby
-- saw expire. True when the role is the caller's.
CREATE FUNCTION csched_take_over(replica_id text, replica_epoch bigint, victim_id text,
                                 victim_epoch bigint, attempts_ms bigint)
RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    IF csched_legacy_server() THEN
        RETURN false;
    END IF;
    IF victim_id IS NOT NULL THEN
        UPDATE replicas r SET state = 5, epoch = nextval('replica_epochs')
        WHERE r.id = victim_id AND r.epoch = victim_epoch AND r.state IN (2, 3)
          AND r.lease_until < now();
        IF NOT FOUND THEN
            RETURN false;
        END IF;
    END IF;
    UPDATE replicas r SET state = 2,
        attempts_until = now() + attempts_ms * interval '1 millisecond'
    WHERE r.id = replica_id AND r.epoch = replica_epoch AND r.state = 1;
    RETURN FOUND;
EXCEPTION WHEN unique_violation THEN
    RETURN false;
END
$$;

-- A replica leaves (drained, or stopped): its work may be taken over at
-- once. Its attempts' deadline stays: commands still running stop at it.
CREATE FUNCTION csched_leave(replica_id text, replica_epoch bigint) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE replicas r SET state = 4, lease_until = now()
    WHERE r.id = replica_id AND r.epoch = replica_epoch AND r.state IN (1, 2, 3);
    RETURN FOUND;
END
$$;
