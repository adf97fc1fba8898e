-- 0012_attempt_tail: the last bytes of what an attempt's command wrote to
-- stdout and to stderr, kept in the database when the attempt ended, so that
-- ReadLogs still has something to give once the replica whose machine holds
-- the attempt's log files is gone (docs/operations.md, "Replicas").
--
-- At most the last 64 KiB of each stream (of what its log kept), written only
-- by a replica on a shared database, shortly after the attempt's end (never
-- in its transaction). NULL: nothing kept, because the attempt ran on the
-- embedded database, ended with no output, had not ended when its replica was
-- lost, or was recorded before this migration. Expand only: nullable columns
-- without a default change no row, and older replicas never name them.
ALTER TABLE attempts ADD COLUMN stdout_tail bytea;
ALTER TABLE attempts ADD COLUMN stderr_tail bytea;
