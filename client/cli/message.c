/* Heap messages for the CLI in protobuf-c's unpacked layout, so that one
 * *__free_unpacked call frees them whole: a new Job, and the strings,
 * lists, maps and secret references set in it and in requests. Calls
 * util.c only.
 *
 * Single-threaded, as the rest of the CLI.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

Csched__V1__Job *cs_cli_job_new(void)
{
    Csched__V1__Job *job = cs_cli_xmalloc(sizeof(*job));

    csched__v1__job__init(job);
    return job;
}

void cs_cli_set_string(char **field, const char *s)
{
    if (*field != NULL && *field != protobuf_c_empty_string)
        free(*field);
    *field = cs_cli_xstrdup(s);
}

void cs_cli_strings_add(char ***list, size_t *n, const char *s)
{
    char **grown = cs_cli_xrealloc(*list, (*n + 1) * sizeof(*grown));

    grown[(*n)++] = cs_cli_xstrdup(s);
    *list = grown;
}

void cs_cli_job_add_command(Csched__V1__Job *job, const char *arg)
{
    cs_cli_strings_add(&job->command, &job->n_command, arg);
}

void cs_cli_map_put(const ProtobufCMessageDescriptor *entry_desc, void ***entries, size_t *n,
                    const char *key, const char *value)
{
    const ProtobufCFieldDescriptor *kf = &entry_desc->fields[0];
    const ProtobufCFieldDescriptor *vf = &entry_desc->fields[1];
    ProtobufCMessage *entry;

    for (size_t i = 0; i < *n; i++) {
        char **k = (char **)((char *)(*entries)[i] + kf->offset);
        char **v = (char **)((char *)(*entries)[i] + vf->offset);

        if (strcmp(*k, key) == 0) {
            cs_cli_set_string(v, value);
            return;
        }
    }
    entry = cs_cli_xmalloc(entry_desc->sizeof_message);
    protobuf_c_message_init(entry_desc, entry);
    *(char **)((char *)entry + kf->offset) = cs_cli_xstrdup(key);
    *(char **)((char *)entry + vf->offset) = cs_cli_xstrdup(value);
    *entries = cs_cli_xrealloc(*entries, (*n + 1) * sizeof(**entries));
    (*entries)[(*n)++] = entry;
}

int cs_cli_map_put_kv(const ProtobufCMessageDescriptor *entry_desc, void ***entries, size_t *n,
                      const char *kv)
{
    const char *eq = kv != NULL ? strchr(kv, '=') : NULL;
    char *key;

    if (eq == NULL || eq == kv)
        return -EINVAL;
    key = cs_cli_xmalloc((size_t)(eq - kv) + 1);
    memcpy(key, kv, (size_t)(eq - kv));
    key[eq - kv] = '\0';
    cs_cli_map_put(entry_desc, entries, n, key, eq + 1);
    free(key);
    return 0;
}

int cs_cli_secret_put(Csched__V1__Job *job, const char *name, const char *ref)
{
    Csched__V1__SecretRef *sr;
    Csched__V1__Job__SecretEnvEntry *e = NULL;
    bool is_file = strncmp(ref, "file:", 5) == 0;

    if (!is_file && strncmp(ref, "env:", 4) != 0)
        return -EINVAL;
    for (size_t i = 0; i < job->n_secret_env && e == NULL; i++)
        if (strcmp(job->secret_env[i]->key, name) == 0)
            e = job->secret_env[i];
    if (e == NULL) {
        Csched__V1__Job__SecretEnvEntry **all =
            cs_cli_xrealloc(job->secret_env, (job->n_secret_env + 1) * sizeof(*all));

        e = cs_cli_xmalloc(sizeof(*e));
        csched__v1__job__secret_env_entry__init(e);
        e->key = cs_cli_xstrdup(name);
        e->value = cs_cli_xmalloc(sizeof(*e->value));
        csched__v1__secret_ref__init(e->value);
        all[job->n_secret_env++] = e;
        job->secret_env = all;
    }
    sr = e->value;
    if (sr->source_case == CSCHED__V1__SECRET_REF__SOURCE_FILE)
        free(sr->file);
    else if (sr->source_case == CSCHED__V1__SECRET_REF__SOURCE_SERVER_ENV)
        free(sr->server_env);
    if (is_file) {
        sr->source_case = CSCHED__V1__SECRET_REF__SOURCE_FILE;
        sr->file = cs_cli_xstrdup(ref + 5);
    } else {
        sr->source_case = CSCHED__V1__SECRET_REF__SOURCE_SERVER_ENV;
        sr->server_env = cs_cli_xstrdup(ref + 4);
    }
    return 0;
}
