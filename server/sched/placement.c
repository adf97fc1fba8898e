/* placement: the rooms attempts are placed in (placement.h). */
#define CS_LOG_COMPONENT "placement"
#include "placement.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "util.h"

/* The states of a replica's row that take attempts (ReplicaState). */
static bool takes_work(Csched__V1__ReplicaState state)
{
    return state == CSCHED__V1__REPLICA_STATE__REPLICA_STATE_STANDBY ||
           state == CSCHED__V1__REPLICA_STATE__REPLICA_STATE_ACTIVE;
}

static struct cs_room *room_add(struct cs_sched *s, const char *id)
{
    s->rooms = cs_xrealloc(s->rooms, (s->n_rooms + 1) * sizeof(*s->rooms));
    struct cs_room *room = cs_xcalloc(1, sizeof(*room));
    (void)snprintf(room->id, sizeof(room->id), "%s", id);
    s->rooms[s->n_rooms++] = room;
    return room;
}

void cs_placement_init(struct cs_sched *s)
{
    struct cs_room *self = room_add(s, s->replica_id != NULL ? s->replica_id : "");
    self->self = self->alive = self->leased = self->known = true;
    self->max_running = s->machine_max_running;
}

void cs_placement_close(struct cs_sched *s)
{
    for (size_t i = 0; i < s->n_rooms; i++)
        free(s->rooms[i]);
    free(s->rooms);
    s->rooms = NULL;
    s->n_rooms = 0;
}

struct cs_room *cs_placement_room(struct cs_sched *s, const char *id)
{
    for (size_t i = 0; i < s->n_rooms; i++)
        if (strcmp(s->rooms[i]->id, id) == 0)
            return s->rooms[i];
    return room_add(s, id);
}

void cs_placement_limit(struct cs_sched *s)
{
    uint64_t total = 0;
    for (size_t i = 0; i < s->n_rooms; i++)
        if (s->rooms[i]->alive)
            total += s->rooms[i]->max_running;
    if (total > UINT32_MAX)
        total = UINT32_MAX;
    uint32_t cluster = s->cluster_max_running;
    s->max_running = cluster > 0 && cluster < total ? cluster : (uint32_t)total;
}

void cs_placement_update(struct cs_sched *s, Csched__V1__Replica *const *replicas, size_t n)
{
    CS_ASSERT_LOOP();
    int64_t now_ns = cs_now_mono_ns();
    for (size_t i = 0; i < n; i++) {
        const Csched__V1__Replica *r = replicas[i];
        struct cs_room *room = cs_placement_room(s, r->id);
        if (room->self)
            continue;
        bool alive = takes_work(r->state) && !r->lease_expired && r->address[0] != '\0' &&
                     r->max_running > 0;
        if (alive != room->alive)
            cs_log_info("replica %s %s attempts (up to %u at once)", r->id,
                        alive ? "takes" : "takes no more", r->max_running);
        room->alive = alive;
        room->leased = !r->lease_expired;
        room->known = true;
        room->max_running = r->max_running;
        (void)snprintf(room->address, sizeof(room->address), "%s", r->address);
        room->attempts_left_ms = r->attempts_until_unix_ms - (r->renewed_unix_ms + r->lease_age_ms);
        room->read_mono_ns = now_ns;
    }
    cs_placement_limit(s);
}

void cs_placement_room_down(struct cs_sched *s, const char *id)
{
    struct cs_room *room = cs_placement_room(s, id);
    if (room->self || !room->alive)
        return;
    room->alive = false;
    cs_placement_limit(s);
}

struct cs_room *cs_placement_choose(const struct cs_sched *s)
{
    struct cs_room *best = NULL;
    uint32_t best_free = 0;
    for (size_t i = 0; i < s->n_rooms; i++) {
        struct cs_room *room = s->rooms[i];
        if (!room->alive || room->placed >= room->max_running)
            continue;
        uint32_t free_places = room->max_running - room->placed;
        if (free_places > best_free) {
            best = room;
            best_free = free_places;
        }
    }
    return best;
}
