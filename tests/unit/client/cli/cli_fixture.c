/* cli_fixture: the capture streams and the cs_cli set-up of the CLI's unit
 * tests (see cli_fixture.h). open_memstream keeps the buffer and its length
 * up to date at every fflush, so captured() flushes first. */
#include "cli_fixture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>

void capture_open(struct capture *c)
{
    c->buf = NULL;
    c->len = 0;
    c->f = open_memstream(&c->buf, &c->len);
    assert_non_null(c->f);
}

void capture_err(struct cs_cli *cli, struct capture *err)
{
    capture_open(err);
    cli->err = err->f;
}

const char *captured(struct capture *c)
{
    fflush(c->f);
    return c->buf;
}

void capture_close(struct capture *c)
{
    fclose(c->f);
    free(c->buf);
}

void init_cli(struct cs_cli *cli)
{
    unsetenv("CSCHED_SERVER");
    cs_cli_init(cli);
}
