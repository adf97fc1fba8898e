-- 0013_history: what history retention (storage/store_history.c) deletes
-- by, so that each of its bounded batches finds its rows through an index:
-- runs by when they ended, the latest run of each outcome of each job
-- (always kept), slots by their time.
--
-- The outcome is ended_state, computed by PostgreSQL, and not state: an
-- index on state would make every update of a running run's row a non-HOT
-- one (0006_hot_updates.sql), while ended_state stays 0 until the run
-- ends, so those updates stay HOT. Adding it rewrites runs once (about a
-- second per million rows); a replica of the version before goes on
-- writing its rows unaware of it.
ALTER TABLE runs ADD COLUMN ended_state smallint
    GENERATED ALWAYS AS (CASE WHEN ended_unix_ms > 0 THEN state ELSE 0 END) STORED;
CREATE INDEX runs_ended ON runs (ended_unix_ms) WHERE ended_unix_ms > 0;
CREATE INDEX runs_job_name_ended_state_id ON runs (job_name, ended_state, id)
    WHERE ended_unix_ms > 0;
CREATE INDEX slots_slot_unix_ms ON slots (slot_unix_ms);
