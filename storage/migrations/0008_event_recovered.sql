-- 0008_event_recovered: an event a start of cschedd recovered from what an
-- attempt left in the state dir (its directory, its status note), for a
-- change that happened while cschedd was down or before the database
-- committed it (csched.v1.Event.recovered). false for events recorded before.
ALTER TABLE events ADD COLUMN recovered boolean NOT NULL DEFAULT false;

CREATE OR REPLACE VIEW events_readable AS
    SELECT e.seq, to_timestamp(e.at_unix_ms / 1000.0) AS at, e.run_id, e.job_name,
           e.attempt, s.name AS state, e.exit_code, e.term_signal, e.message, e.recovered
      FROM events e JOIN run_states s ON s.state = e.state;
