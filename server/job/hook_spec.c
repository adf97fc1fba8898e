/* hook_spec: the rules of job.hooks (see hook_spec.h). */
#include "hook_spec.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "secret.h"

static bool name_ok(const char *s)
{
    size_t n = strlen(s);

    if (n == 0 || n > CS_HOOK_NAME_MAX || s[0] == '.' || s[0] == '-')
        return false;
    return strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") == n;
}

/* http:// is taken only to this machine's loopback, where nothing crosses a
 * network: a test endpoint, or a local relay. */
static bool url_ok(const char *url)
{
    static const char *const loopback[] = {"http://127.0.0.1:", "http://127.0.0.1/",
                                           "http://localhost:", "http://localhost/",
                                           "http://[::1]:",     "http://[::1]/"};

    if (strncasecmp(url, "https://", 8) == 0)
        return url[8] != '\0' && url[8] != '/';
    for (size_t i = 0; i < CS_ARRAY_LEN(loopback); i++)
        if (strncasecmp(url, loopback[i], strlen(loopback[i])) == 0)
            return true;
    return false;
}

/* The limits every hook has; its timeout's is its kind's. */
static int validate_bounds(const Csched__V1__Hook *h, size_t i, struct cs_err *err)
{
    uint32_t timeout_max_ms =
        cs_hook_is_command(h) ? CS_HOOK_COMMAND_TIMEOUT_MAX_MS : CS_HOOK_TIMEOUT_MAX_MS;

    if (h->timeout_ms > timeout_max_ms)
        return cs_err_set(
            err, -EINVAL, "job.hooks[%zu].timeout_ms %u is over the limit of %u for a %s", i,
            h->timeout_ms, timeout_max_ms, cs_hook_is_command(h) ? "command hook" : "webhook");
    if (h->max_attempts > CS_HOOK_ATTEMPTS_MAX)
        return cs_err_set(err, -EINVAL, "job.hooks[%zu].max_attempts %u is over the limit of %d", i,
                          h->max_attempts, CS_HOOK_ATTEMPTS_MAX);
    return 0;
}

/* A command hook: a command or a shell, not both, and nothing of a
 * webhook's (no url, secret or ca_file). */
static int validate_command(const Csched__V1__Hook *h, size_t i, struct cs_err *err)
{
    if (h->n_command > 0 && h->shell[0] != '\0')
        return cs_err_set(err, -EINVAL, "job.hooks[%zu] has both command and shell: use one", i);
    if (h->url[0] != '\0' || h->secret != NULL || h->ca_file[0] != '\0')
        return cs_err_set(err, -EINVAL,
                          "job.hooks[%zu] has a command and a url, secret or ca_file: a hook is "
                          "a webhook (url, secret) or a command, not both",
                          i);
    if (h->n_command > 0 && h->command[0][0] == '\0')
        return cs_err_set(err, -EINVAL, "job.hooks[%zu].command[0] is empty: name a program", i);
    if (h->n_command > CS_HOOK_COMMAND_ARGS_MAX)
        return cs_err_set(err, -EINVAL, "job.hooks[%zu].command has %zu arguments; the limit is %d",
                          i, h->n_command, CS_HOOK_COMMAND_ARGS_MAX);
    size_t total = strlen(h->shell);
    for (size_t a = 0; a < h->n_command; a++)
        total += strlen(h->command[a]) + 1;
    if (total > CS_HOOK_COMMAND_BYTES_MAX)
        return cs_err_set(err, -EINVAL, "job.hooks[%zu]'s command is %zu bytes; the limit is %d", i,
                          total, CS_HOOK_COMMAND_BYTES_MAX);
    return validate_bounds(h, i, err);
}

static int validate_one(const Csched__V1__Hook *h, size_t i, struct cs_err *err)
{
    char field[64];

    if (h->name[0] != '\0' && !name_ok(h->name))
        return cs_err_set(err, -EINVAL,
                          "job.hooks[%zu].name \"%.80s\": use 1-%d of [A-Za-z0-9._-], not "
                          "starting with '.' or '-'",
                          i, h->name, CS_HOOK_NAME_MAX);
    if (h->n_events == 0)
        return cs_err_set(err, -EINVAL,
                          "job.hooks[%zu].events is empty: name at least one of started, "
                          "succeeded, failed, timed_out, lost, cancelled, slot_skipped",
                          i);
    for (size_t e = 0; e < h->n_events; e++) {
        if (h->events[e] <= CSCHED__V1__HOOK_EVENT__HOOK_EVENT_UNSPECIFIED ||
            h->events[e] > CSCHED__V1__HOOK_EVENT__HOOK_EVENT_SLOT_SKIPPED)
            return cs_err_set(err, -EINVAL, "job.hooks[%zu].events[%zu]: %d is not a HookEvent", i,
                              e, (int)h->events[e]);
        for (size_t f = 0; f < e; f++)
            if (h->events[f] == h->events[e])
                return cs_err_set(err, -EINVAL, "job.hooks[%zu].events names %s twice", i,
                                  cs_hook_event_name(h->events[e]));
    }
    if (h->when != CSCHED__V1__HOOK_WHEN__HOOK_WHEN_ALWAYS &&
        h->when != CSCHED__V1__HOOK_WHEN__HOOK_WHEN_CHANGED)
        return cs_err_set(err, -EINVAL, "job.hooks[%zu].when: %d is not a HookWhen", i,
                          (int)h->when);
    if (cs_hook_is_command(h))
        return validate_command(h, i, err);
    if (strlen(h->url) > CS_HOOK_URL_MAX || !url_ok(h->url))
        return cs_err_set(err, -EINVAL,
                          "job.hooks[%zu].url \"%.100s\" must be an https:// URL of at most %d "
                          "bytes (http:// only to 127.0.0.1, localhost or [::1])",
                          i, h->url, CS_HOOK_URL_MAX);
    (void)snprintf(field, sizeof(field), "job.hooks[%zu].secret", i);
    int rc = cs_secret_ref_validate(field, h->secret, err);
    if (rc != 0)
        return rc;
    if (h->ca_file[0] != '\0' && (h->ca_file[0] != '/' || strlen(h->ca_file) >= CS_SECRET_PATH_MAX))
        return cs_err_set(err, -EINVAL,
                          "job.hooks[%zu].ca_file \"%.100s\" must be an absolute path", i,
                          h->ca_file);
    return validate_bounds(h, i, err);
}

int cs_hooks_validate(const Csched__V1__Job *spec, struct cs_err *err)
{
    char a[CS_HOOK_NAME_MAX + 16], b[CS_HOOK_NAME_MAX + 16];

    if (spec->n_hooks > CS_HOOKS_MAX)
        return cs_err_set(err, -EINVAL, "job.hooks has %zu entries; the limit is %d", spec->n_hooks,
                          CS_HOOKS_MAX);
    for (size_t i = 0; i < spec->n_hooks; i++) {
        int rc = validate_one(spec->hooks[i], i, err);
        if (rc != 0)
            return rc;
        for (size_t j = 0; j < i; j++)
            if (strcmp(cs_hook_name(spec->hooks[i], i, a, sizeof(a)),
                       cs_hook_name(spec->hooks[j], j, b, sizeof(b))) == 0)
                return cs_err_set(err, -EINVAL, "job.hooks has two hooks named %s", a);
    }
    return 0;
}

bool cs_hook_is_command(const Csched__V1__Hook *hook)
{
    return hook->n_command > 0 || hook->shell[0] != '\0';
}

const char *cs_hook_name(const Csched__V1__Hook *hook, size_t i, char *buf, size_t cap)
{
    if (hook->name[0] != '\0')
        return hook->name;
    (void)snprintf(buf, cap, "hook-%zu", i + 1);
    return buf;
}

uint32_t cs_hook_timeout_ms(const Csched__V1__Hook *hook)
{
    return hook->timeout_ms != 0 ? hook->timeout_ms : CS_HOOK_TIMEOUT_DEFAULT_MS;
}

uint32_t cs_hook_max_attempts(const Csched__V1__Hook *hook)
{
    return hook->max_attempts != 0 ? hook->max_attempts : CS_HOOK_ATTEMPTS_DEFAULT;
}

bool cs_hook_wants(const Csched__V1__Hook *hook, Csched__V1__HookEvent event)
{
    for (size_t i = 0; i < hook->n_events; i++)
        if (hook->events[i] == event)
            return true;
    return false;
}

const char *cs_hook_event_name(Csched__V1__HookEvent event)
{
    static const char *const names[] = {
        [CSCHED__V1__HOOK_EVENT__HOOK_EVENT_STARTED] = "started",
        [CSCHED__V1__HOOK_EVENT__HOOK_EVENT_SUCCEEDED] = "succeeded",
        [CSCHED__V1__HOOK_EVENT__HOOK_EVENT_FAILED] = "failed",
        [CSCHED__V1__HOOK_EVENT__HOOK_EVENT_TIMED_OUT] = "timed_out",
        [CSCHED__V1__HOOK_EVENT__HOOK_EVENT_LOST] = "lost",
        [CSCHED__V1__HOOK_EVENT__HOOK_EVENT_CANCELLED] = "cancelled",
        [CSCHED__V1__HOOK_EVENT__HOOK_EVENT_SLOT_SKIPPED] = "slot_skipped",
    };

    if (event <= 0 || (size_t)event >= CS_ARRAY_LEN(names))
        return "unknown";
    return names[event];
}
