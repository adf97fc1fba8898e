/* Statement parameters and readers of binary-format result fields: the two
 * ends of every row the store writes or reads. Loop thread; pure functions
 * of their arguments. */
#include <endian.h>
#include <stdlib.h>
#include <string.h>

#include "store_internal.h"

static void params_push(struct cs_store_params *p, char *value, int length, int format)
{
    CS_STORE_ASSERT(p->n < CS_STORE_PARAMS_MAX);
    p->values[p->n] = value;
    p->lengths[p->n] = length;
    p->formats[p->n] = format;
    p->n++;
}

void cs_store_params_text(struct cs_store_params *p, const char *s)
{
    params_push(p, s != NULL ? cs_store_xstrdup(s) : NULL, 0, 0);
}

/* Writes v in decimal at the end of buf (CS_STORE_INT_TEXT bytes); returns
 * where it starts. Cheaper than snprintf, which a run's rows would call a
 * hundred times. */
static char *int_text(char *buf, int64_t v)
{
    char *s = buf + CS_STORE_INT_TEXT - 1;
    /* Through the unsigned magnitude, so INT64_MIN is printed too. */
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;

    *s = '\0';
    do {
        *--s = (char)('0' + u % 10);
        u /= 10;
    } while (u != 0);
    if (v < 0)
        *--s = '-';
    return s;
}

void cs_store_params_int(struct cs_store_params *p, int64_t v)
{
    int i = p->n;

    params_push(p, NULL, 0, 0);
    p->ints[i] = v;
    p->values[i] = int_text(p->int_text[i], v);
    p->borrowed |= 1u << i;
    p->is_int |= 1u << i;
}

void cs_store_params_bool(struct cs_store_params *p, bool v)
{
    int i = p->n;

    params_push(p, (char *)(v ? "t" : "f"), 0, 0);
    p->borrowed |= 1u << i;
}

void cs_store_params_null(struct cs_store_params *p)
{
    params_push(p, NULL, 0, 0);
}

void cs_store_params_bytes(struct cs_store_params *p, void *buf, size_t len)
{
    CS_STORE_ASSERT(len <= INT32_MAX);
    /* libpq sends a NULL value as SQL NULL, so an empty value needs a buffer. */
    if (buf == NULL)
        buf = cs_store_xmalloc(1);
    params_push(p, buf, (int)len, 1);
}

void cs_store_params_clear(struct cs_store_params *p)
{
    for (int i = 0; i < p->n; i++) {
        if ((p->borrowed & (1u << i)) == 0)
            free(p->values[i]);
    }
    p->n = 0;
    p->borrowed = p->is_int = 0;
}

void cs_store_params_outcome(struct cs_store_params *p, const struct cs_store_outcome_cases *cases,
                             int outcome_case, int32_t exit_code, int32_t term_signal)
{
    if (outcome_case == cases->exit_code)
        cs_store_params_int(p, exit_code);
    else
        cs_store_params_null(p);
    if (outcome_case == cases->term_signal)
        cs_store_params_int(p, term_signal);
    else
        cs_store_params_null(p);
}

/* ndim, flags (has nulls), element type, then the one dimension's length and
 * lower bound: five int32 in network order. */
#define ARRAY_HEADER_BYTES 20

static void array_put(struct cs_store_array *a, const void *p, size_t len)
{
    if (a->len + len > a->cap) {
        size_t cap = a->cap > 0 ? a->cap : 256;

        while (cap < a->len + len)
            cap *= 2;
        a->buf = cs_store_xrealloc(a->buf, cap);
        a->cap = cap;
    }
    if (len > 0)
        memcpy(a->buf + a->len, p, len);
    a->len += len;
}

static void array_put_u32(struct cs_store_array *a, uint32_t v)
{
    uint32_t be = htobe32(v);

    array_put(a, &be, sizeof(be));
}

void cs_store_array_init(struct cs_store_array *a, uint32_t elem_oid)
{
    static const uint8_t header[ARRAY_HEADER_BYTES];

    memset(a, 0, sizeof(*a));
    a->elem_oid = elem_oid;
    array_put(a, header, sizeof(header));
}

void cs_store_array_null(struct cs_store_array *a)
{
    array_put_u32(a, UINT32_MAX); /* length -1: NULL */
    a->has_null = true;
    a->n++;
}

void cs_store_array_int(struct cs_store_array *a, int64_t v)
{
    uint64_t be = htobe64((uint64_t)v);

    CS_STORE_ASSERT(a->elem_oid == CS_STORE_OID_INT8);
    array_put_u32(a, sizeof(be));
    array_put(a, &be, sizeof(be));
    a->n++;
}

void cs_store_array_bool(struct cs_store_array *a, bool v)
{
    uint8_t b = v ? 1 : 0;

    CS_STORE_ASSERT(a->elem_oid == CS_STORE_OID_BOOL);
    array_put_u32(a, 1);
    array_put(a, &b, 1);
    a->n++;
}

void cs_store_array_bytes(struct cs_store_array *a, const void *p, size_t len)
{
    CS_STORE_ASSERT(a->elem_oid == CS_STORE_OID_TEXT || a->elem_oid == CS_STORE_OID_BYTEA);
    CS_STORE_ASSERT(len <= INT32_MAX);
    array_put_u32(a, (uint32_t)len);
    array_put(a, p, len);
    a->n++;
}

void cs_store_array_param(struct cs_store_array *a, struct cs_store_params *p)
{
    uint32_t header[5] = {htobe32(1), htobe32(a->has_null ? 1 : 0), htobe32(a->elem_oid),
                          htobe32((uint32_t)a->n), htobe32(1)};

    memcpy(a->buf, header, sizeof(header));
    cs_store_params_bytes(p, a->buf, a->len);
    memset(a, 0, sizeof(*a));
}

bool cs_store_row_is_null(const PGresult *res, int row, int col)
{
    return PQgetisnull(res, row, col) != 0;
}

int64_t cs_store_row_int(const PGresult *res, int row, int col)
{
    const char *v;
    uint64_t u64;
    uint32_t u32;
    uint16_t u16;

    if (PQgetisnull(res, row, col))
        return 0;
    v = PQgetvalue(res, row, col);
    switch (PQgetlength(res, row, col)) {
    case 8:
        memcpy(&u64, v, 8);
        return (int64_t)be64toh(u64);
    case 4:
        memcpy(&u32, v, 4);
        return (int32_t)be32toh(u32);
    case 2:
        memcpy(&u16, v, 2);
        return (int16_t)be16toh(u16);
    default:
        CS_STORE_ASSERT(!"integer field of unexpected length");
    }
    return 0;
}

bool cs_store_row_bool(const PGresult *res, int row, int col)
{
    if (PQgetisnull(res, row, col) || PQgetlength(res, row, col) != 1)
        return false;
    return PQgetvalue(res, row, col)[0] != 0;
}

char *cs_store_row_strdup(const PGresult *res, int row, int col)
{
    if (PQgetisnull(res, row, col))
        return cs_store_xstrdup("");
    return cs_store_xstrdup(PQgetvalue(res, row, col));
}

const uint8_t *cs_store_row_bytes(const PGresult *res, int row, int col, size_t *len)
{
    if (PQgetisnull(res, row, col)) {
        *len = 0;
        return NULL;
    }
    *len = (size_t)PQgetlength(res, row, col);
    return (const uint8_t *)PQgetvalue(res, row, col);
}

int cs_store_row_outcome(const PGresult *res, int row, int col,
                         const struct cs_store_outcome_cases *cases, int32_t *exit_code,
                         int32_t *term_signal)
{
    if (!cs_store_row_is_null(res, row, col)) {
        *exit_code = (int32_t)cs_store_row_int(res, row, col);
        return cases->exit_code;
    }
    if (!cs_store_row_is_null(res, row, col + 1)) {
        *term_signal = (int32_t)cs_store_row_int(res, row, col + 1);
        return cases->term_signal;
    }
    return 0;
}
