/* The documents of a YAML job file for "csched apply -f": each is a
 * mapping {jobs: [JOB, ...]}, a list of jobs, or one job (jobfile.c), and
 * a file holds any number of them, separated by "---". Every job keeps the
 * line it starts on, so that what the server says of it can name its place.
 *
 * Single-threaded; uses libyaml's document API (the whole file is small).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "jobfile.h"

/* The jobs found so far, with the line each starts on. */
struct found {
    Csched__V1__Job **jobs;
    unsigned *lines;
    size_t n, cap;
};

static int add_job(struct jf *jf, struct found *fd, const yaml_node_t *node)
{
    Csched__V1__Job *job;

    if (jf_parse_job(jf, node, &job) != 0)
        return -EINVAL;
    for (size_t j = 0; j < fd->n; j++) {
        if (strcmp(fd->jobs[j]->name, job->name) == 0) {
            jf_error(jf, node, "job '%s' appears twice (first on line %u)", job->name,
                     fd->lines[j]);
            csched__v1__job__free_unpacked(job, NULL);
            return -EINVAL;
        }
    }
    if (fd->n == fd->cap) {
        size_t cap = fd->cap ? fd->cap * 2 : 8;
        Csched__V1__Job **jobs = cs_cli_xcalloc(cap, sizeof(*jobs));
        unsigned *lines = cs_cli_xcalloc(cap, sizeof(*lines));

        if (fd->n > 0) {
            memcpy(jobs, fd->jobs, fd->n * sizeof(*jobs));
            memcpy(lines, fd->lines, fd->n * sizeof(*lines));
        }
        free(fd->jobs);
        free(fd->lines);
        fd->jobs = jobs;
        fd->lines = lines;
        fd->cap = cap;
    }
    fd->jobs[fd->n] = job;
    fd->lines[fd->n++] = (unsigned)node->start_mark.line + 1;
    return 0;
}

static int add_list(struct jf *jf, struct found *fd, const yaml_node_t *list)
{
    if (list->type != YAML_SEQUENCE_NODE)
        return jf_error(jf, list, "jobs: must be a list of jobs");
    if (list->data.sequence.items.top == list->data.sequence.items.start)
        return jf_error(jf, list, "jobs: the list is empty");
    for (yaml_node_item_t *it = list->data.sequence.items.start; it < list->data.sequence.items.top;
         it++) {
        if (add_job(jf, fd, yaml_document_get_node(jf->doc, *it)) != 0)
            return -EINVAL;
    }
    return 0;
}

/* One document: {jobs: [...]}, a list of jobs, or one job. */
static int add_document(struct jf *jf, struct found *fd, const yaml_node_t *root)
{
    yaml_node_t *list = NULL, *other = NULL;

    if (root->type == YAML_SEQUENCE_NODE)
        return add_list(jf, fd, root);
    if (root->type != YAML_MAPPING_NODE)
        return jf_error(jf, root,
                        "expected a job, a list of jobs or a mapping with the key 'jobs'");
    if (jf_unique_keys(jf, root) != 0)
        return -EINVAL;
    for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = yaml_document_get_node(jf->doc, p->key);

        if (k->type == YAML_SCALAR_NODE && strcmp(jf_scalar(k), "jobs") == 0)
            list = yaml_document_get_node(jf->doc, p->value);
        else
            other = k;
    }
    if (list == NULL)
        return add_job(jf, fd, root);
    if (other != NULL)
        return jf_error(jf, other, "unknown key '%s' (beside 'jobs', a document holds nothing)",
                        other->type == YAML_SCALAR_NODE ? jf_scalar(other) : "?");
    return add_list(jf, fd, list);
}

/* An empty document ("---" with nothing after it) adds nothing. */
static bool empty_document(const yaml_node_t *root)
{
    return root->type == YAML_SCALAR_NODE && root->data.scalar.length == 0 &&
           root->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
}

/* Refuses a text nested deeper than JF_DEPTH_MAX, reading its events only
 * that far; anything else wrong is left for the loader to name. */
static int check_depth(const char *name, const char *text, size_t len, char *err, size_t errlen)
{
    yaml_parser_t parser;
    yaml_event_t event;
    int depth = 0, rc = 0;
    bool more = true;

    if (!yaml_parser_initialize(&parser)) {
        snprintf(err, errlen, "%s: out of memory", name);
        return -ENOMEM;
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    while (more && rc == 0 && yaml_parser_parse(&parser, &event)) {
        if (event.type == YAML_SEQUENCE_START_EVENT || event.type == YAML_MAPPING_START_EVENT)
            depth++;
        else if (event.type == YAML_SEQUENCE_END_EVENT || event.type == YAML_MAPPING_END_EVENT)
            depth--;
        if (depth > JF_DEPTH_MAX) {
            snprintf(err, errlen, "%s:%lu: nested deeper than %d lists and mappings", name,
                     (unsigned long)event.start_mark.line + 1, JF_DEPTH_MAX);
            rc = -EINVAL;
        }
        more = event.type != YAML_STREAM_END_EVENT;
        yaml_event_delete(&event);
    }
    yaml_parser_delete(&parser);
    return rc;
}

int cs_cli_jobfile_parse(const char *name, const char *text, size_t len, Csched__V1__Job ***jobs,
                         unsigned **lines, size_t *n, char *err, size_t errlen)
{
    struct jf jf = {.name = name, .err = err, .errlen = errlen};
    struct found fd = {0};
    yaml_parser_t parser;
    yaml_document_t doc;
    int rc = 0;

    *jobs = NULL;
    *n = 0;
    if ((rc = check_depth(name, text, len, err, errlen)) != 0)
        return rc;
    if (!yaml_parser_initialize(&parser)) {
        snprintf(err, errlen, "%s: out of memory", name);
        return -ENOMEM;
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    for (;;) {
        yaml_node_t *root;

        if (!yaml_parser_load(&parser, &doc)) {
            snprintf(err, errlen, "%s:%lu: not valid YAML: %s", name,
                     (unsigned long)parser.problem_mark.line + 1,
                     parser.problem ? parser.problem : "syntax error");
            rc = -EINVAL;
            break;
        }
        root = yaml_document_get_root_node(&doc);
        jf.doc = &doc;
        if (root != NULL && !empty_document(root))
            rc = add_document(&jf, &fd, root);
        yaml_document_delete(&doc);
        if (root == NULL || rc != 0)
            break;
    }
    yaml_parser_delete(&parser);
    if (rc == 0 && fd.n == 0) {
        snprintf(err, errlen, "%s: empty file: expected jobs ('jobs:' with a list, or a job)",
                 name);
        rc = -EINVAL;
    }
    if (rc != 0) {
        cs_cli_jobs_free(fd.jobs, fd.n);
        free(fd.lines);
        return rc;
    }
    *jobs = fd.jobs;
    *n = fd.n;
    if (lines != NULL)
        *lines = fd.lines;
    else
        free(fd.lines);
    return 0;
}

int cs_cli_jobfile_load(const char *path, Csched__V1__Job ***jobs, unsigned **lines, size_t *n,
                        char *err, size_t errlen)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
    char *buf = NULL;
    size_t len = 0, cap = 0;
    int rc;

    if (f == NULL) {
        rc = -errno;
        snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
        return rc;
    }
    for (;;) {
        size_t got;

        if (cap - len < 4096) {
            char *grown = realloc(buf, cap ? cap * 2 : 8192);

            if (grown == NULL) {
                rc = -ENOMEM;
                snprintf(err, errlen, "%s: out of memory", path);
                goto out_close;
            }
            buf = grown;
            cap = cap ? cap * 2 : 8192;
        }
        got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0)
            break;
    }
    if (ferror(f)) {
        rc = -EIO;
        snprintf(err, errlen, "cannot read %s", path);
        goto out_close;
    }
    rc = cs_cli_jobfile_parse(path, buf, len, jobs, lines, n, err, errlen);
out_close:
    free(buf);
    if (f != stdin)
        fclose(f);
    return rc;
}

void cs_cli_jobs_free(Csched__V1__Job **jobs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        csched__v1__job__free_unpacked(jobs[i], NULL);
    free(jobs);
}
