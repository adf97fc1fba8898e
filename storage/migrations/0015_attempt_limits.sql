-- 0015_attempt_limits: what a job's resource limits (docs/limits.md) did to
-- each attempt: the limit that ended it (LimitHit, 0 for none), the most
-- memory its memory cgroup held, and the limits this host did not enforce
-- for it (their names, comma-separated). Defaults that cost no rewrite.
ALTER TABLE attempts ADD COLUMN limit_hit smallint NOT NULL DEFAULT 0,
    ADD COLUMN peak_memory_bytes bigint NOT NULL DEFAULT 0,
    ADD COLUMN unenforced_limits text NOT NULL DEFAULT '';
