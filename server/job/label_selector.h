/* label_selector: Kubernetes' label selectors (env=prod,tier!=web,
 * zone in (a,b),!legacy), parsed once per list call and matched against
 * each job's labels. Pure code, any thread. */
#ifndef CS_LABEL_SELECTOR_H
#define CS_LABEL_SELECTOR_H

#include <stdbool.h>
#include <stddef.h>

#include "job.h"

/* The longest selector a request may carry: each term is tried on every job
 * a list walks. */
#define CS_LABEL_SELECTOR_BYTES_MAX 4096

enum cs_selector_op {
    CS_SELECTOR_EQ,     /* key=value, key==value */
    CS_SELECTOR_NE,     /* key!=value: also a job without the key */
    CS_SELECTOR_IN,     /* key in (a,b) */
    CS_SELECTOR_NOTIN,  /* key notin (a,b): also a job without the key */
    CS_SELECTOR_HAS,    /* key */
    CS_SELECTOR_HAS_NOT /* !key */
};

struct cs_selector_term {
    enum cs_selector_op op;
    const char *key;     /* into the selector's text */
    const char **values; /* EQ and NE: one; IN and NOTIN: one or more */
    size_t n_values;
};

/* Terms that must all hold; none matches every job. Owns text and terms. */
struct cs_label_selector {
    char *text; /* a copy of the request's, its words ended by NULs */
    struct cs_selector_term *terms;
    size_t n_terms;
};

/* Parses text into sel (freed with cs_label_selector_free, also after a
 * failure). -EINVAL with err naming field and the term that is not one. */
int cs_label_selector_parse(struct cs_label_selector *sel, const char *text, const char *field,
                            struct cs_err *err);
/* Whether labels (a map<string, string>'s entries) satisfy every term. */
bool cs_label_selector_matches(const struct cs_label_selector *sel, struct cs_kv *const *labels,
                               size_t n);
/* Whether spec's labels satisfy every term. */
bool cs_label_selector_matches_job(const struct cs_label_selector *sel,
                                   const Csched__V1__Job *spec);
void cs_label_selector_free(struct cs_label_selector *sel);

#endif
