/* Unit tests for server/wire_check.c: strings with NUL bytes or invalid
 * UTF-8 are found at any depth (nested messages, map entries) and named;
 * a key of field number 0, which protobuf-c takes but cannot write back, is
 * refused; everything else, including unknown fields and truncated input,
 * passes through to the unpacker. And for server/wire.c: the field prefix a stream
 * writes is protobuf-c's own, and reads back. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "csched/v1/scheduler.pb-c.h"
#include "wire.h"
#include "wire_check.h"

struct packed {
    uint8_t *data;
    size_t len;
};

static struct packed pack(const ProtobufCMessage *msg)
{
    struct packed p;
    p.len = protobuf_c_message_get_packed_size(msg);
    p.data = malloc(p.len ? p.len : 1);
    assert_non_null(p.data);
    protobuf_c_message_pack(msg, p.data);
    return p;
}

/* Packs a CreateJobRequest whose job.name, job.shell and one env entry are given. */
static struct packed pack_job(const char *name, const char *shell, const char *env_value)
{
    Csched__V1__CreateJobRequest req = CSCHED__V1__CREATE_JOB_REQUEST__INIT;
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    Csched__V1__Job__EnvEntry entry = CSCHED__V1__JOB__ENV_ENTRY__INIT;
    Csched__V1__Job__EnvEntry *entries[] = {&entry};
    job.name = (char *)name;
    job.shell = (char *)shell;
    entry.key = "K";
    entry.value = (char *)env_value;
    job.env = entries;
    job.n_env = 1;
    req.job = &job;
    return pack(&req.base);
}

/* Replaces the first byte equal to marker with value, in place. */
static void poke(struct packed *p, uint8_t marker, uint8_t value)
{
    uint8_t *at = memchr(p->data, marker, p->len);
    assert_non_null(at);
    *at = value;
}

static int check(const struct packed *p, char *field, size_t cap)
{
    return cs_wire_check_strings(&csched__v1__create_job_request__descriptor, p->data, p->len,
                                 field, cap);
}

static void test_wire_check_clean_message_passes(void **state)
{
    struct packed p = pack_job("job-1", "echo héllo ✓ 𝄞", "value");
    char field[128];
    assert_int_equal(check(&p, field, sizeof(field)), 0);
    assert_string_equal(field, "");
    free(p.data);
}

static void test_wire_check_nul_in_nested_string_is_named(void **state)
{
    struct packed p = pack_job("job-1", "echo #x", "value");
    poke(&p, '#', '\0');
    char field[128];
    assert_int_equal(check(&p, field, sizeof(field)), -EINVAL);
    assert_string_equal(field, "job.shell");
    free(p.data);
}

static void test_wire_check_nul_in_map_value_is_named(void **state)
{
    struct packed p = pack_job("job-1", "true", "a#b");
    poke(&p, '#', '\0');
    char field[128];
    assert_int_equal(check(&p, field, sizeof(field)), -EINVAL);
    assert_string_equal(field, "job.env.value");
    free(p.data);
}

static void test_wire_check_invalid_utf8_is_refused(void **state)
{
    static const uint8_t bad[][2] = {
        {0xc0, 0x80}, /* overlong NUL */
        {0xff, 'x'},  /* never valid */
        {0xc3, 'x'},  /* cut-short sequence */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct packed p = pack_job("job#$", "true", "v");
        poke(&p, '#', bad[i][0]);
        poke(&p, '$', bad[i][1]);
        char field[128];
        assert_int_equal(check(&p, field, sizeof(field)), -EINVAL);
        assert_string_equal(field, "job.name");
        free(p.data);
    }
}

static void test_wire_check_surrogate_is_refused(void **state)
{
    /* U+D800 encoded as three bytes is not a character. */
    struct packed p = pack_job("a#$%", "true", "v");
    poke(&p, '#', 0xed);
    poke(&p, '$', 0xa0);
    poke(&p, '%', 0x80);
    char field[128];
    assert_int_equal(check(&p, field, sizeof(field)), -EINVAL);
    free(p.data);
}

static void test_wire_check_truncated_input_is_left_to_the_unpacker(void **state)
{
    struct packed p = pack_job("job-1", "echo hello", "value");
    char field[128];
    for (size_t len = 0; len < p.len; len++)
        assert_int_equal(cs_wire_check_strings(&csched__v1__create_job_request__descriptor, p.data,
                                               len, field, sizeof(field)),
                         0);
    free(p.data);
}

static void test_wire_check_unknown_fields_are_skipped(void **state)
{
    /* Field 99, length-delimited, holding a NUL: not ours to judge. */
    const uint8_t data[] = {0x9a, 0x06, 0x02, 0x00, 0x41};
    char field[128];
    assert_int_equal(cs_wire_check_strings(&csched__v1__create_job_request__descriptor, data,
                                           sizeof(data), field, sizeof(field)),
                     0);
}

/* A job whose encoding ends in a key of field number 0 written in two bytes
 * (0x80 0x00), with a varint value. */
static const uint8_t job_with_field_zero[] = {0x0a, 0x0a, 0x0a, 0x05, 'b',  'u',
                                              'i',  'l',  'd',  0x80, 0x00, 0x07};

/* Why it is refused: protobuf-c takes it, but not the message it packs from
 * what it took, so the server's copy of the job (pack, then unpack) fails. */
static void test_wire_check_field_number_zero_is_what_protobuf_c_cannot_repack(void **state)
{
    ProtobufCMessage *req =
        protobuf_c_message_unpack(&csched__v1__create_job_request__descriptor, NULL,
                                  sizeof(job_with_field_zero), job_with_field_zero);
    assert_non_null(req);
    struct packed p = pack(req);
    ProtobufCMessage *copy =
        protobuf_c_message_unpack(&csched__v1__create_job_request__descriptor, NULL, p.len, p.data);
    assert_null(copy);
    free(p.data);
    protobuf_c_message_free_unpacked(req, NULL);
}

static void test_wire_check_field_number_zero_is_refused(void **state)
{
    char field[128];
    assert_int_equal(cs_wire_check_strings(&csched__v1__create_job_request__descriptor,
                                           job_with_field_zero, sizeof(job_with_field_zero), field,
                                           sizeof(field)),
                     -EBADMSG);
    assert_string_equal(field, "job");
    /* At the top, in the request itself. */
    assert_int_equal(cs_wire_check_strings(&csched__v1__create_job_request__descriptor,
                                           job_with_field_zero + 9, 3, field, sizeof(field)),
                     -EBADMSG);
    assert_string_equal(field, "");
}

/* Items merged by hand into one WatchResponse are the bytes protobuf-c packs
 * for the same events. */
static void test_wire_len_prefix_matches_protobuf_c(void **state)
{
    Csched__V1__Event a = CSCHED__V1__EVENT__INIT, b = CSCHED__V1__EVENT__INIT;
    a.seq = 1;
    b.seq = 300;
    b.job_name = "a job name long enough to matter";
    Csched__V1__Event *events[] = {&a, &b};
    Csched__V1__WatchResponse resp = CSCHED__V1__WATCH_RESPONSE__INIT;
    resp.events = events;
    resp.n_events = 2;
    struct packed want = pack(&resp.base);

    uint8_t got[256];
    size_t len = 0;
    for (size_t i = 0; i < 2; i++) {
        size_t size = protobuf_c_message_get_packed_size(&events[i]->base);
        len += cs_wire_put_len_prefix(got + len, 1, size);
        len += protobuf_c_message_pack(&events[i]->base, got + len);
    }
    assert_int_equal(len, want.len);
    assert_memory_equal(got, want.data, len);
    free(want.data);
}

/* Lengths around each 7-bit step, up to the largest, read back whole. */
static void test_wire_len_prefix_reads_back(void **state)
{
    static const size_t lens[] = {0, 1, 127, 128, 16383, 16384, 1u << 31, SIZE_MAX};
    for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
        uint8_t buf[CS_WIRE_LEN_PREFIX_MAX];
        size_t n = cs_wire_put_len_prefix(buf, 1, lens[i]);
        assert_true(n >= 2 && n <= CS_WIRE_LEN_PREFIX_MAX);
        const uint8_t *p = buf;
        uint64_t key = 0, len = 0;
        assert_int_equal(cs_wire_read_varint(&p, buf + n, &key), 0);
        assert_int_equal(key, (1 << 3) | CS_WIRE_LEN);
        assert_int_equal(cs_wire_read_varint(&p, buf + n, &len), 0);
        assert_int_equal(len, lens[i]);
        assert_ptr_equal(p, buf + n);
        /* Cut short, the varint is refused. */
        p = buf + 1;
        assert_int_equal(cs_wire_read_varint(&p, buf + n - 1, &len), -EINVAL);
    }
}

/* A 32-bit field given more than 32 bits is refused and named; within
 * range, and a negative int32 or enum (ten bytes on the wire), it passes. */
static void test_wire_check_32_bit_overflow_is_named(void **state)
{
    /* ListRunsRequest.page_size (field 3) = 2^40, then 2^32 - 1. */
    static const uint8_t page_2_40[] = {0x18, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20};
    static const uint8_t page_max[] = {0x18, 0xff, 0xff, 0xff, 0xff, 0x0f};
    /* ListRunsRequest.state (field 2, an enum) = -1. */
    static const uint8_t state_minus_1[] = {0x10, 0xff, 0xff, 0xff, 0xff, 0xff,
                                            0xff, 0xff, 0xff, 0xff, 0x01};
    const ProtobufCMessageDescriptor *desc = &csched__v1__list_runs_request__descriptor;
    char field[128];

    assert_int_equal(
        cs_wire_check_strings(desc, page_2_40, sizeof(page_2_40), field, sizeof(field)), -ERANGE);
    assert_string_equal(field, "page_size");
    assert_int_equal(cs_wire_check_strings(desc, page_max, sizeof(page_max), field, sizeof(field)),
                     0);
    assert_int_equal(
        cs_wire_check_strings(desc, state_minus_1, sizeof(state_minus_1), field, sizeof(field)), 0);
}

/* Writes a CreateJobRequest whose job (field 1) holds n command (field 2)
 * entries "x" into buf; returns its length. */
static size_t job_of_commands(uint8_t *buf, size_t n)
{
    size_t len = cs_wire_put_len_prefix(buf, 1, 3 * n);
    for (size_t i = 0; i < n; i++) {
        buf[len++] = (2 << 3) | CS_WIRE_LEN;
        buf[len++] = 1;
        buf[len++] = 'x';
    }
    return len;
}

/* A repeated field of more than CS_WIRE_REPEATED_MAX entries is refused and
 * named before anything is unpacked; at the limit it passes. */
static void test_wire_check_repeated_over_the_limit_is_named(void **state)
{
    uint8_t *buf = malloc(3 * (CS_WIRE_REPEATED_MAX + 1) + CS_WIRE_LEN_PREFIX_MAX);
    struct packed p = {buf, 0};
    char field[128];

    assert_non_null(buf);
    p.len = job_of_commands(buf, CS_WIRE_REPEATED_MAX + 1);
    assert_int_equal(check(&p, field, sizeof(field)), -E2BIG);
    assert_string_equal(field, "job.command");
    p.len = job_of_commands(buf, CS_WIRE_REPEATED_MAX);
    assert_int_equal(check(&p, field, sizeof(field)), 0);
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wire_check_clean_message_passes),
        cmocka_unit_test(test_wire_check_32_bit_overflow_is_named),
        cmocka_unit_test(test_wire_check_repeated_over_the_limit_is_named),
        cmocka_unit_test(test_wire_check_nul_in_nested_string_is_named),
        cmocka_unit_test(test_wire_check_nul_in_map_value_is_named),
        cmocka_unit_test(test_wire_check_invalid_utf8_is_refused),
        cmocka_unit_test(test_wire_check_surrogate_is_refused),
        cmocka_unit_test(test_wire_check_truncated_input_is_left_to_the_unpacker),
        cmocka_unit_test(test_wire_check_unknown_fields_are_skipped),
        cmocka_unit_test(test_wire_check_field_number_zero_is_what_protobuf_c_cannot_repack),
        cmocka_unit_test(test_wire_check_field_number_zero_is_refused),
        cmocka_unit_test(test_wire_len_prefix_matches_protobuf_c),
        cmocka_unit_test(test_wire_len_prefix_reads_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
