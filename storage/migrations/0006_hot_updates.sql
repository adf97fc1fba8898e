-- 0006_hot_updates: a run's row is updated about three times after its
-- insert (STARTING, RUNNING, its end). With state in an index none of those
-- could be a HOT update (the new row version in the same page, no new index
-- entries), so each also wrote an entry into every index of runs. The index
-- that finds the active runs at start is now on a column that changes only
-- once, at a run's end: ended_unix_ms is 0 until then, so the active runs
-- are among the rows it holds, and only a run's last update is not HOT.
-- Pages are left a fifth empty so that a row's next versions fit beside it.
DROP INDEX runs_active_state;
CREATE INDEX runs_unended ON runs (id) WHERE ended_unix_ms = 0;
ALTER TABLE runs SET (fillfactor = 80);
ALTER TABLE attempts SET (fillfactor = 80);
