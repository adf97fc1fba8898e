-- 0009_attempt_output: what an attempt's command wrote to stdout and to
-- stderr, and what the attempt's log of each kept (at most the cap, 16 MiB;
-- less means the log was cut). 0 for attempts recorded before: unknown.
ALTER TABLE attempts ADD COLUMN stdout_written_bytes bigint NOT NULL DEFAULT 0;
ALTER TABLE attempts ADD COLUMN stdout_kept_bytes bigint NOT NULL DEFAULT 0;
ALTER TABLE attempts ADD COLUMN stderr_written_bytes bigint NOT NULL DEFAULT 0;
ALTER TABLE attempts ADD COLUMN stderr_kept_bytes bigint NOT NULL DEFAULT 0;
