/* runas work: the NSS lookups behind cs_runas_resolve (getpwnam_r,
 * getgrnam_r, getgrouplist), which may block, so they run only in the
 * launch thread and on libuv's pool; and the pool's half of cs_runas_check
 * (see runas.h). No state: each call fills its own record. */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runas.h"

#define LOOKUP_BUF_FIRST 4096
#define LOOKUP_BUF_MAX (1 << 20)

/* Whether s is a numeric id: digits only, below 2^32 - 1 (which setuid()
 * and setgid() take as "leave it"); *id gets it. A name that is all digits
 * but too big is no id: it is looked up as a name and found nowhere. */
static bool numeric_id(const char *s, uint32_t *id)
{
    uint64_t v = 0;
    if (*s == '\0' || strlen(s) > 10)
        return false;
    for (; *s != '\0'; s++) {
        if (*s < '0' || *s > '9')
            return false;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    if (v >= UINT32_MAX)
        return false;
    *id = (uint32_t)v;
    return true;
}

/* One NSS entry by name or, for a number, by id. 0, -ENOENT, or -errno;
 * *buf (malloc'd, the caller frees it) holds the entry's strings. */
static int lookup_pw(const char *key, struct passwd *pw, char **buf)
{
    struct passwd *found = NULL;
    uint32_t id;
    bool by_id = numeric_id(key, &id);
    int rc = ERANGE;
    for (size_t cap = LOOKUP_BUF_FIRST; rc == ERANGE && cap <= LOOKUP_BUF_MAX; cap *= 2) {
        *buf = cs_xrealloc(*buf, cap);
        rc = by_id ? getpwuid_r((uid_t)id, pw, *buf, cap, &found)
                   : getpwnam_r(key, pw, *buf, cap, &found);
    }
    return rc != 0 ? -rc : found == NULL ? -ENOENT : 0;
}

static int lookup_gr(const char *key, struct group *gr, char **buf)
{
    struct group *found = NULL;
    uint32_t id;
    bool by_id = numeric_id(key, &id);
    int rc = ERANGE;
    for (size_t cap = LOOKUP_BUF_FIRST; rc == ERANGE && cap <= LOOKUP_BUF_MAX; cap *= 2) {
        *buf = cs_xrealloc(*buf, cap);
        rc = by_id ? getgrgid_r((gid_t)id, gr, *buf, cap, &found)
                   : getgrnam_r(key, gr, *buf, cap, &found);
    }
    return rc != 0 ? -rc : found == NULL ? -ENOENT : 0;
}

/* The user's groups from the group database, its own gid first. */
static void user_groups(const struct passwd *pw, struct cs_runas *out)
{
    int n = 32;
    gid_t *groups = NULL;
    for (;;) {
        int cap = n;
        groups = cs_xrealloc(groups, (size_t)cap * sizeof(gid_t));
        if (getgrouplist(pw->pw_name, pw->pw_gid, groups, &n) >= 0)
            break;
        if (n <= cap) /* no growth asked: take what was filled */
            break;
    }
    out->groups = cs_xmalloc((size_t)(n > 0 ? n : 1) * sizeof(uint32_t));
    for (int i = 0; i < n; i++)
        out->groups[i] = (uint32_t)groups[i];
    out->n_groups = (size_t)(n > 0 ? n : 0);
    free(groups);
}

/* cschedd's own user, for the message that refuses another one. */
static void self_name(char *name, size_t cap)
{
    char key[24], *buf = NULL;
    struct passwd pw;
    (void)snprintf(key, sizeof(key), "%u", (unsigned)geteuid());
    if (lookup_pw(key, &pw, &buf) == 0)
        (void)snprintf(name, cap, "%s", pw.pw_name);
    else
        (void)snprintf(name, cap, "no name");
    free(buf);
}

/* Not root: the job runs as cschedd, so it may only ask for that. */
static int check_self(const char *user, uid_t uid, const char *group, gid_t gid, struct cs_err *err)
{
    char self[CS_RUNAS_NAME_MAX];
    if (user[0] != '\0' && uid != geteuid()) {
        self_name(self, sizeof(self));
        return cs_err_set(err, -EBUSY,
                          "cschedd runs as uid %u (%s) and cannot start jobs as %s; run cschedd "
                          "as root or leave run_as_user empty",
                          (unsigned)geteuid(), self, user);
    }
    if (group[0] != '\0' && gid != getegid())
        return cs_err_set(err, -EBUSY,
                          "cschedd runs as gid %u and cannot start jobs in group %s; run cschedd "
                          "as root or leave run_as_group empty",
                          (unsigned)getegid(), group);
    return 0;
}

/* Finds the user: a name, or a number (with no entry allowed when a group
 * is given, as then nothing else is needed; *uid gets it). 0 or -EINVAL. */
static int find_user(const char *who, const char *field, bool need_entry, struct passwd *pw,
                     char **buf, bool *have_pw, uint32_t *uid, struct cs_err *err)
{
    int rc = lookup_pw(who, pw, buf);
    *have_pw = rc == 0;
    if (rc == 0 || (rc == -ENOENT && numeric_id(who, uid) && !need_entry))
        return 0;
    if (rc == -ENOENT)
        return cs_err_set(err, -EINVAL, "%s \"%.64s\": no such user%s", field, who,
                          numeric_id(who, uid) ? " (a numeric id without one needs run_as_group)"
                                               : "");
    /* Out of fds is the caller's to retry; anything else, the user's. */
    return cs_err_set(err, rc == -EMFILE || rc == -ENFILE ? rc : -EINVAL,
                      "%s \"%.64s\": the user lookup failed: %s", field, who, strerror(-rc));
}

/* The group's id: a name, or a number (with or without an entry). 0 or
 * -EINVAL, or -EMFILE/-ENFILE (err set). */
static int find_group(const char *group, gid_t *gid, struct cs_err *err)
{
    struct group gr;
    char *buf = NULL;
    uint32_t id;
    int rc = lookup_gr(group, &gr, &buf);
    if (rc == 0) {
        *gid = gr.gr_gid;
    } else if (rc == -ENOENT && numeric_id(group, &id)) {
        *gid = (gid_t)id;
        rc = 0;
    } else {
        rc = cs_err_set(err, rc == -EMFILE || rc == -ENFILE ? rc : -EINVAL,
                        "job.run_as_group \"%.64s\": %s", group,
                        rc == -ENOENT ? "no such group" : strerror(-rc));
    }
    free(buf);
    return rc;
}

int cs_runas_resolve(const char *user, const char *group, const char *default_user,
                     struct cs_runas *out, struct cs_err *err)
{
    struct passwd pw;
    char *pw_buf = NULL;
    bool root = geteuid() == 0, have_pw = false;
    const char *who = user, *field = "job.run_as_user";
    int rc = 0;

    memset(out, 0, sizeof(*out));
    if (root && who[0] == '\0') {
        field = "the default job user (--job-user)";
        who = default_user != NULL ? default_user : CS_RUNAS_DEFAULT_USER;
        if (default_user == NULL && lookup_pw(who, &pw, &pw_buf) == -ENOENT)
            who = CS_RUNAS_FALLBACK_USER;
    }
    uint32_t number = 0;
    if (who[0] != '\0')
        rc = find_user(who, field, group[0] == '\0', &pw, &pw_buf, &have_pw, &number, err);
    uid_t uid = have_pw ? pw.pw_uid : (uid_t)number;
    gid_t gid = have_pw ? pw.pw_gid : getegid();
    if (rc == 0 && group[0] != '\0')
        rc = find_group(group, &gid, err);
    /* -1 is "leave it" to setuid() and setgid(): never an id to run as,
     * even from a passwd entry. */
    if (rc == 0 && (uid == (uid_t)-1 || gid == (gid_t)-1))
        rc = cs_err_set(err, -EINVAL, "%s: id %u is not one a process can have", field,
                        (unsigned)-1);
    if (rc == 0 && !root)
        rc = check_self(user, uid, group, gid, err);
    if (rc != 0 || !root)
        goto out_free;
    out->drop = true;
    out->uid = uid;
    out->gid = gid;
    if (group[0] != '\0' || !have_pw) {
        out->groups = cs_xmalloc(sizeof(uint32_t));
        out->groups[0] = (uint32_t)gid;
        out->n_groups = 1;
    } else {
        user_groups(&pw, out);
    }
    (void)snprintf(out->user, sizeof(out->user), "%s", have_pw ? pw.pw_name : who);
    (void)snprintf(out->home, sizeof(out->home), "%s", have_pw ? pw.pw_dir : "/");

out_free:
    free(pw_buf);
    return rc;
}

void cs_runas_clear(struct cs_runas *r)
{
    free(r->groups);
    r->groups = NULL;
    r->n_groups = 0;
}

/* Sets one NAME=VALUE in *envp, replacing the variable if it is there. */
static void env_put(char ***envp, const char *name, const char *value)
{
    size_t n = 0, len = strlen(name);
    char *entry = cs_xmalloc(len + strlen(value) + 2);
    (void)sprintf(entry, "%s=%s", name, value);
    for (; (*envp)[n] != NULL; n++) {
        if (strncmp((*envp)[n], name, len) == 0 && (*envp)[n][len] == '=') {
            free((*envp)[n]);
            (*envp)[n] = entry;
            return;
        }
    }
    *envp = cs_xrealloc(*envp, (n + 2) * sizeof(char *));
    (*envp)[n] = entry;
    (*envp)[n + 1] = NULL;
}

void cs_runas_set_env(char ***envp, const struct cs_runas *r)
{
    env_put(envp, "HOME", r->home);
    env_put(envp, "USER", r->user);
    env_put(envp, "LOGNAME", r->user);
}

void cs_runas_check_work(uv_work_t *work)
{
    struct cs_runas_probe *p = work->data;
    struct cs_runas r;
    /* As root the empty user is the default one, resolved at each start. */
    if (geteuid() == 0 && p->user[0] == '\0' && p->group[0] == '\0')
        return;
    if (cs_runas_resolve(p->user, p->group, p->default_user, &r, &p->err) == 0)
        cs_runas_clear(&r);
}
