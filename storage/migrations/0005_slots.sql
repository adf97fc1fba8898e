-- 0005_slots: every slot of every job's schedule, and what became of it.
--
-- A slot is one (job, scheduled time); the key makes it fire at most once:
-- the row is written in the same transaction as the run it makes, and a
-- server that restarts goes on after the last slot recorded per job. outcome
-- is the API's SlotOutcome (1 started, 2 skipped), skip_reason its
-- SkipReason. Like runs, slots outlive their job and are kept as long as
-- runs are.
CREATE TABLE slots (
    job_name text NOT NULL,
    slot_unix_ms bigint NOT NULL,
    outcome smallint NOT NULL CHECK (outcome IN (1, 2)),
    skip_reason smallint NOT NULL DEFAULT 0,
    run_id bigint NOT NULL DEFAULT 0,
    due_unix_ms bigint NOT NULL,
    decided_unix_ms bigint NOT NULL,
    message text NOT NULL DEFAULT '',
    backfill boolean NOT NULL DEFAULT false,
    PRIMARY KEY (job_name, slot_unix_ms)
);
