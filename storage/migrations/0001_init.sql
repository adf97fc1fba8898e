-- 0001_init: jobs, runs, attempts and events.
--
-- Times are milliseconds since the Unix epoch (UTC), 0 meaning "not yet", as
-- in the API. Run and attempt states are the API's RunState numbers; the
-- run_states table names them, so an operator can join it (or read the
-- runs_readable and events_readable views).

CREATE TABLE run_states (
    state smallint PRIMARY KEY,
    name text NOT NULL UNIQUE
);

INSERT INTO run_states (state, name) VALUES
    (0, 'unspecified'),
    (1, 'queued'),
    (2, 'starting'),
    (3, 'running'),
    (4, 'succeeded'),
    (5, 'failed'),
    (6, 'timed_out'),
    (7, 'cancelled'),
    (8, 'lost');

-- spec is the whole csched.v1.Job, packed; the columns beside it repeat what
-- the server and operators look up.
CREATE TABLE jobs (
    name text PRIMARY KEY,
    spec bytea NOT NULL,
    version bigint NOT NULL,
    created_unix_ms bigint NOT NULL,
    updated_unix_ms bigint NOT NULL
);

-- Runs outlive their job: a deleted job's finished runs stay readable, so
-- job_name is not a foreign key. env is a csched.v1.Run holding only its env
-- map, packed. Ids are handed out by the server.
CREATE TABLE runs (
    id bigint PRIMARY KEY,
    job_name text NOT NULL,
    state smallint NOT NULL CHECK (state BETWEEN 0 AND 8),
    env bytea,
    idempotency_key text NOT NULL DEFAULT '',
    created_unix_ms bigint NOT NULL,
    started_unix_ms bigint NOT NULL DEFAULT 0,
    ended_unix_ms bigint NOT NULL DEFAULT 0,
    exit_code integer,
    term_signal integer,
    message text NOT NULL DEFAULT '',
    cancel_requested boolean NOT NULL DEFAULT false
);

CREATE UNIQUE INDEX runs_job_name_idempotency_key ON runs (job_name, idempotency_key)
    WHERE idempotency_key <> '';
CREATE INDEX runs_job_name_id ON runs (job_name, id);
-- Only runs not yet ended: queued (1), starting (2), running (3).
CREATE INDEX runs_active_state ON runs (state) WHERE state IN (1, 2, 3);

CREATE TABLE attempts (
    run_id bigint NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    number integer NOT NULL,
    state smallint NOT NULL CHECK (state BETWEEN 0 AND 8),
    exit_code integer,
    term_signal integer,
    started_unix_ms bigint NOT NULL DEFAULT 0,
    ended_unix_ms bigint NOT NULL DEFAULT 0,
    minder_pid integer NOT NULL DEFAULT 0,
    user_cpu_ms bigint NOT NULL DEFAULT 0,
    system_cpu_ms bigint NOT NULL DEFAULT 0,
    max_rss_kb bigint NOT NULL DEFAULT 0,
    message text NOT NULL DEFAULT '',
    attempt_dir text NOT NULL DEFAULT '',
    PRIMARY KEY (run_id, number)
);

-- attempt is 0 for a change of the run itself. seq is handed out by the
-- server, strictly increasing.
CREATE TABLE events (
    seq bigint PRIMARY KEY,
    at_unix_ms bigint NOT NULL,
    run_id bigint NOT NULL,
    job_name text NOT NULL,
    attempt integer NOT NULL DEFAULT 0,
    state smallint NOT NULL CHECK (state BETWEEN 0 AND 8),
    exit_code integer,
    term_signal integer,
    message text NOT NULL DEFAULT ''
);

CREATE INDEX events_job_name_seq ON events (job_name, seq);

CREATE VIEW runs_readable AS
    SELECT r.id, r.job_name, s.name AS state, r.idempotency_key,
           to_timestamp(nullif(r.created_unix_ms, 0) / 1000.0) AS created,
           to_timestamp(nullif(r.started_unix_ms, 0) / 1000.0) AS started,
           to_timestamp(nullif(r.ended_unix_ms, 0) / 1000.0) AS ended,
           r.exit_code, r.term_signal, r.message, r.cancel_requested
      FROM runs r JOIN run_states s ON s.state = r.state;

CREATE VIEW events_readable AS
    SELECT e.seq, to_timestamp(e.at_unix_ms / 1000.0) AS at, e.run_id, e.job_name,
           e.attempt, s.name AS state, e.exit_code, e.term_signal, e.message
      FROM events e JOIN run_states s ON s.state = e.state;
