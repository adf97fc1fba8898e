/* release_gate: the release of held launches at their due time, one write
 * for all of them. A launch held for its due time (later.h) whose minder
 * was started ahead (ahead_minder.h) is armed: its minder is handed the
 * gate of that due time, an eventfd, and goes by itself once the gate
 * opens, a write that makes it readable for every minder polling it (none
 * reads it). At the due time one write releases every minder due then,
 * where a byte sent to each was a send per minder, each send waking a
 * process that took the CPU from the thread still sending to the others.
 *
 * An armed minder taken back is killed before its gate opens; one whose
 * cschedd dies sees its socket's end of file with its gate shut, and
 * exits. Guarded by the launcher's lock; each gate is one fd of cschedd's,
 * closed once opened. */
#ifndef CS_RELEASE_GATE_H
#define CS_RELEASE_GATE_H

#include <stddef.h>
#include <stdint.h>

/* The most gates shut at once: as many due times a launch is held for. */
#define CS_RELEASE_GATES_MAX 64

struct cs_release_gate;

struct cs_release_gates {
    struct cs_release_gate *head; /* earliest due first */
    size_t n;
};

/* The gate of due_unix_ms, made if there is none: its fd, valid until the
 * gate opens, or -EAGAIN (CS_RELEASE_GATES_MAX gates shut) or eventfd's
 * negative errno. */
int cs_release_gate_of(struct cs_release_gates *gates, int64_t due_unix_ms);
/* When the first gate is due (unix ms); 0: none is shut. */
int64_t cs_release_gates_first_due(const struct cs_release_gates *gates);
/* Opens every gate due by now_unix_ms, and forgets it. */
void cs_release_gates_open(struct cs_release_gates *gates, int64_t now_unix_ms);
/* Closes the gates still shut (at the launcher's end: their minders were
 * sent away). */
void cs_release_gates_free(struct cs_release_gates *gates);

#endif
