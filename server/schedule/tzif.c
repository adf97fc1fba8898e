/* tzif: RFC 8536 files read in place (see tzif.h). A file of version 2 or
 * later holds the version 1 block first, for old readers: it is skipped,
 * and the 64-bit block after the second header is read instead, then the
 * footer between two newlines. Pure, any thread. */
#include "tzif.h"

#include <errno.h>
#include <string.h>

#define HEADER_LEN 44
/* RFC 8536 3.2: an offset lies in -89999..93599 (-24:59:59..25:59:59). */
#define UTOFF_MIN (-89999)
#define UTOFF_MAX 93599

/* The six counts of a header, in the file's order. */
struct counts {
    uint32_t isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt;
};

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t be64(const uint8_t *p)
{
    return (uint64_t)be32(p) << 32 | be32(p + 4);
}

/* The counts of the header at p, and the length of the data block after it
 * with times of time_size bytes; 0 when a rule of RFC 8536 3.1 is broken. */
static uint64_t read_header(const uint8_t *p, size_t time_size, struct counts *c)
{
    c->isutcnt = be32(p + 20);
    c->isstdcnt = be32(p + 24);
    c->leapcnt = be32(p + 28);
    c->timecnt = be32(p + 32);
    c->typecnt = be32(p + 36);
    c->charcnt = be32(p + 40);
    if (c->typecnt == 0 || c->typecnt > 256 || c->charcnt == 0 ||
        (c->isutcnt != 0 && c->isutcnt != c->typecnt) ||
        (c->isstdcnt != 0 && c->isstdcnt != c->typecnt))
        return 0;
    /* 64-bit sums of 32-bit counts: no overflow. */
    return (uint64_t)c->timecnt * (time_size + 1) + (uint64_t)c->typecnt * 6 + c->charcnt +
           (uint64_t)c->leapcnt * (time_size + 4) + c->isstdcnt + c->isutcnt;
}

int64_t cs_tzif_time(const struct cs_tzif *f, size_t i)
{
    const uint8_t *p = f->times + i * f->time_size;
    return f->time_size == 4 ? (int64_t)(int32_t)be32(p) : (int64_t)be64(p);
}

struct cs_tzif_type cs_tzif_type(const struct cs_tzif *f, size_t t)
{
    const uint8_t *p = f->types + t * 6;
    return (struct cs_tzif_type){(int32_t)be32(p), p[4] != 0};
}

struct cs_tzif_type cs_tzif_type_after(const struct cs_tzif *f, size_t i)
{
    return cs_tzif_type(f, f->indexes[i]);
}

/* The checks on the data block that counts alone cannot make. */
static int check_data(const struct cs_tzif *f, uint32_t charcnt, struct cs_err *err)
{
    for (size_t i = 0; i < f->timecnt; i++) {
        if (f->indexes[i] >= f->typecnt)
            return cs_err_set(err, -EINVAL, "transition %zu names local time type %u of %zu", i,
                              f->indexes[i], f->typecnt);
        if (i > 0 && cs_tzif_time(f, i) <= cs_tzif_time(f, i - 1))
            return cs_err_set(err, -EINVAL, "transition %zu is not after the one before", i);
    }
    for (size_t t = 0; t < f->typecnt; t++) {
        const uint8_t *p = f->types + t * 6;
        int32_t utoff = (int32_t)be32(p);
        if (utoff < UTOFF_MIN || utoff > UTOFF_MAX || p[4] > 1 || p[5] >= charcnt)
            return cs_err_set(err, -EINVAL, "local time type %zu is malformed", t);
    }
    return 0;
}

/* The footer at p (len bytes left): "\n" TZ "\n". */
static int read_footer(const uint8_t *p, size_t len, struct cs_tzif *out, struct cs_err *err)
{
    const uint8_t *nl = len > 1 && p[0] == '\n' ? memchr(p + 1, '\n', len - 1) : NULL;
    size_t n = nl != NULL ? (size_t)(nl - p - 1) : 0;

    if (nl == NULL)
        return cs_err_set(err, -EINVAL, "the footer is missing or unterminated");
    if (n > CS_TZ_RULE_TEXT_MAX || memchr(p + 1, '\0', n) != NULL)
        return cs_err_set(err, -EINVAL, "the footer is longer than %d bytes or holds a NUL",
                          CS_TZ_RULE_TEXT_MAX);
    memcpy(out->footer, p + 1, n);
    out->footer[n] = '\0';
    return 0;
}

int cs_tzif_parse(const uint8_t *buf, size_t len, struct cs_tzif *out, struct cs_err *err)
{
    const uint8_t *p = buf, *end = buf + len;
    struct counts c;
    uint64_t block;

    memset(out, 0, sizeof(*out));
    if (len < HEADER_LEN || memcmp(buf, "TZif", 4) != 0)
        return cs_err_set(err, -EINVAL, "not a TZif file");
    if (buf[4] != '\0' && (buf[4] < '2' || buf[4] > '9'))
        return cs_err_set(err, -EINVAL, "TZif version byte 0x%02x is unknown", buf[4]);
    out->version = buf[4] == '\0' ? 1 : buf[4] - '0';
    out->time_size = 4;
    block = read_header(p, 4, &c);
    if (block == 0)
        goto err_counts;
    if (out->version >= 2) {
        /* The version 1 block is for old readers: the second header follows it. */
        if (block > (uint64_t)(end - p) - HEADER_LEN ||
            (size_t)(end - p) - HEADER_LEN - block < HEADER_LEN)
            goto err_truncated;
        p += HEADER_LEN + block;
        if (memcmp(p, "TZif", 4) != 0)
            return cs_err_set(err, -EINVAL, "the second TZif header is missing");
        out->time_size = 8;
        block = read_header(p, 8, &c);
        if (block == 0)
            goto err_counts;
    }
    if (block > (uint64_t)(end - p) - HEADER_LEN)
        goto err_truncated;
    p += HEADER_LEN;
    out->timecnt = c.timecnt;
    out->typecnt = c.typecnt;
    out->leapcnt = c.leapcnt;
    out->times = p;
    out->indexes = p + (size_t)c.timecnt * out->time_size;
    out->types = out->indexes + c.timecnt;
    int rc = check_data(out, c.charcnt, err);
    if (rc != 0 || out->version == 1)
        return rc;
    p += block;
    return read_footer(p, (size_t)(end - p), out, err);

err_truncated:
    return cs_err_set(err, -EINVAL, "truncated: the counts ask for more bytes than the %zu there",
                      len);
err_counts:
    return cs_err_set(err, -EINVAL, "a header's counts break RFC 8536's rules");
}
