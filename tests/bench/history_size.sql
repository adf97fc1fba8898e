-- history_size.sql: the disk a run's history takes in the database (docs/operations.md,
-- "History in the database"): 100,000 runs of one attempt each, as a busy
-- scheduled job's, with a slot and five events each, inserted into an empty
-- database that cschedd migrated, then the bytes per run of each table with
-- its indexes. Run with: psql -v n=100000 -f tests/bench/history_size.sql URL

INSERT INTO runs (id, job_name, state, created_unix_ms, started_unix_ms, ended_unix_ms, exit_code, message, triggered_by)
SELECT i, 'nightly-report-' || (i % 50), 4, 1765000000000 + i*1000, 1765000000000 + i*1000 + 5, 1765000000000 + i*1000 + 900, 0, '', 'schedule'
FROM generate_series(1, :n) i;
INSERT INTO attempts (run_id, number, state, exit_code, started_unix_ms, ended_unix_ms, minder_pid, user_cpu_ms, system_cpu_ms, max_rss_kb, message, attempt_dir, replica)
SELECT i, 1, 4, 0, 1765000000000 + i*1000 + 5, 1765000000000 + i*1000 + 900, 100000 + i, 12, 3, 5120, '', '/var/lib/csched/attempts/' || i || '-1', 'csched-0'
FROM generate_series(1, :n) i;
INSERT INTO slots (job_name, slot_unix_ms, outcome, run_id, due_unix_ms, decided_unix_ms)
SELECT 'nightly-report-' || (i % 50), 1765000000000 + i*1000, 1, i, 1765000000000 + i*1000, 1765000000000 + i*1000 - 2000
FROM generate_series(1, :n) i;
INSERT INTO events (seq, at_unix_ms, run_id, job_name, attempt, state, exit_code, message)
SELECT (i-1)*5 + k, 1765000000000 + i*1000 + k, i, 'nightly-report-' || (i % 50), CASE WHEN k IN (1,5) THEN 0 ELSE 1 END, k, CASE WHEN k >= 4 THEN 0 END, ''
FROM generate_series(1, :n) i, generate_series(1, 5) k;
VACUUM ANALYZE;
SELECT relname, pg_total_relation_size(c.oid) / :n AS bytes_per_run
FROM pg_class c WHERE relname IN ('runs','attempts','slots','events') ORDER BY 1;
SELECT sum(pg_total_relation_size(c.oid)) / :n AS total_per_run FROM pg_class c WHERE relname IN ('runs','attempts','slots','events');
