/* The parts of YAML job file parsing that jobfile.c (one job) and
 * jobfile_docs.c (the documents of a file) share. Single-threaded. */
#ifndef CS_CLI_JOBFILE_H
#define CS_CLI_JOBFILE_H

#include <yaml.h>

#include "cli.h"

/* The parse in progress: the document and where errors go. */
struct jf {
    yaml_document_t *doc;
    const char *name;
    char *err;
    size_t errlen;
};

/* The most entries a map of a job file (env, labels) may have: the most any
 * field of a request may hold on the server (server/wire_check.h). */
#define JF_MAP_ENTRIES_MAX 4096
/* The deepest nesting of lists and mappings a job file may have; a job
 * needs 4 ({jobs: [{labels: {}}]}). libyaml's scanner takes time growing
 * with the square of the depth. */
#define JF_DEPTH_MAX 64

/* Writes "NAME:LINE: message" (the node's line) to jf->err; returns -EINVAL. */
int jf_error(struct jf *jf, const yaml_node_t *node, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A scalar node's text. */
const char *jf_scalar(const yaml_node_t *node);

/* 0 if no key of the mapping node appears twice, else -EINVAL (jf->err). */
int jf_unique_keys(struct jf *jf, const yaml_node_t *node);

/* jobfile_value.c: a single value under key, or -EINVAL naming it; a
 * number written as one (not quoted); a whole number into *out; a string
 * into *out. */
int jf_want_scalar(struct jf *jf, const yaml_node_t *node, const char *key);
int jf_want_number(struct jf *jf, const yaml_node_t *node, const char *key);
int jf_u32(struct jf *jf, const yaml_node_t *node, const char *key, uint32_t *out);
int jf_u64(struct jf *jf, const yaml_node_t *node, const char *key, uint64_t *out);
int jf_string(struct jf *jf, const yaml_node_t *node, const char *key, char **out);
/* A list of strings under key, appended to (list, n); hint says
 * what else the key may not be. */
int jf_strings(struct jf *jf, const yaml_node_t *node, const char *key, const char *hint,
               char ***list, size_t *n);

/* The job's hooks: list (jobfile_hooks.c), appended to job->hooks. */
int jf_parse_hooks(struct jf *jf, const yaml_node_t *node, Csched__V1__Job *job);

/* The job's after: list (jobfile_after.c), appended to job->after. */
int jf_parse_after(struct jf *jf, const yaml_node_t *node, Csched__V1__Job *job);

/* Parses one job mapping into a new heap job. Returns 0 or -EINVAL. */
int jf_parse_job(struct jf *jf, const yaml_node_t *node, Csched__V1__Job **out);

#endif
