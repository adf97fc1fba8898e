/* audit_budget: the refusals recorded per caller and for unknown callers
 * together, per minute (see audit_budget.h). */
#include "audit_budget.h"

#include <stdio.h>
#include <string.h>

void cs_audit_budget_init(struct cs_audit_budget *b, uint64_t now_ms)
{
    memset(b, 0, sizeof(*b));
    b->minute = now_ms / CS_AUDIT_BUDGET_MINUTE_MS;
}

static void note_left_out(struct cs_audit_tally *t, const struct cs_audit_refusal *r)
{
    t->left_out++;
    (void)snprintf(t->method, sizeof(t->method), "%s", r->method);
    t->code = r->code;
}

static void summarise(const struct cs_audit_tally *t, const char *last_unknown,
                      cs_audit_summary_cb cb, void *arg)
{
    struct cs_audit_summary s = {
        .identity = last_unknown != NULL ? CS_AUDIT_BUDGET_ALL_UNKNOWN : t->identity,
        .method = t->method,
        .code = t->code,
        .left_out = t->left_out,
        .last_unknown = last_unknown,
    };
    cb(arg, &s);
}

/* Adds what t left out to the summary of all unknown callers. */
static void fold_unknown(struct cs_audit_budget *b, const struct cs_audit_tally *t)
{
    struct cs_audit_tally *all = &b->all_unknown;
    all->left_out += t->left_out;
    (void)snprintf(all->method, sizeof(all->method), "%s", t->method);
    all->code = t->code;
    (void)snprintf(all->identity, sizeof(all->identity), "%s", t->identity);
}

/* An unknown caller's summary is one more row of theirs: within their
 * budget it is written, past it counted with the rest. */
static void summarise_unknown(struct cs_audit_budget *b, const struct cs_audit_tally *t,
                              cs_audit_summary_cb cb, void *arg)
{
    if (b->all_unknown.recorded < CS_AUDIT_BUDGET_UNKNOWN) {
        b->all_unknown.recorded++;
        summarise(t, NULL, cb, arg);
    } else {
        fold_unknown(b, t);
    }
}

void cs_audit_budget_end(struct cs_audit_budget *b, cs_audit_summary_cb cb, void *arg)
{
    for (size_t i = 0; i < CS_AUDIT_BUDGET_CALLERS; i++) {
        if (b->known[i].left_out > 0)
            summarise(&b->known[i], NULL, cb, arg);
        if (b->unknown[i].left_out > 0)
            summarise_unknown(b, &b->unknown[i], cb, arg);
        b->known[i].recorded = b->unknown[i].recorded = 0;
        b->known[i].left_out = b->unknown[i].left_out = 0;
    }
    if (b->all_unknown.left_out > 0)
        summarise(&b->all_unknown, b->all_unknown.identity, cb, arg);
    memset(&b->all_unknown, 0, sizeof(b->all_unknown));
    b->left_out = false;
}

void cs_audit_budget_roll(struct cs_audit_budget *b, uint64_t now_ms, cs_audit_summary_cb cb,
                          void *arg)
{
    uint64_t minute = now_ms / CS_AUDIT_BUDGET_MINUTE_MS;
    if (minute <= b->minute)
        return;
    cs_audit_budget_end(b, cb, arg);
    b->minute = minute;
}

/* r's caller's tally, found or given the place of the one refused longest
 * ago, whose refusals left out are summarised first. */
static struct cs_audit_tally *tally_of(struct cs_audit_budget *b, const struct cs_audit_refusal *r,
                                       uint64_t now_ms, cs_audit_summary_cb cb, void *arg)
{
    struct cs_audit_tally *set = r->known ? b->known : b->unknown, *oldest = &set[0];
    for (size_t i = 0; i < CS_AUDIT_BUDGET_CALLERS; i++) {
        if (strcmp(set[i].identity, r->identity) == 0)
            return &set[i];
        if (set[i].last_ms < oldest->last_ms)
            oldest = &set[i];
    }
    if (oldest->left_out > 0 && r->known)
        summarise(oldest, NULL, cb, arg);
    else if (oldest->left_out > 0)
        fold_unknown(b, oldest);
    *oldest = (struct cs_audit_tally){.last_ms = now_ms};
    (void)snprintf(oldest->identity, sizeof(oldest->identity), "%s", r->identity);
    return oldest;
}

bool cs_audit_budget_take(struct cs_audit_budget *b, const struct cs_audit_refusal *r,
                          uint64_t now_ms, cs_audit_summary_cb cb, void *arg)
{
    cs_audit_budget_roll(b, now_ms, cb, arg);
    struct cs_audit_tally *t = tally_of(b, r, now_ms, cb, arg);
    t->last_ms = now_ms;
    if (t->recorded >= CS_AUDIT_BUDGET_PER_CALLER) {
        note_left_out(t, r);
        b->left_out = true;
        return false;
    }
    if (!r->known && b->all_unknown.recorded >= CS_AUDIT_BUDGET_UNKNOWN) {
        note_left_out(&b->all_unknown, r);
        (void)snprintf(b->all_unknown.identity, sizeof(b->all_unknown.identity), "%s", r->identity);
        b->left_out = true;
        return false;
    }
    t->recorded++;
    if (!r->known)
        b->all_unknown.recorded++;
    return true;
}

uint64_t cs_audit_budget_due_ms(const struct cs_audit_budget *b)
{
    return b->left_out ? (b->minute + 1) * CS_AUDIT_BUDGET_MINUTE_MS : 0;
}
