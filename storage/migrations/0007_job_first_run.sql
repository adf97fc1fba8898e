-- 0007_job_first_run: an idempotency key belongs to the job it was used
-- with. A job deleted and created again under the same name is a new job,
-- so a key one of the old job's runs carries must not return that run.
-- first_run_id is the lowest run id that can be the job's own (the server's
-- next run id when the job was created; ids only grow): the key lookup
-- looks only at runs from there on. The same name and key may now be on
-- two runs, one of each job, so the index on them is no longer unique.
ALTER TABLE jobs ADD COLUMN first_run_id bigint NOT NULL DEFAULT 0;
-- Jobs made before: their first run created at or after the job was, or,
-- with none yet, the next id.
UPDATE jobs j SET first_run_id = coalesce(
    (SELECT min(r.id) FROM runs r
      WHERE r.job_name = j.name AND r.created_unix_ms >= j.created_unix_ms),
    (SELECT coalesce(max(id), 0) + 1 FROM runs));
DROP INDEX runs_job_name_idempotency_key;
CREATE INDEX runs_job_name_idempotency_key ON runs (job_name, idempotency_key)
    WHERE idempotency_key <> '';
