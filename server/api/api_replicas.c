/* api_replicas: ListReplicas, the replicas sharing the database as their
 * rows there say, the one answering marked self, with its schema version. */
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "util.h"

struct list_replicas {
    struct cs_call *call;
    const char *self_id; /* this replica's id, borrowed from the sched */
};

static void replicas_listed_cb(void *arg, int status, Csched__V1__Replica **replicas, size_t n)
{
    struct list_replicas *l = arg;
    Csched__V1__ListReplicasResponse resp = CSCHED__V1__LIST_REPLICAS_RESPONSE__INIT;

    if (status != 0) {
        cs_api_fail_store(l->call, status, "listing the replicas");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        replicas[i]->self = l->self_id != NULL && strcmp(replicas[i]->id, l->self_id) == 0;
        replicas[i]->schema_version = replicas[i]->self ? cs_store_schema_version() : 0;
    }
    resp.replicas = replicas;
    resp.n_replicas = n;
    cs_call_reply(l->call, &resp.base);
out:
    cs_store_replicas_free(replicas, n);
    free(l);
}

void cs_api_list_replicas(struct cs_call *call, const ProtobufCMessage *request, void *ctx)
{
    CS_ASSERT_LOOP();
    struct cs_sched *s = ctx;
    struct list_replicas *l = cs_xmalloc(sizeof(*l));

    (void)request; /* ListReplicasRequest has no fields */
    *l = (struct list_replicas){call, s->replica_id};
    cs_store_replica_list(s->store, replicas_listed_cb, l);
}
