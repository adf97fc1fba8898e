-- 0021_history_causes: what history retention (storage/store_history.c)
-- deletes dependency causes by, so that each of its bounded batches finds
-- them through an index: the run a cause made, the upstream runs it
-- records, and, to walk the causes that left the window of
-- --after-window-seconds in the order they were decided from where the
-- last batch stopped, (decided_unix_ms, job_name, cause), which also
-- serves a start's load of the causes decided within the window (and so
-- replaces dependency_causes_decided).
CREATE INDEX dependency_causes_run_id ON dependency_causes (run_id) WHERE run_id > 0;
CREATE INDEX dependency_upstreams_run_id ON dependency_upstreams (run_id);
CREATE INDEX dependency_causes_decided_key ON dependency_causes (decided_unix_ms, job_name, cause);
DROP INDEX dependency_causes_decided;
