/* cli_fixture: what the CLI's unit tests share. A capture is a stream in
 * memory that collects what the CLI writes (its JSON, its error lines), read
 * back as one string; a cs_cli is set up as the program sets it up, without
 * CSCHED_SERVER in the environment. Test code only; failures are cmocka's. */
#ifndef CS_TEST_CLI_FIXTURE_H
#define CS_TEST_CLI_FIXTURE_H

#include <stddef.h>
#include <stdio.h>

#include "cli.h"

/* A stream that collects what is written, read back with captured(). */
struct capture {
    char *buf;
    size_t len;
    FILE *f;
};

/* Opens c on a fresh empty buffer; fails the test if it cannot. */
void capture_open(struct capture *c);

/* Points cli's error output at a fresh capture. */
void capture_err(struct cs_cli *cli, struct capture *err);

/* What was written to c so far, NUL-terminated; valid until the next write
 * or capture_close. */
const char *captured(struct capture *c);

/* Closes c and frees its buffer. */
void capture_close(struct capture *c);

/* cs_cli_init with CSCHED_SERVER unset, so the defaults show. */
void init_cli(struct cs_cli *cli);

#endif
