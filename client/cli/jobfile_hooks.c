/* The hooks: list of a job file (docs/hooks.md): each a mapping of name,
 * events, when, url, secret (file:/PATH or env:VAR, as secret_env's),
 * ca_file, or a command (a list) or shell (a string) instead of the url,
 * timeout_ms and max_attempts. Single-threaded. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jobfile.h"

static const char *const event_names[] = {
    [CSCHED__V1__HOOK_EVENT__HOOK_EVENT_UNSPECIFIED] = "-",
    [CSCHED__V1__HOOK_EVENT__HOOK_EVENT_STARTED] = "started",
    [CSCHED__V1__HOOK_EVENT__HOOK_EVENT_SUCCEEDED] = "succeeded",
    [CSCHED__V1__HOOK_EVENT__HOOK_EVENT_FAILED] = "failed",
    [CSCHED__V1__HOOK_EVENT__HOOK_EVENT_TIMED_OUT] = "timed_out",
    [CSCHED__V1__HOOK_EVENT__HOOK_EVENT_LOST] = "lost",
    [CSCHED__V1__HOOK_EVENT__HOOK_EVENT_CANCELLED] = "cancelled",
    [CSCHED__V1__HOOK_EVENT__HOOK_EVENT_SLOT_SKIPPED] = "slot_skipped",
};
#define N_EVENTS (sizeof(event_names) / sizeof(event_names[0]))

const char *cs_cli_hook_event_name(Csched__V1__HookEvent event)
{
    return (size_t)event < N_EVENTS ? event_names[event] : "?";
}

static int parse_events(struct jf *jf, const yaml_node_t *node, Csched__V1__Hook *hook)
{
    if (node->type != YAML_SEQUENCE_NODE)
        return jf_error(jf, node, "hooks.events: must be a list (e.g. [failed, timed_out])");
    for (yaml_node_item_t *it = node->data.sequence.items.start; it < node->data.sequence.items.top;
         it++) {
        yaml_node_t *e = yaml_document_get_node(jf->doc, *it);
        size_t i = 1;
        while (i < N_EVENTS &&
               (e->type != YAML_SCALAR_NODE || strcmp(jf_scalar(e), event_names[i]) != 0))
            i++;
        if (i == N_EVENTS)
            return jf_error(jf, e,
                            "hooks.events: '%s' is none of started, succeeded, failed, "
                            "timed_out, lost, cancelled, slot_skipped",
                            e->type == YAML_SCALAR_NODE ? jf_scalar(e) : "");
        hook->events = cs_cli_xrealloc(hook->events, (hook->n_events + 1) * sizeof(*hook->events));
        hook->events[hook->n_events++] = (Csched__V1__HookEvent)i;
    }
    return 0;
}

static int parse_secret(struct jf *jf, const yaml_node_t *node, Csched__V1__Hook *hook)
{
    const char *ref = node->type == YAML_SCALAR_NODE ? jf_scalar(node) : "";
    bool is_file = strncmp(ref, "file:", 5) == 0;

    if (!is_file && strncmp(ref, "env:", 4) != 0)
        return jf_error(jf, node, "hooks.secret: the reference is file:/PATH or env:VAR, not '%s'",
                        ref);
    if (hook->secret == NULL) {
        hook->secret = cs_cli_xmalloc(sizeof(*hook->secret));
        csched__v1__secret_ref__init(hook->secret);
    }
    hook->secret->source_case =
        is_file ? CSCHED__V1__SECRET_REF__SOURCE_FILE : CSCHED__V1__SECRET_REF__SOURCE_SERVER_ENV;
    if (is_file)
        hook->secret->file = cs_cli_xstrdup(ref + 5);
    else
        hook->secret->server_env = cs_cli_xstrdup(ref + 4);
    return 0;
}

static int hook_key(struct jf *jf, const char *key, const yaml_node_t *v, Csched__V1__Hook *hook)
{
    if (strcmp(key, "name") == 0)
        return jf_string(jf, v, "hooks.name", &hook->name);
    if (strcmp(key, "events") == 0)
        return parse_events(jf, v, hook);
    if (strcmp(key, "when") == 0) {
        const char *w = v->type == YAML_SCALAR_NODE ? jf_scalar(v) : "";
        if (strcmp(w, "always") != 0 && strcmp(w, "changed") != 0)
            return jf_error(jf, v, "hooks.when: always or changed, not '%s'", w);
        hook->when = strcmp(w, "changed") == 0 ? CSCHED__V1__HOOK_WHEN__HOOK_WHEN_CHANGED
                                               : CSCHED__V1__HOOK_WHEN__HOOK_WHEN_ALWAYS;
        return 0;
    }
    if (strcmp(key, "url") == 0)
        return jf_string(jf, v, "hooks.url", &hook->url);
    if (strcmp(key, "secret") == 0)
        return parse_secret(jf, v, hook);
    if (strcmp(key, "ca_file") == 0)
        return jf_string(jf, v, "hooks.ca_file", &hook->ca_file);
    if (strcmp(key, "timeout_ms") == 0)
        return jf_u32(jf, v, "hooks.timeout_ms", &hook->timeout_ms);
    if (strcmp(key, "max_attempts") == 0)
        return jf_u32(jf, v, "hooks.max_attempts", &hook->max_attempts);
    if (strcmp(key, "command") == 0)
        return jf_strings(jf, v, "hooks.command", " (use shell: for a string)", &hook->command,
                          &hook->n_command);
    if (strcmp(key, "shell") == 0)
        return jf_string(jf, v, "hooks.shell", &hook->shell);
    return jf_error(jf, v,
                    "hooks: unknown key '%s' (known: name, events, when, url, secret, ca_file, "
                    "command, shell, timeout_ms, max_attempts)",
                    key);
}

int jf_parse_hooks(struct jf *jf, const yaml_node_t *node, Csched__V1__Job *job)
{
    if (node->type != YAML_SEQUENCE_NODE)
        return jf_error(jf, node, "hooks: must be a list of mappings (- url: ..., events: ...)");
    for (yaml_node_item_t *it = node->data.sequence.items.start; it < node->data.sequence.items.top;
         it++) {
        yaml_node_t *h = yaml_document_get_node(jf->doc, *it);
        if (h->type != YAML_MAPPING_NODE)
            return jf_error(jf, h, "hooks: each item must be a mapping (url: ..., events: ...)");
        if (jf_unique_keys(jf, h) != 0)
            return -EINVAL;
        Csched__V1__Hook *hook = cs_cli_xmalloc(sizeof(*hook));
        csched__v1__hook__init(hook);
        job->hooks = cs_cli_xrealloc(job->hooks, (job->n_hooks + 1) * sizeof(*job->hooks));
        job->hooks[job->n_hooks++] = hook;
        for (yaml_node_pair_t *p = h->data.mapping.pairs.start; p < h->data.mapping.pairs.top;
             p++) {
            yaml_node_t *k = yaml_document_get_node(jf->doc, p->key);
            yaml_node_t *v = yaml_document_get_node(jf->doc, p->value);
            int rc = hook_key(jf, k->type == YAML_SCALAR_NODE ? jf_scalar(k) : "", v, hook);
            if (rc != 0)
                return rc;
        }
    }
    return 0;
}
