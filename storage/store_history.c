/* History retention (migrations 0013, 0021): one bounded batch of what
 * ended before a cutoff, deleted in one statement and so one short
 * transaction. What always stays: every run not ended, or with a hook
 * delivery still pending (its command's directory, its retries), the
 * latest run of each outcome of each job (what `csched job list` and a
 * person ask first), the latest slot of each job (where its schedule goes
 * on after a restart), and the latest event (the stream's seq goes on from
 * it). Events go as a prefix of the stream, oldest seq first and never
 * past one younger than the cutoff, so what is kept stays gap-free after
 * its first seq. A run's attempts go with it (ON DELETE CASCADE), its hook
 * deliveries too, deleted here so that their ids come back (the server
 * removes their directories). A dependency cause goes by age, or with the
 * run it made, or (one that made none) with an upstream run it records,
 * but never while it waits, nor before the window of
 * --after-window-seconds has passed since it was decided (the server's
 * $window cutoff): within it, a late upstream end for the cause must find
 * it decided, or the downstream would run twice. The causes whose runs
 * went while they were within the window are found by a walk of those
 * that left it, in the order they were decided. Each DELETE takes its rows
 * by key or by ctid from an array, so that it never scans its table. The
 * statements only; store_read.c sends them. */
#include "store_internal.h"

#define STR_(x) #x
#define STR(x) STR_(x)
#define ROWS STR(CS_STORE_HISTORY_PURGE_ROWS)

/* A run r whose hook delivery is still pending stays: its delivery goes
 * with it (the run's outcome it tells, its command's directory). */
#define NO_DELIVERY_PENDING                                                                        \
    " AND NOT EXISTS (SELECT 1 FROM hook_deliveries h WHERE h.run_id = r.id AND h.status = 1)"

/* What goes with the runs deleted by the CTE dr: their hook deliveries
 * (dh, whose ids come back), and the causes that name them (to which a
 * statement may add a UNION of its own before closing cause_victims). */
#define WITH_THE_RUNS                                                                              \
    " dh AS (DELETE FROM hook_deliveries WHERE run_id = ANY (ARRAY(SELECT id FROM dr))"            \
    "  RETURNING id),"                                                                             \
    " cause_victims AS (SELECT job_name, cause FROM dependency_causes"                             \
    "  WHERE run_id > 0 AND run_id = ANY (ARRAY(SELECT id FROM dr))"                               \
    "  UNION SELECT u.job_name, u.cause FROM dependency_upstreams u"                               \
    "  JOIN dependency_causes c USING (job_name, cause)"                                           \
    "  WHERE u.run_id = ANY (ARRAY(SELECT id FROM dr)) AND c.run_id = 0"

/* Closes cause_victims and deletes those of them decided before the
 * window's cutoff, the parameter after it (dc). */
#define CAUSES_DECIDED_BEFORE                                                                      \
    "),"                                                                                           \
    " dc AS (DELETE FROM dependency_causes c USING cause_victims v"                                \
    "  WHERE c.job_name = v.job_name AND c.cause = v.cause"                                        \
    "  AND c.decided_unix_ms > 0 AND c.decided_unix_ms < "

#define DELIVERY_IDS " (SELECT coalesce(string_agg(id::text, ','), '') FROM dh)"

/* $1: the age's cutoff; $2: the causes' window cutoff. */
const char cs_store_sql_history_purge[] =
    "WITH run_victims AS (SELECT r.id FROM runs r"
    "  WHERE r.ended_unix_ms > 0 AND r.ended_unix_ms < $1::bigint"
    "  AND r.id < (SELECT max(l.id) FROM runs l WHERE l.job_name = r.job_name"
    "              AND l.ended_state = r.ended_state AND l.ended_unix_ms > 0)" NO_DELIVERY_PENDING
    "  ORDER BY r.ended_unix_ms LIMIT " ROWS "),"
    " dr AS (DELETE FROM runs WHERE id = ANY (ARRAY(SELECT id FROM run_victims))"
    "  RETURNING id)," WITH_THE_RUNS
    "  UNION (SELECT job_name, cause FROM dependency_causes WHERE decided_unix_ms > 0"
    "   AND decided_unix_ms < least($1::bigint, $2::bigint)"
    "   ORDER BY decided_unix_ms LIMIT " ROWS ")" CAUSES_DECIDED_BEFORE "$2::bigint RETURNING 1),"
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
    " (SELECT coalesce(max(seq), 0) FROM de), (SELECT count(*) FROM dc)," DELIVERY_IDS;

/* One job's own limits (csched.v1.History): the newest $2 SUCCEEDED runs
 * kept ($2 = 0: no limit), the newest $3 of the other outcomes together,
 * none that ended before $4 (0: no such age); the latest run of each
 * outcome stays whatever they say. Returns a row per run deleted: its id
 * (the server forgets its copies of them), and the count of the causes and
 * the ids of the deliveries that went with the runs; $5 is the causes'
 * window cutoff. */
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
    " dr AS (DELETE FROM runs WHERE id = ANY (ARRAY(SELECT r.id FROM victims r"
    "  WHERE r.id NOT IN (SELECT unnest(ids) FROM latest)" NO_DELIVERY_PENDING " LIMIT " ROWS
    ")) RETURNING id)," WITH_THE_RUNS CAUSES_DECIDED_BEFORE "$5::bigint RETURNING 1)"
    " SELECT id, (SELECT count(*) FROM dc)," DELIVERY_IDS " FROM dr";

/* The walk of the causes that left the window ($4) after the key ($1, $2,
 * $3) of the last one the walk saw, in the order of migration 0021's
 * index: of each batch, those whose runs are gone (the run it made, or an
 * upstream run of one that made none) are deleted. Returns how many went,
 * how many were walked and the last key walked; no row once nothing is
 * left to walk. */
const char cs_store_sql_history_purge_causes[] =
    "WITH walked AS (SELECT job_name, cause, run_id, decided_unix_ms FROM dependency_causes"
    "  WHERE (decided_unix_ms, job_name, cause) > ($1::bigint, $2::text, $3::text)"
    "  AND decided_unix_ms > 0 AND decided_unix_ms < $4::bigint"
    "  ORDER BY decided_unix_ms, job_name, cause LIMIT " ROWS "),"
    " victims AS (SELECT w.job_name, w.cause FROM walked w"
    "  WHERE (w.run_id > 0 AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.id = w.run_id))"
    "  OR (w.run_id = 0 AND EXISTS (SELECT 1 FROM dependency_upstreams u"
    "      WHERE u.job_name = w.job_name AND u.cause = w.cause"
    "      AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.id = u.run_id)))),"
    " d AS (DELETE FROM dependency_causes c USING victims v"
    "  WHERE c.job_name = v.job_name AND c.cause = v.cause RETURNING 1)"
    " SELECT (SELECT count(*) FROM d), (SELECT count(*) FROM walked),"
    " l.decided_unix_ms, l.job_name, l.cause FROM (SELECT * FROM walked"
    "  ORDER BY decided_unix_ms DESC, job_name DESC, cause DESC LIMIT 1) l";
