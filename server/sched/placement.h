/* placement: the machines the active replica places attempts on
 * (docs/design/0036), one room per replica: its limit (its --max-running,
 * from its row) and the attempts placed there. The active replica's own
 * machine is always a room; the others come from the replicas' rows, read
 * at every renewal with a shared database, and take attempts while their
 * lease is fresh and their address known. A start goes to the room with
 * the most free places, this machine's on a tie. Loop thread. */
#ifndef CS_PLACEMENT_H
#define CS_PLACEMENT_H

#include <stdbool.h>
#include <stdint.h>

#include "csched/v1/scheduler.pb-c.h"
#include "sched_state.h"

struct cs_room {
    char id[64];
    char address[300];
    uint32_t max_running;
    uint32_t placed; /* attempts holding a slot there */
    bool self;       /* this machine */
    bool alive;      /* may take attempts: lease fresh, address known */
    bool leased;     /* its lease is fresh: it answers for what it runs */
    bool known;      /* its row was read */
    /* How long, on the database's clock at the last read, until its
     * commands stop by themselves if it renews no more. */
    int64_t attempts_left_ms;
    int64_t read_mono_ns; /* when that was read */
};

/* Makes this machine's room (machine_max_running, replica_id). */
void cs_placement_init(struct cs_sched *sched);
void cs_placement_close(struct cs_sched *sched);
/* The replicas' rows, read again: the rooms follow them, and the limit on
 * runs at once (sched->max_running) with them. */
void cs_placement_update(struct cs_sched *sched, Csched__V1__Replica *const *replicas, size_t n);
/* The room of replica id, made (not alive) if no row named it yet. */
struct cs_room *cs_placement_room(struct cs_sched *sched, const char *id);
/* Replica id takes nothing more until its row is read again: it refused
 * an attempt, or could not be reached. */
void cs_placement_room_down(struct cs_sched *sched, const char *id);
/* The room a start goes to, or NULL when none has a free place. */
struct cs_room *cs_placement_choose(const struct cs_sched *sched);
/* The rooms' limits and the cluster's limit together: sets
 * sched->max_running. */
void cs_placement_limit(struct cs_sched *sched);

#endif
