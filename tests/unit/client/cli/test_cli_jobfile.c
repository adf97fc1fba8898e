/* Unit tests of csched's YAML job files (apply -f): a full valid file,
 * every error with the line it names, and hostile files refused at once. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "cli.h"
#include "test_cli_map.h"

static int parse(const char *text, Csched__V1__Job ***jobs, size_t *n, char *err, size_t errlen)
{
    return cs_cli_jobfile_parse("jobs.yaml", text, strlen(text), jobs, NULL, n, err, errlen);
}

/* Expects text to be refused with a message that contains want. */
static void expect_error(const char *text, const char *want)
{
    Csched__V1__Job **jobs = (void *)1;
    char err[512] = "";
    size_t n = 7;

    assert_int_equal(parse(text, &jobs, &n, err, sizeof(err)), -EINVAL);
    assert_null(jobs);
    assert_int_equal(n, 0);
    if (strstr(err, want) == NULL)
        fail_msg("error '%s' does not contain '%s'", err, want);
}

static void test_cli_jobfile_full(void **state)
{
    static const char text[] = "# two jobs\n"
                               "jobs:\n"
                               "  - name: build\n"
                               "    command: [make, -j2, \"all targets\"]\n"
                               "    env:\n"
                               "      CC: gcc\n"
                               "      EMPTY: \"\"\n"
                               "    working_dir: /src\n"
                               "    run_as_user: builder\n"
                               "    run_as_group: \"100\"\n"
                               "    max_running: 2\n"
                               "    timeout_seconds: 600\n"
                               "    max_attempts: 3\n"
                               "    retry_backoff_ms: 500\n"
                               "    labels: {team: core}\n"
                               "    trigger_env: [TARGET, REPORT_DATE]\n"
                               "  - name: report\n"
                               "    shell: |\n"
                               "      date\n"
                               "      echo done\n";
    Csched__V1__Job **jobs;
    char err[512];
    size_t n;

    assert_int_equal(parse(text, &jobs, &n, err, sizeof(err)), 0);
    assert_int_equal(n, 2);
    assert_string_equal(jobs[0]->name, "build");
    assert_int_equal(jobs[0]->n_command, 3);
    assert_string_equal(jobs[0]->command[2], "all targets");
    assert_string_equal(cs_test_map_get((void **)jobs[0]->env, jobs[0]->n_env, "CC"), "gcc");
    assert_string_equal(cs_test_map_get((void **)jobs[0]->env, jobs[0]->n_env, "EMPTY"), "");
    assert_string_equal(jobs[0]->working_dir, "/src");
    assert_string_equal(jobs[0]->run_as_user, "builder");
    assert_string_equal(jobs[0]->run_as_group, "100");
    assert_int_equal(jobs[0]->max_running, 2);
    assert_int_equal(jobs[0]->timeout_seconds, 600);
    assert_int_equal(jobs[0]->max_attempts, 3);
    assert_int_equal(jobs[0]->retry_backoff_ms, 500);
    assert_string_equal(cs_test_map_get((void **)jobs[0]->labels, jobs[0]->n_labels, "team"),
                        "core");
    assert_int_equal(jobs[0]->n_trigger_env, 2);
    assert_string_equal(jobs[0]->trigger_env[1], "REPORT_DATE");
    assert_string_equal(jobs[1]->name, "report");
    assert_string_equal(jobs[1]->shell, "date\necho done\n");
    assert_int_equal(jobs[1]->n_command, 0);
    cs_cli_jobs_free(jobs, n);
}

/* hooks: each hook's fields, events by name, the secret as a reference;
 * a typo in a key, an event or when is refused naming it. */
static void test_cli_jobfile_hooks(void **state)
{
    static const char text[] = "name: nightly\n"
                               "shell: ./backup.sh\n"
                               "hooks:\n"
                               "  - name: pager\n"
                               "    events: [failed, timed_out, lost]\n"
                               "    when: changed\n"
                               "    url: https://alerts.example/hook\n"
                               "    secret: file:/etc/csched/pager.key\n"
                               "    ca_file: /etc/csched/ca.pem\n"
                               "    timeout_ms: 5000\n"
                               "    max_attempts: 20\n"
                               "  - url: https://chat.example/hook\n"
                               "    events: [succeeded]\n"
                               "    secret: env:CHAT_HOOK_KEY\n";
    Csched__V1__Job **jobs;
    char err[512];
    size_t n;

    assert_int_equal(parse(text, &jobs, &n, err, sizeof(err)), 0);
    assert_int_equal(jobs[0]->n_hooks, 2);
    const Csched__V1__Hook *a = jobs[0]->hooks[0], *b = jobs[0]->hooks[1];
    assert_string_equal(a->name, "pager");
    assert_int_equal(a->n_events, 3);
    assert_int_equal(a->events[1], CSCHED__V1__HOOK_EVENT__HOOK_EVENT_TIMED_OUT);
    assert_int_equal(a->when, CSCHED__V1__HOOK_WHEN__HOOK_WHEN_CHANGED);
    assert_string_equal(a->url, "https://alerts.example/hook");
    assert_int_equal(a->secret->source_case, CSCHED__V1__SECRET_REF__SOURCE_FILE);
    assert_string_equal(a->secret->file, "/etc/csched/pager.key");
    assert_string_equal(a->ca_file, "/etc/csched/ca.pem");
    assert_int_equal(a->timeout_ms, 5000);
    assert_int_equal(a->max_attempts, 20);
    assert_string_equal(b->name, "");
    assert_int_equal(b->when, CSCHED__V1__HOOK_WHEN__HOOK_WHEN_ALWAYS);
    assert_string_equal(b->secret->server_env, "CHAT_HOOK_KEY");
    cs_cli_jobs_free(jobs, n);

    expect_error("name: a\nshell: x\nhooks:\n  - events: [failed, exploded]\n",
                 "jobs.yaml:4: hooks.events: 'exploded' is none of");
    expect_error("name: a\nshell: x\nhooks:\n  - when: sometimes\n",
                 "hooks.when: always or changed, not 'sometimes'");
    expect_error("name: a\nshell: x\nhooks:\n  - secret: hunter2\n",
                 "hooks.secret: the reference is file:/PATH or env:VAR");
    expect_error("name: a\nshell: x\nhooks:\n  - urll: https://x\n", "hooks: unknown key 'urll'");
    expect_error("name: a\nshell: x\nhooks: {url: https://x}\n", "hooks: must be a list");
}

/* after: a name alone or {job, on}, on as job files write it or as -o yaml
 * prints it (DEPENDENCY_ON_ANY); a bad on or key refused naming it. */
static void test_cli_jobfile_after(void **state)
{
    static const char text[] = "name: report\n"
                               "shell: ./report.sh\n"
                               "after:\n"
                               "  - extract\n"
                               "  - {job: load, on: failed}\n"
                               "  - job: tidy\n"
                               "    on: DEPENDENCY_ON_ANY\n";
    Csched__V1__Job **jobs;
    char err[512];
    size_t n;

    assert_int_equal(parse(text, &jobs, &n, err, sizeof(err)), 0);
    assert_int_equal(jobs[0]->n_after, 3);
    assert_string_equal(jobs[0]->after[0]->job, "extract");
    assert_int_equal(jobs[0]->after[0]->on, CSCHED__V1__DEPENDENCY_ON__DEPENDENCY_ON_SUCCEEDED);
    assert_string_equal(jobs[0]->after[1]->job, "load");
    assert_int_equal(jobs[0]->after[1]->on, CSCHED__V1__DEPENDENCY_ON__DEPENDENCY_ON_FAILED);
    assert_int_equal(jobs[0]->after[2]->on, CSCHED__V1__DEPENDENCY_ON__DEPENDENCY_ON_ANY);
    cs_cli_jobs_free(jobs, n);

    expect_error("name: a\nshell: x\nafter:\n  - {job: b, on: sometimes}\n",
                 "jobs.yaml:4: after.on: succeeded, failed or any, not 'sometimes'");
    expect_error("name: a\nshell: x\nafter:\n  - {jobb: b}\n", "after: unknown key 'jobb'");
    expect_error("name: a\nshell: x\nafter: b\n", "after: must be a list");
}

/* Several documents: {jobs: [...]}, a list, one job, an empty one; each
 * job keeps the line it starts on. */
/* resources: each limit read, an unknown one and a quoted number refused. */
static void test_cli_jobfile_resources(void **state)
{
    static const char text[] = "name: import\n"
                               "shell: import\n"
                               "resources:\n"
                               "  memory_bytes: 536870912\n"
                               "  cpu_seconds: 3600\n"
                               "  pids: 64\n"
                               "  open_files: 1024\n"
                               "  file_size: 10737418240\n"
                               "  cpu_millis: 1500\n";
    Csched__V1__Job **jobs;
    char err[512];
    size_t n;

    assert_int_equal(parse(text, &jobs, &n, err, sizeof(err)), 0);
    assert_int_equal(n, 1);
    const Csched__V1__ResourceLimits *r = jobs[0]->resources;
    assert_non_null(r);
    assert_int_equal(r->memory_bytes, 536870912);
    assert_int_equal(r->cpu_seconds, 3600);
    assert_int_equal(r->pids, 64);
    assert_int_equal(r->open_files, 1024);
    assert_int_equal(r->file_size, UINT64_C(10737418240));
    assert_int_equal(r->cpu_millis, 1500);
    cs_cli_jobs_free(jobs, n);
    expect_error("name: a\nshell: x\nresources: {memory: 1}\n",
                 "resources: unknown key 'memory' (known: memory_bytes");
    expect_error("name: a\nshell: x\nresources: {pids: \"4\"}\n",
                 "resources.pids: must be a number");
    expect_error("name: a\nshell: x\nresources: {file_size: -1}\n",
                 "resources.file_size: must be a whole number");
}

static void test_cli_jobfile_documents(void **state)
{
    static const char text[] = "jobs:\n"
                               "  - name: a\n"
                               "    shell: x\n"
                               "---\n"
                               "- name: b\n"
                               "  shell: x\n"
                               "---\n"
                               "---\n"
                               "name: c\n"
                               "command: [x]\n";
    Csched__V1__Job **jobs;
    unsigned *lines;
    char err[512];
    size_t n;

    assert_int_equal(
        cs_cli_jobfile_parse("jobs.yaml", text, strlen(text), &jobs, &lines, &n, err, sizeof(err)),
        0);
    assert_int_equal(n, 3);
    assert_string_equal(jobs[0]->name, "a");
    assert_string_equal(jobs[1]->name, "b");
    assert_string_equal(jobs[2]->name, "c");
    assert_int_equal(lines[0], 2);
    assert_int_equal(lines[1], 5);
    assert_int_equal(lines[2], 9);
    cs_cli_jobs_free(jobs, n);
    free(lines);
    expect_error("name: a\nshell: x\n---\n- name: a\n  shell: y\n",
                 "jobs.yaml:4: job 'a' appears twice (first on line 1)");
    expect_error("name: a\nshell: x\n---\njobs: [\n", "not valid YAML");
}

/* Numbers are numbers: a quoted one is a string, and refused. */
static void test_cli_jobfile_strict_types(void **state)
{
    expect_error("name: a\nshell: x\ntimeout_seconds: \"60\"\n",
                 "jobs.yaml:3: timeout_seconds: must be a number, not the string \"60\"");
    expect_error("name: a\nshell: x\nmax_running: '2'\n", "jobs.yaml:3: max_running: must be a");
    expect_error("name: a\nshell: x\nretry: {multiplier: \"2\"}\n",
                 "jobs.yaml:3: retry.multiplier: must be a number, not the string");
    expect_error("name: a\nshell: x\nschedule: \"@every 1h\"\nmax_catchup: \"3\"\n",
                 "jobs.yaml:4: max_catchup: must be a number");
}

static void test_cli_jobfile_structure_errors(void **state)
{
    expect_error("", "jobs.yaml: empty file");
    expect_error("jobs: [\n", "jobs.yaml:2: not valid YAML");
    expect_error("jobs:\n  - name: a\n   bad: indent\n", "not valid YAML");
    /* A list of jobs may stand alone; a string is no job. */
    expect_error("- a\n- b\n", "jobs.yaml:1: a job must be a mapping");
    expect_error("just words\n", "jobs.yaml:1: expected a job, a list of jobs or a mapping");
    /* A mapping without jobs is one job. */
    expect_error("jobz: []\n", "jobs.yaml:1: unknown key 'jobz'");
    expect_error("jobs: []\nextra: 1\n", "jobs.yaml:2: unknown key 'extra'");
    expect_error("jobs: {a: b}\n", "jobs.yaml:1: jobs: must be a list");
    expect_error("jobs: []\n", "jobs.yaml:1: jobs: the list is empty");
    expect_error("jobs:\n  - just a string\n", "jobs.yaml:2: a job must be a mapping");
    expect_error("jobs: []\njobs: []\n", "jobs.yaml:2: key 'jobs' appears twice");
}

static void test_cli_jobfile_job_errors(void **state)
{
    expect_error("jobs:\n  - name: a\n    command: [x]\n    comand: [y]\n",
                 "jobs.yaml:4: unknown key 'comand'");
    expect_error("jobs:\n  - command: [x]\n", "jobs.yaml:2: job without a name");
    expect_error("jobs:\n  - name: [a]\n    command: [x]\n", "jobs.yaml:2: name: must be a single");
    expect_error("jobs:\n  - name: a\n", "jobs.yaml:2: job 'a': give exactly one of command");
    expect_error("jobs:\n  - name: a\n    command: [x]\n    shell: y\n",
                 "job 'a': give exactly one of command");
    expect_error("jobs:\n  - name: a\n    command: echo hi\n",
                 "jobs.yaml:3: command: must be a list of strings");
    expect_error("jobs:\n  - name: a\n    command: []\n",
                 "jobs.yaml:3: command: must not be empty");
    expect_error("jobs:\n  - name: a\n    command:\n      - [nested]\n",
                 "jobs.yaml:4: command: each item must be a string");
    expect_error("jobs:\n  - name: a\n    shell: {x: 1}\n", "jobs.yaml:3: shell: must be a single");
    expect_error("jobs:\n  - name: a\n    shell: x\n    env: [A=1]\n",
                 "jobs.yaml:4: env: must be a mapping");
    expect_error("jobs:\n  - name: a\n    shell: x\n    env:\n      A: [1]\n",
                 "jobs.yaml:5: env: keys and values must be strings");
    expect_error("jobs:\n  - name: a\n    shell: x\n    labels:\n      \"\": v\n",
                 "jobs.yaml:5: labels: empty key");
    expect_error("jobs:\n  - name: a\n    shell: x\n    max_running: -1\n",
                 "jobs.yaml:4: max_running: must be a whole number");
    expect_error("jobs:\n  - name: a\n    shell: x\n    timeout_seconds: 1.5\n",
                 "timeout_seconds: must be a whole number");
    expect_error("jobs:\n  - name: a\n    shell: x\n    max_attempts: 99999999999\n",
                 "max_attempts: must be a whole number");
    expect_error("jobs:\n  - name: a\n    shell: x\n    retry_backoff_ms: soon\n",
                 "retry_backoff_ms: must be a whole number from 0 to 4294967295, not 'soon'");
    expect_error("jobs:\n  - name: a\n    shell: x\n    working_dir: [a]\n",
                 "working_dir: must be a single value");
    expect_error("jobs:\n  - name: a\n    shell: x\n    shell: y\n",
                 "jobs.yaml:4: key 'shell' appears twice");
    expect_error("jobs:\n  - name: a\n    shell: x\n  - name: a\n    shell: y\n",
                 "jobs.yaml:4: job 'a' appears twice");
    expect_error("jobs:\n  - name: a\n    shell: x\n    [k]: v\n", "job keys must be strings");
}

/* head, then n copies of unit, then n of tail: a heap string. */
static char *repeated(const char *head, const char *unit, const char *tail, size_t n)
{
    size_t hl = strlen(head), ul = strlen(unit), tl = strlen(tail);
    char *s = malloc(hl + n * (ul + tl) + 1), *p = s;

    assert_non_null(s);
    memcpy(p, head, hl);
    p += hl;
    for (size_t i = 0; i < n; i++, p += ul)
        memcpy(p, unit, ul);
    for (size_t i = 0; i < n; i++, p += tl)
        memcpy(p, tail, tl);
    *p = '\0';
    return s;
}

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Refused with want, well within the 30 s to a minute each took before
 * (libyaml's scanner is quadratic in the nesting, the key checks were in the
 * keys): 10 s leaves room for a sanitizer build on a busy machine, where
 * the refusal takes up to a second. */
#define PROMPT_REFUSAL_MAX_S 10.0

static void expect_prompt_error(char *text, const char *want)
{
    double t0 = now_s(), took_s;

    expect_error(text, want);
    took_s = now_s() - t0;
    free(text);
    if (took_s > PROMPT_REFUSAL_MAX_S)
        fail_msg("refusing '%s' took %.1f s", want, took_s);
}

static void test_cli_jobfile_hostile(void **state)
{
    char *text;
    size_t len;

    expect_prompt_error(repeated("jobs:\n  - name: a\n    command: ", "[", "]", 100000),
                        "jobs.yaml:3: nested deeper than 64 lists and mappings");
    expect_prompt_error(repeated("jobs:\n  - name: a\n    labels: ", "{a: ", "}", 100000),
                        "nested deeper than 64");
    /* 100000 keys, each unknown: the first is named, after a sort of all. */
    text = malloc(32 + 100000 * sizeof("x99999: 1\n"));
    assert_non_null(text);
    len = (size_t)sprintf(text, "name: a\nshell: x\n");
    for (int i = 0; i < 100000; i++)
        len += (size_t)sprintf(text + len, "x%d: 1\n", i);
    expect_prompt_error(text, "jobs.yaml:3: unknown key 'x0'");
    expect_prompt_error(repeated("name: a\nshell: x\nlabels:\n", "  k: v\n", "", 100000),
                        "jobs.yaml:4: labels: more than 4096 entries");
    /* Of two repeated keys, the one repeated first in the file is named. */
    expect_error("shell: x\nb: 1\na: 2\nname: n\nb: 3\na: 4\n",
                 "jobs.yaml:5: key 'b' appears twice");
    expect_error("shell: x\nb: 1\na: 2\nname: n\na: 3\nb: 4\n",
                 "jobs.yaml:5: key 'a' appears twice");
}

static void test_cli_jobfile_load(void **state)
{
    char path[] = "/tmp/test_cli_jobfile_XXXXXX";
    static const char text[] = "jobs:\n  - name: a\n    shell: 'true'\n";
    Csched__V1__Job **jobs;
    char err[512];
    size_t n;
    int fd;

    assert_int_equal(
        cs_cli_jobfile_load("/nonexistent/jobs.yaml", &jobs, NULL, &n, err, sizeof(err)), -ENOENT);
    assert_non_null(strstr(err, "cannot open /nonexistent/jobs.yaml"));

    fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, sizeof(text) - 1), (ssize_t)sizeof(text) - 1);
    close(fd);
    assert_int_equal(cs_cli_jobfile_load(path, &jobs, NULL, &n, err, sizeof(err)), 0);
    assert_int_equal(n, 1);
    assert_string_equal(jobs[0]->shell, "true");
    cs_cli_jobs_free(jobs, n);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cli_jobfile_full),
        cmocka_unit_test(test_cli_jobfile_resources),
        cmocka_unit_test(test_cli_jobfile_hooks),
        cmocka_unit_test(test_cli_jobfile_after),
        cmocka_unit_test(test_cli_jobfile_documents),
        cmocka_unit_test(test_cli_jobfile_strict_types),
        cmocka_unit_test(test_cli_jobfile_structure_errors),
        cmocka_unit_test(test_cli_jobfile_job_errors),
        cmocka_unit_test(test_cli_jobfile_hostile),
        cmocka_unit_test(test_cli_jobfile_load),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
