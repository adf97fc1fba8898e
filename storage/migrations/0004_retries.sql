-- 0004_retries: a run's earliest start (TriggerJob's not_before_unix_ms, 0
-- for none), and for each attempt the wait that came before it and the
-- random part taken off that wait (0 for attempts recorded before).
ALTER TABLE runs ADD COLUMN not_before_unix_ms bigint NOT NULL DEFAULT 0;
ALTER TABLE attempts ADD COLUMN retry_delay_ms bigint NOT NULL DEFAULT 0;
ALTER TABLE attempts ADD COLUMN retry_jitter_ms bigint NOT NULL DEFAULT 0;
