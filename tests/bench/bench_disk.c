/* bench_disk: the D line, which file system the temp dirs are on. On ext4
 * without a journal every inode allocated skips the block group's recently
 * freed inodes one by one, so each run of a benchmark there slows the next
 * (tests/bench/README.md, "Why not /tmp"): comparisons of builds belong on a
 * journaled file system. */
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "bench.h"

/* The ext4 device under path ("vda", "loop0") into name; false if path is
 * not on ext4 or its mount is not found. */
static bool ext4_device(const char *path, char *name, size_t cap)
{
    struct stat st;
    char line[4096], want[32];
    bool found = false;

    if (stat(path, &st) != 0)
        return false;
    snprintf(want, sizeof(want), "%u:%u", major(st.st_dev), minor(st.st_dev));
    FILE *f = fopen("/proc/self/mountinfo", "r");
    if (f == NULL)
        return false;
    while (!found && fgets(line, sizeof(line), f) != NULL) {
        char dev[32], type[64], source[1024];
        /* id parent maj:min root point options [optional...] - type source */
        const char *dash = strstr(line, " - ");
        if (dash == NULL || sscanf(line, "%*s %*s %31s", dev) != 1 || strcmp(dev, want) != 0 ||
            sscanf(dash, " - %63s %1023s", type, source) != 2 || strcmp(type, "ext4") != 0)
            continue;
        const char *slash = strrchr(source, '/');
        found = (size_t)snprintf(name, cap, "%s", slash != NULL ? slash + 1 : source) < cap;
    }
    fclose(f);
    return found;
}

/* A journaled ext4 has its jbd2 entry, /proc/fs/jbd2/<device>-<inode>. */
static bool has_journal(const char *device)
{
    DIR *d = opendir("/proc/fs/jbd2");
    bool found = false;
    size_t len = strlen(device);
    if (d == NULL)
        return false;
    for (struct dirent *e; !found && (e = readdir(d)) != NULL;)
        found = strncmp(e->d_name, device, len) == 0 && e->d_name[len] == '-';
    closedir(d);
    return found;
}

void bench_print_disk(void)
{
    const char *base = getenv("CSCHED_TEST_TMPDIR");
    char device[256];

    if (base == NULL || base[0] == '\0')
        base = "/tmp";
    if (!ext4_device(base, device, sizeof(device)))
        printf("D: temp dirs in %s, not on ext4\n", base);
    else if (has_journal(device))
        printf("D: temp dirs in %s, ext4 with a journal (%s)\n", base, device);
    else
        printf("D: temp dirs in %s, ext4 WITHOUT a journal (%s): each run's freed inodes slow the "
               "next run's minders; to compare builds, set CSCHED_TEST_TMPDIR to a journaled file "
               "system\n",
               base, device);
}
