-- 0019_array_runs: the array a run belongs to (TriggerJobRequest.array_size,
-- docs/running.md "Arrays"): the id of its first run, 0 for a run of no
-- array. A column of its own so that ListRuns finds an array's runs through
-- the partial index, which runs of no array stay out of; the run's index and
-- the array's cap travel in the env column's message with the slot. The
-- column never changes after the insert, so a run's updates stay HOT (0006).
ALTER TABLE runs ADD COLUMN array_id bigint NOT NULL DEFAULT 0;
CREATE INDEX runs_array_id ON runs (array_id, id) WHERE array_id <> 0;
