/* hook_spec: what job.hooks may hold, and the defaults of a hook's unset
 * fields. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "hook_spec.h"

/* A job with one valid hook: https, a file secret, one event. */
struct fixture {
    Csched__V1__Job job;
    Csched__V1__Hook hook, second;
    Csched__V1__Hook *hooks[2];
    Csched__V1__SecretRef secret;
    Csched__V1__HookEvent events[2];
};

static void fixture_init(struct fixture *f)
{
    memset(f, 0, sizeof(*f));
    csched__v1__job__init(&f->job);
    csched__v1__hook__init(&f->hook);
    csched__v1__secret_ref__init(&f->secret);
    f->job.name = "j";
    f->secret.source_case = CSCHED__V1__SECRET_REF__SOURCE_FILE;
    f->secret.file = "/etc/csched/hook.key";
    f->events[0] = CSCHED__V1__HOOK_EVENT__HOOK_EVENT_FAILED;
    f->hook.events = f->events;
    f->hook.n_events = 1;
    f->hook.url = "https://alerts.example/hook";
    f->hook.secret = &f->secret;
    f->second = f->hook;
    f->hooks[0] = &f->hook;
    f->hooks[1] = &f->second;
    f->job.hooks = f->hooks;
    f->job.n_hooks = 1;
}

static void expect_refused(struct fixture *f, const char *want)
{
    struct cs_err err = {0};
    assert_int_equal(cs_hooks_validate(&f->job, &err), -EINVAL);
    if (strstr(err.msg, want) == NULL)
        fail_msg("error '%s' does not contain '%s'", err.msg, want);
}

static void test_hook_spec_valid(void **state)
{
    struct fixture f;
    struct cs_err err = {0};
    char buf[32];

    fixture_init(&f);
    assert_int_equal(cs_hooks_validate(&f.job, &err), 0);
    f.hook.url = "http://127.0.0.1:8080/x";
    assert_int_equal(cs_hooks_validate(&f.job, &err), 0);
    assert_string_equal(cs_hook_name(&f.hook, 2, buf, sizeof(buf)), "hook-3");
    assert_int_equal(cs_hook_timeout_ms(&f.hook), CS_HOOK_TIMEOUT_DEFAULT_MS);
    assert_int_equal(cs_hook_max_attempts(&f.hook), CS_HOOK_ATTEMPTS_DEFAULT);
    assert_true(cs_hook_wants(&f.hook, CSCHED__V1__HOOK_EVENT__HOOK_EVENT_FAILED));
    assert_false(cs_hook_wants(&f.hook, CSCHED__V1__HOOK_EVENT__HOOK_EVENT_SUCCEEDED));
    assert_string_equal(cs_hook_event_name(CSCHED__V1__HOOK_EVENT__HOOK_EVENT_SLOT_SKIPPED),
                        "slot_skipped");
    assert_string_equal(cs_hook_event_name(99), "unknown");
}

/* Each rule, with a message naming the field. */
static void test_hook_spec_refused(void **state)
{
    struct fixture f;

    fixture_init(&f);
    f.hook.url = "http://alerts.example/hook";
    expect_refused(&f, "job.hooks[0].url");
    f.hook.url = "https://";
    expect_refused(&f, "must be an https:// URL");
    fixture_init(&f);
    f.hook.secret = NULL;
    expect_refused(&f, "job.hooks[0].secret names no source");
    f.hook.secret = &f.secret;
    f.secret.file = "relative/key";
    expect_refused(&f, "job.hooks[0].secret.file");
    f.secret.source_case = CSCHED__V1__SECRET_REF__SOURCE_SERVER_ENV;
    f.secret.server_env = "CSCHED_DATABASE_URL";
    expect_refused(&f, "one of cschedd's own settings");
    fixture_init(&f);
    f.hook.n_events = 0;
    expect_refused(&f, "job.hooks[0].events is empty");
    f.events[1] = f.events[0];
    f.hook.n_events = 2;
    expect_refused(&f, "names failed twice");
    f.events[1] = 42;
    expect_refused(&f, "42 is not a HookEvent");
    fixture_init(&f);
    f.hook.when = 7;
    expect_refused(&f, "job.hooks[0].when");
    fixture_init(&f);
    f.hook.timeout_ms = CS_HOOK_TIMEOUT_MAX_MS + 1;
    expect_refused(&f, "timeout_ms");
    fixture_init(&f);
    f.hook.max_attempts = CS_HOOK_ATTEMPTS_MAX + 1;
    expect_refused(&f, "max_attempts");
    fixture_init(&f);
    f.hook.ca_file = "ca.pem";
    expect_refused(&f, "ca_file");
    fixture_init(&f);
    f.hook.name = "-x";
    expect_refused(&f, "job.hooks[0].name");
    /* Two hooks whose names (one given, one by place) are the same. */
    fixture_init(&f);
    f.hook.name = "hook-2";
    f.job.n_hooks = 2;
    expect_refused(&f, "two hooks named hook-2");
    fixture_init(&f);
    f.job.n_hooks = CS_HOOKS_MAX + 1;
    expect_refused(&f, "the limit is 16");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hook_spec_valid),
        cmocka_unit_test(test_hook_spec_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
