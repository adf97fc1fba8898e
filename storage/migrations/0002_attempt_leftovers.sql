-- 0002_attempt_leftovers: how many processes an attempt's command left
-- running when it ended (in its group, or out of it after setsid or a double
-- fork), which its minder then stopped. 0 for attempts recorded before.
ALTER TABLE attempts ADD COLUMN leftover_processes integer NOT NULL DEFAULT 0;
