/* The after: list of a job file (docs/dependencies.md): each item a
 * mapping of job and on (succeeded, failed or any; succeeded when left
 * out), or just the upstream's name. -o yaml's form of on
 * (DEPENDENCY_ON_FAILED) is read too, so a job printed applies again.
 * Single-threaded. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jobfile.h"

static const char *const on_names[] = {
    [CSCHED__V1__DEPENDENCY_ON__DEPENDENCY_ON_UNSPECIFIED] = "-",
    [CSCHED__V1__DEPENDENCY_ON__DEPENDENCY_ON_SUCCEEDED] = "succeeded",
    [CSCHED__V1__DEPENDENCY_ON__DEPENDENCY_ON_FAILED] = "failed",
    [CSCHED__V1__DEPENDENCY_ON__DEPENDENCY_ON_ANY] = "any",
};
#define N_ON (sizeof(on_names) / sizeof(on_names[0]))

const char *cs_cli_after_on_name(Csched__V1__DependencyOn on)
{
    return (size_t)on < N_ON && on != 0 ? on_names[on] : on_names[1];
}

static int parse_on(struct jf *jf, const yaml_node_t *v, Csched__V1__Dependency *d)
{
    const char *w = v->type == YAML_SCALAR_NODE ? jf_scalar(v) : "";
    if (strncmp(w, "DEPENDENCY_ON_", 14) == 0)
        w += 14;
    for (size_t i = 1; i < N_ON; i++)
        if (strcasecmp(w, on_names[i]) == 0) {
            d->on = (Csched__V1__DependencyOn)i;
            return 0;
        }
    return jf_error(jf, v, "after.on: succeeded, failed or any, not '%s'",
                    v->type == YAML_SCALAR_NODE ? jf_scalar(v) : "");
}

static int parse_item(struct jf *jf, const yaml_node_t *item, Csched__V1__Dependency *d)
{
    if (item->type == YAML_SCALAR_NODE)
        return jf_string(jf, item, "after.job", &d->job);
    if (item->type != YAML_MAPPING_NODE)
        return jf_error(jf, item,
                        "after: each item is a job's name or a mapping (job: ..., on: ...)");
    if (jf_unique_keys(jf, item) != 0)
        return -EINVAL;
    for (yaml_node_pair_t *p = item->data.mapping.pairs.start; p < item->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = yaml_document_get_node(jf->doc, p->key);
        yaml_node_t *v = yaml_document_get_node(jf->doc, p->value);
        const char *key = k->type == YAML_SCALAR_NODE ? jf_scalar(k) : "";
        int rc;
        if (strcmp(key, "job") == 0)
            rc = jf_string(jf, v, "after.job", &d->job);
        else if (strcmp(key, "on") == 0)
            rc = parse_on(jf, v, d);
        else
            rc = jf_error(jf, k, "after: unknown key '%s' (known: job, on)", key);
        if (rc != 0)
            return rc;
    }
    if (d->job[0] == '\0')
        return jf_error(jf, item, "after: an item without a job");
    return 0;
}

int jf_parse_after(struct jf *jf, const yaml_node_t *node, Csched__V1__Job *job)
{
    if (node->type != YAML_SEQUENCE_NODE)
        return jf_error(jf, node, "after: must be a list (- job: build, on: succeeded)");
    for (yaml_node_item_t *it = node->data.sequence.items.start; it < node->data.sequence.items.top;
         it++) {
        yaml_node_t *item = yaml_document_get_node(jf->doc, *it);
        Csched__V1__Dependency *d = cs_cli_xmalloc(sizeof(*d));
        csched__v1__dependency__init(d);
        d->on = CSCHED__V1__DEPENDENCY_ON__DEPENDENCY_ON_SUCCEEDED;
        job->after = cs_cli_xrealloc(job->after, (job->n_after + 1) * sizeof(*job->after));
        job->after[job->n_after++] = d;
        int rc = parse_item(jf, item, d);
        if (rc != 0)
            return rc;
    }
    return 0;
}
