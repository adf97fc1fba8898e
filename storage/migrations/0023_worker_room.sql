-- 0023_worker_room: every replica runs attempts the active one places on
-- its machine (docs/design/0036), so every replica's row says how many it
-- may run at once (its --max-running), and every renewal, a standby's too,
-- moves the deadline its running commands stop at.
--
-- A new overload beside 0010's csched_renew: a replica of the previous
-- version still calls the old one during a rolling upgrade.
ALTER TABLE replicas ADD COLUMN max_running integer NOT NULL DEFAULT 0;

CREATE FUNCTION csched_renew(replica_id text, replica_epoch bigint, lease_ms bigint,
                             attempts_ms bigint, held integer, replica_address text,
                             replica_max_running integer)
RETURNS TABLE (ok boolean, state smallint, active_id text, active_epoch bigint,
               active_renewed_us bigint, active_expired boolean, now_us bigint)
LANGUAGE plpgsql AS $$
DECLARE
    my_state smallint;
BEGIN
    UPDATE replicas r SET renewed_at = now(),
        lease_until = now() + lease_ms * interval '1 millisecond',
        attempts_until = now() + attempts_ms * interval '1 millisecond',
        runs_held = held, address = replica_address, max_running = replica_max_running
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
