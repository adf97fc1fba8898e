/* The CLI's ground floor: allocation that exits on exhaustion, the error
 * record of the flag parsers, the flag matcher and the number parsers. Every other file of the CLI
 * may call these, and these call no other file of it, so calls only point down.
 *
 * Single-threaded, as the rest of the CLI.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"

/* Stops the tool when memory runs out: a command-line tool loses nothing by
 * exiting, and every caller is spared a branch. */
static void *or_exit(void *p)
{
    if (p == NULL) {
        fputs("csched: out of memory\n", stderr);
        exit(CS_EXIT_SOFTWARE);
    }
    return p;
}

void *cs_cli_xmalloc(size_t size)
{
    return or_exit(malloc(size ? size : 1));
}

void *cs_cli_xcalloc(size_t n, size_t size)
{
    return or_exit(calloc(n ? n : 1, size ? size : 1));
}

void *cs_cli_xrealloc(void *p, size_t size)
{
    return or_exit(realloc(p, size ? size : 1));
}

char *cs_cli_xstrndup(const char *s, size_t n)
{
    return or_exit(strndup(s, n));
}

FILE *cs_cli_memstream(char **text, size_t *len)
{
    return or_exit(open_memstream(text, len));
}

void cs_cli_memstream_close(FILE *f)
{
    if (fclose(f) != 0)
        or_exit(NULL);
}

char *cs_cli_xstrdup(const char *s)
{
    size_t len = strlen(s) + 1;

    return memcpy(cs_cli_xmalloc(len), s, len);
}

bool cs_cli_flag(const char *name, int argc, char **argv, int *i, const char **value)
{
    const char *arg = argv[*i];
    size_t len = strlen(name);

    if (strncmp(arg, name, len) != 0)
        return false;
    if (arg[len] == '=') {
        *value = arg + len + 1;
        return true;
    }
    if (arg[len] != '\0')
        return false;
    if (*i + 1 < argc) {
        *i += 1;
        *value = argv[*i];
    } else {
        *value = NULL;
    }
    return true;
}

int cs_cli_err_set(struct cs_cli_err *err, int code, const char *fmt, ...)
{
    va_list ap;

    err->code = code;
    va_start(ap, fmt);
    (void)vsnprintf(err->msg, sizeof(err->msg), fmt, ap); /* a cut message still tells */
    va_end(ap);
    return code;
}

int cs_cli_flag_value(const char *name, const char *what, int argc, char **argv, int *i,
                      const char **value, struct cs_cli_err *err)
{
    if (!cs_cli_flag(name, argc, argv, i, value))
        return CS_CLI_FLAG_NOT_MINE;
    if (*value == NULL)
        return cs_cli_err_set(err, -EINVAL, "%s needs %s", name, what);
    return CS_CLI_FLAG_TAKEN;
}

/* Parses s as plain decimal digits (no sign, no spaces) of at most max.
 * Returns 0 or -EINVAL. */
static int parse_decimal(const char *s, uintmax_t max, uintmax_t *out)
{
    uintmax_t v = 0;

    if (s == NULL || *s == '\0')
        return -EINVAL;
    for (; *s != '\0'; s++) {
        if (!isdigit((unsigned char)*s))
            return -EINVAL;
        uintmax_t digit = (uintmax_t)(*s - '0');
        /* Checked before the multiplication, which could wrap around. */
        if (v > (max - digit) / 10)
            return -EINVAL;
        v = v * 10 + digit;
    }
    *out = v;
    return 0;
}

int cs_cli_parse_u32(const char *s, uint32_t *out)
{
    uintmax_t v;

    if (parse_decimal(s, UINT32_MAX, &v) != 0)
        return -EINVAL;
    *out = (uint32_t)v;
    return 0;
}

int cs_cli_parse_id(const char *s, int64_t *out)
{
    uintmax_t v;

    if (parse_decimal(s, INT64_MAX, &v) != 0 || v == 0)
        return -EINVAL;
    *out = (int64_t)v;
    return 0;
}

int cs_cli_parse_seconds(const char *s, int64_t *out_ms)
{
    char *end;
    double v;

    if (s == NULL || !isdigit((unsigned char)s[0]))
        return -EINVAL;
    errno = 0;
    v = strtod(s, &end);
    if (errno != 0 || *end != '\0' || !(v > 0) || v > 1e9)
        return -EINVAL;
    *out_ms = (int64_t)(v * 1000.0 + 0.5);
    if (*out_ms == 0)
        *out_ms = 1;
    return 0;
}

int cs_cli_parse_state(const char *s, Csched__V1__RunState *out)
{
    const ProtobufCEnumDescriptor *desc = &csched__v1__run_state__descriptor;
    static const char prefix[] = "RUN_STATE_";

    if (s == NULL)
        return -EINVAL;
    if (strncasecmp(s, prefix, sizeof(prefix) - 1) == 0)
        s += sizeof(prefix) - 1;
    for (unsigned i = 0; i < desc->n_values; i++) {
        const char *name = desc->values[i].name + sizeof(prefix) - 1;

        if (desc->values[i].value != 0 && strcasecmp(s, name) == 0) {
            *out = (Csched__V1__RunState)desc->values[i].value;
            return 0;
        }
    }
    return -EINVAL;
}
