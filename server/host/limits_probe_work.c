/* limits_probe: the cgroups this host offers for the jobs' limits (see
 * limits_probe.h). Reads /proc/self/cgroup and /proc/self/mountinfo, makes
 * the "csched" parent directories, and writes cgroup.subtree_control.
 * Blocking: run once by main before the loop. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "limits_probe.h"

/* The name of the directory below which the attempts' cgroups are made. */
#define PARENT_NAME "csched"

/* Where one hierarchy is mounted, and the cgroup cschedd is in there. */
struct hierarchy {
    char mount[128];
    char path[384]; /* from /proc/self/cgroup, relative to the mount's root */
};

/* Whether the comma-separated list has word. */
static bool has_word(const char *list, const char *word)
{
    size_t len = strlen(word);
    for (const char *p = list; (p = strstr(p, word)) != NULL; p += len)
        if ((p == list || p[-1] == ',') && (p[len] == ',' || p[len] == '\0' || p[len] == ' '))
            return true;
    return false;
}

/* The mount point of the cgroup2 file system (kind NULL) or of the v1
 * hierarchy with controller kind, from /proc/self/mountinfo. */
static bool find_mount(const char *kind, char *mount, size_t cap)
{
    char line[1024], point[128], fstype[32], opts[512];
    FILE *f = fopen("/proc/self/mountinfo", "re");
    bool found = false;

    if (f == NULL)
        return false;
    while (!found && fgets(line, sizeof(line), f) != NULL) {
        const char *dash = strstr(line, " - ");
        if (dash == NULL || sscanf(line, "%*s %*s %*s %*s %127s", point) != 1 ||
            sscanf(dash, " - %31s %*s %511s", fstype, opts) != 2)
            continue;
        if (kind == NULL ? strcmp(fstype, "cgroup2") == 0
                         : strcmp(fstype, "cgroup") == 0 && has_word(opts, kind))
            found = snprintf(mount, cap, "%s", point) < (int)cap;
    }
    (void)fclose(f); /* read only */
    return found;
}

/* cschedd's cgroup in the v2 hierarchy (kind NULL) or in the v1 one with
 * controller kind, from /proc/self/cgroup ("ID:CONTROLLERS:PATH"). */
static bool find_path(const char *kind, char *path, size_t cap)
{
    char line[1024];
    FILE *f = fopen("/proc/self/cgroup", "re");
    bool found = false;

    if (f == NULL)
        return false;
    while (!found && fgets(line, sizeof(line), f) != NULL) {
        char *controllers = strchr(line, ':');
        char *p = controllers != NULL ? strchr(controllers + 1, ':') : NULL;
        if (p == NULL)
            continue;
        *p++ = '\0';
        p[strcspn(p, "\n")] = '\0';
        if (kind == NULL ? controllers[1] == '\0' : has_word(controllers + 1, kind))
            found = snprintf(path, cap, "%s", p) < (int)cap;
    }
    (void)fclose(f);
    return found;
}

static bool find(const char *kind, struct hierarchy *h)
{
    return find_mount(kind, h->mount, sizeof(h->mount)) &&
           find_path(kind, h->path, sizeof(h->path));
}

/* Writes text to dir/name; 0 or -errno. */
static int write_file(const char *dir, const char *name, const char *text)
{
    char path[640];
    FILE *f;
    int rc = 0;

    (void)snprintf(path, sizeof(path), "%s/%s", dir, name);
    f = fopen(path, "we");
    if (f == NULL)
        return -errno;
    if (fputs(text, f) < 0)
        rc = -errno;
    if (fclose(f) != 0 && rc == 0) /* the cgroup file's write happens here */
        rc = -errno;
    return rc;
}

/* Reads dir/name's first line into buf; 0 or -errno. */
static int read_line(const char *dir, const char *name, char *buf, size_t cap)
{
    char path[640];
    FILE *f;

    (void)snprintf(path, sizeof(path), "%s/%s", dir, name);
    f = fopen(path, "re");
    if (f == NULL)
        return -errno;
    if (fgets(buf, (int)cap, f) == NULL)
        buf[0] = '\0';
    buf[strcspn(buf, "\n")] = '\0';
    (void)fclose(f);
    return 0;
}

/* Makes dir/csched (there already is fine) into out; 0 or -errno. */
static int make_parent(const char *dir, char *out, size_t cap)
{
    if (snprintf(out, cap, "%s/" PARENT_NAME, dir) >= (int)cap)
        return -ENAMETOOLONG;
    if (mkdir(out, 0755) < 0 && errno != EEXIST) {
        int rc = -errno;
        out[0] = '\0';
        return rc;
    }
    return 0;
}

/* Enables the controllers below base (cschedd's cgroup or, when that holds
 * processes, as cgroup v2 forbids, its parent) and makes csched there. */
static int try_v2_at(const char *base, const char *enable, struct cs_cgroup_parents *out, char *why,
                     size_t cap)
{
    char parent[sizeof(out->v2)];
    int rc = write_file(base, "cgroup.subtree_control", enable);

    if (rc == 0)
        rc = make_parent(base, parent, sizeof(parent));
    if (rc == 0)
        rc = write_file(parent, "cgroup.subtree_control", enable);
    if (rc < 0) {
        (void)snprintf(why, cap, "cgroup v2 at %s: %s", base, strerror(-rc));
        return rc;
    }
    (void)snprintf(out->v2, sizeof(out->v2), "%s", parent);
    return 0;
}

static void probe_v2(struct cs_cgroup_parents *out, char *why, size_t cap)
{
    struct hierarchy h;
    char dir[sizeof(h.mount) + sizeof(h.path)], controllers[256], *slash;

    if (!find(NULL, &h)) {
        (void)snprintf(why, cap, "no cgroup v2 hierarchy");
        return;
    }
    (void)snprintf(dir, sizeof(dir), "%s%s", h.mount, strcmp(h.path, "/") == 0 ? "" : h.path);
    if (read_line(dir, "cgroup.controllers", controllers, sizeof(controllers)) < 0 ||
        !has_word(controllers, "memory") || !has_word(controllers, "pids")) {
        (void)snprintf(why, cap, "cgroup v2 at %s has no memory and pids controllers (it has: %s)",
                       dir, controllers[0] != '\0' ? controllers : "none");
        return;
    }
    out->v2_cpu = has_word(controllers, "cpu");
    const char *enable = out->v2_cpu ? "+memory +pids +cpu" : "+memory +pids";
    if (try_v2_at(dir, enable, out, why, cap) == 0)
        return;
    /* systemd's DelegateSubgroup= puts cschedd in a leaf below the
     * delegated cgroup, whose other children are ours to make. */
    slash = strrchr(dir, '/');
    if (slash != NULL && (size_t)(slash - dir) >= strlen(h.mount)) {
        *slash = '\0';
        char why_parent[1024];
        if (try_v2_at(dir, enable, out, why_parent, sizeof(why_parent)) == 0)
            return;
    }
    out->v2_cpu = false;
}

/* A writable v1 hierarchy with controller kind: its csched dir in parent. */
static void probe_v1(const char *kind, char *parent, size_t parent_cap, char *why, size_t cap)
{
    struct hierarchy h;
    char dir[sizeof(h.mount) + sizeof(h.path)];
    int rc;

    if (!find(kind, &h)) {
        (void)snprintf(why, cap, "no cgroup v1 %s hierarchy", kind);
        return;
    }
    (void)snprintf(dir, sizeof(dir), "%s%s", h.mount, strcmp(h.path, "/") == 0 ? "" : h.path);
    rc = make_parent(dir, parent, parent_cap);
    if (rc < 0)
        (void)snprintf(why, cap, "cgroup v1 %s at %s: %s", kind, dir, strerror(-rc));
}

void cs_limits_probe(struct cs_cgroup_parents *out, char *mechanism, size_t cap)
{
    char why_v2[1024] = "", why_memory[1024] = "", why_pids[1024] = "";
    const char *rlimits = "rlimits (cpu_seconds, open_files, file_size; memory_bytes as "
                          "RLIMIT_AS without a memory cgroup)";

    *out = (struct cs_cgroup_parents){0};
    probe_v2(out, why_v2, sizeof(why_v2));
    if (out->v2[0] != '\0') {
        (void)snprintf(mechanism, cap, "cgroup v2 at %s (memory, pids%s) + %s", out->v2,
                       out->v2_cpu ? ", cpu" : "", rlimits);
        return;
    }
    probe_v1("memory", out->v1_memory, sizeof(out->v1_memory), why_memory, sizeof(why_memory));
    probe_v1("pids", out->v1_pids, sizeof(out->v1_pids), why_pids, sizeof(why_pids));
    (void)snprintf(mechanism, cap, "cgroup v1 (memory: %s; pids: %s) + %s; cgroup v2 not used: %s",
                   out->v1_memory[0] != '\0' ? out->v1_memory : why_memory,
                   out->v1_pids[0] != '\0' ? out->v1_pids : why_pids, rlimits, why_v2);
}
