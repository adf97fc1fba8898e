/* The tails of attempts' output (migration 0012): the last bytes of each
 * stream, recorded after the attempt's end by the replica whose machine ran
 * it, and read back, with the replica's name, by a ReadLogs that finds no
 * log files on its own machine. Loop thread. */
#include <stdlib.h>
#include <string.h>

#include "store_internal.h"

/* Many rows per statement, one array per column (store_bulk.c), of distinct
 * (run_id, number): an UPDATE ... FROM with two rows for one attempt would
 * apply either. A NULL tail leaves the stream's column as it was. */
const char cs_store_sql_attempt_tail_put[] =
    "UPDATE attempts a SET stdout_tail = coalesce(t.o, a.stdout_tail),"
    " stderr_tail = coalesce(t.e, a.stderr_tail)"
    " FROM unnest($1::bigint[], $2::bigint[], $3::bytea[], $4::bytea[]) AS t(run_id, number, o, e)"
    " WHERE a.run_id = t.run_id AND a.number = t.number";

const enum cs_store_col_type cs_store_tail_cols[CS_STORE_TAIL_COLS] = {
    CS_STORE_COL_INT,
    CS_STORE_COL_INT,
    CS_STORE_COL_BYTEA,
    CS_STORE_COL_BYTEA,
};

/* An outcome is set only from a note that was read: the byte counts are
 * then the minder's own. */
const char cs_store_sql_attempt_tail_get[] =
    "SELECT replica, stdout_tail, stderr_tail, stdout_written_bytes, stdout_kept_bytes,"
    " stderr_written_bytes, stderr_kept_bytes, exit_code IS NOT NULL OR term_signal IS NOT NULL"
    " FROM attempts WHERE run_id = $1 AND number = $2";

struct cs_store_attempt_tail *cs_store_attempt_tail_from_row(const PGresult *res, int row)
{
    struct cs_store_attempt_tail *t = cs_store_xcalloc(1, sizeof(*t));

    t->replica = cs_store_row_strdup(res, row, 0);
    for (int i = 0; i < 2; i++) {
        size_t len;
        const uint8_t *bytes = cs_store_row_bytes(res, row, 1 + i, &len);

        t->stored[i] = bytes != NULL;
        t->len[i] = len;
        if (len > 0) {
            t->bytes[i] = cs_store_xmalloc(len);
            memcpy(t->bytes[i], bytes, len);
        }
        t->written_bytes[i] = cs_store_row_int(res, row, 3 + 2 * i);
        t->kept_bytes[i] = cs_store_row_int(res, row, 4 + 2 * i);
    }
    t->sizes_known = cs_store_row_bool(res, row, 7);
    return t;
}

void cs_store_attempt_tail_free(struct cs_store_attempt_tail *tail)
{
    if (tail == NULL)
        return;
    free(tail->replica);
    free(tail->bytes[0]);
    free(tail->bytes[1]);
    free(tail);
}
