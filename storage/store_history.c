/* History retention (migration 0013): one bounded batch of what ended
 * before a cutoff, deleted in one statement and so one short transaction.
 * What always stays: every run not ended, the latest run of each outcome
 * of each job (what `csched job list` and a person ask first), the latest
 * slot of each job (where its schedule goes on after a restart), and the
 * latest event (the stream's seq goes on from it). Events go as a prefix
 * of the stream, oldest seq first and never past one younger than the
 * cutoff, so what is kept stays gap-free after its first seq. A run's
 * attempts go with it (ON DELETE CASCADE). Each DELETE takes its rows by
 * key or by ctid from an array, so that it never scans its table. The statement only; store_read.c
 * sends it. */
#include "store_internal.h"

#define STR_(x) #x
#define STR(x) STR_(x)
#define ROWS STR(CS_STORE_HISTORY_PURGE_ROWS)

const char cs_store_sql_history_purge[] =
    "WITH run_victims AS (SELECT r.id FROM runs r"
    "  WHERE r.ended_unix_ms > 0 AND r.ended_unix_ms < $1::bigint"
    "  AND r.id < (SELECT max(l.id) FROM runs l WHERE l.job_name = r.job_name"
    "              AND l.ended_state = r.ended_state AND l.ended_unix_ms > 0)"
    "  ORDER BY r.ended_unix_ms LIMIT " ROWS "),"
    " dr AS (DELETE FROM runs WHERE id = ANY (ARRAY(SELECT id FROM run_victims)) RETURNING id),"
    " slot_victims AS (SELECT s.ctid FROM slots s"
    "  WHERE s.slot_unix_ms < $1::bigint AND s.decided_unix_ms < $1::bigint"
    "  AND s.slot_unix_ms < (SELECT max(l.slot_unix_ms) FROM slots l"
    "                        WHERE l.job_name = s.job_name)"
    "  ORDER BY s.slot_unix_ms LIMIT " ROWS "),"
    " ds AS (DELETE FROM slots WHERE ctid = ANY (ARRAY(SELECT ctid FROM slot_victims))"
    "  RETURNING 1),"
    " head AS (SELECT seq, at_unix_ms FROM events ORDER BY seq LIMIT " ROWS "),"
    " keep_from AS (SELECT coalesce((SELECT min(seq) FROM head WHERE at_unix_ms >= $1::bigint),"
    "                               (SELECT max(seq) FROM events)) AS seq),"
    " de AS (DELETE FROM events WHERE seq IN (SELECT seq FROM head"
    "  WHERE seq < (SELECT seq FROM keep_from)) RETURNING seq)"
    " SELECT (SELECT count(*) FROM dr), (SELECT count(*) FROM ds), (SELECT count(*) FROM de),"
    " (SELECT coalesce(max(seq), 0) FROM de)";

/* One job's own limits (csched.v1.History): the newest $2 SUCCEEDED runs
 * kept ($2 = 0: no limit), the newest $3 of the other outcomes together,
 * none that ended before $4 (0: no such age); the latest run of each
 * outcome stays whatever they say. Returns the ids deleted, so that the
 * server forgets its copies of them. */
const char cs_store_sql_history_purge_job[] =
    "WITH latest AS (SELECT coalesce(array_agg(m) FILTER (WHERE m IS NOT NULL), '{}') AS ids"
    "  FROM (SELECT (SELECT max(id) FROM runs WHERE job_name = $1 AND ended_unix_ms > 0"
    "                AND ended_state = s) AS m"
    "        FROM unnest(ARRAY[4, 5, 6, 7, 8]::smallint[]) AS s) x),"
    " victims AS ("
    "  (SELECT id FROM runs WHERE job_name = $1 AND ended_unix_ms > 0 AND ended_state = 4"
    "   AND $2::bigint > 0 ORDER BY id DESC OFFSET $2::bigint LIMIT " ROWS ")"
    "  UNION"
    "  (SELECT id FROM runs WHERE job_name = $1 AND ended_unix_ms > 0 AND ended_state <> 4"
    "   AND $3::bigint > 0 ORDER BY id DESC OFFSET $3::bigint LIMIT " ROWS ")"
    "  UNION"
    "  (SELECT id FROM runs WHERE job_name = $1 AND ended_unix_ms > 0"
    "   AND ended_unix_ms < $4::bigint LIMIT " ROWS ")),"
    " d AS (DELETE FROM runs WHERE id = ANY (ARRAY(SELECT id FROM victims"
    "  WHERE id NOT IN (SELECT unnest(ids) FROM latest) LIMIT " ROWS ")) RETURNING id)"
    " SELECT id FROM d";
