/* release_gate: a short list of eventfds, one per due time, in due order
 * (see release_gate.h). */
#include <errno.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "release_gate.h"
#include "util.h"

struct cs_release_gate {
    struct cs_release_gate *next;
    int64_t due_unix_ms;
    int fd;
};

int cs_release_gate_of(struct cs_release_gates *g, int64_t due_unix_ms)
{
    struct cs_release_gate **at = &g->head;
    while (*at != NULL && (*at)->due_unix_ms < due_unix_ms)
        at = &(*at)->next;
    if (*at != NULL && (*at)->due_unix_ms == due_unix_ms)
        return (*at)->fd;
    if (g->n >= CS_RELEASE_GATES_MAX)
        return -EAGAIN;
    int fd = eventfd(0, EFD_CLOEXEC);
    if (fd < 0)
        return -errno;
    struct cs_release_gate *gate = cs_xcalloc(1, sizeof(*gate));
    gate->due_unix_ms = due_unix_ms;
    gate->fd = fd;
    gate->next = *at;
    *at = gate;
    g->n++;
    return fd;
}

int64_t cs_release_gates_first_due(const struct cs_release_gates *g)
{
    return g->head != NULL ? g->head->due_unix_ms : 0;
}

/* Forgets the first gate, opened or not. */
static void drop_first(struct cs_release_gates *g)
{
    struct cs_release_gate *gate = g->head;
    g->head = gate->next;
    g->n--;
    (void)close(gate->fd); /* an eventfd: nothing to lose */
    free(gate);
}

void cs_release_gates_open(struct cs_release_gates *g, int64_t now_unix_ms)
{
    const uint64_t one = 1;
    while (g->head != NULL && g->head->due_unix_ms <= now_unix_ms) {
        /* Cannot fail: a counter of 1 is far from its overflow. */
        (void)!write(g->head->fd, &one, sizeof(one));
        drop_first(g);
    }
}

void cs_release_gates_free(struct cs_release_gates *g)
{
    while (g->head != NULL)
        drop_first(g);
}
