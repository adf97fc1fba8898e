-- 0014_cluster_limits: the limits that hold across every replica together.
--
-- max_running caps the runs of all replicas at once (0: none but each
-- replica's own --max-running). It is a row rather than a flag so that a
-- change reaches every replica, the ones that take over later included,
-- and outlives restarts (docs/operations.md, "Replicas"). updated_unix_ms
-- stays 0 until someone sets it: --cluster-max-running only seeds a value
-- never set, so that a restart never undoes a change made at run time.
CREATE TABLE cluster_limits (
    one boolean PRIMARY KEY DEFAULT true CHECK (one),
    max_running integer NOT NULL DEFAULT 0 CHECK (max_running >= 0),
    updated_unix_ms bigint NOT NULL DEFAULT 0,
    updated_by text NOT NULL DEFAULT ''
);

INSERT INTO cluster_limits DEFAULT VALUES;
