/* proc_facts: /proc/self/stat, /proc/stat's boot time, /proc/self/fd and
 * RLIMIT_NOFILE, read on the HTTP thread for each scrape (see
 * proc_facts.h). A few small reads; nothing is kept between scrapes. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "proc_facts.h"

/* The whole of a small /proc file into buf: its length, or a negative
 * errno. */
static ssize_t read_small(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    ssize_t n = read(fd, buf, cap - 1);
    int err = errno;
    (void)close(fd); /* read-only: nothing to lose */
    if (n < 0)
        return -err;
    buf[n] = '\0';
    return n;
}

/* Seconds since the epoch at which the machine booted, or 0. */
static double boot_time_s(void)
{
    char buf[8192];
    if (read_small("/proc/stat", buf, sizeof(buf)) < 0)
        return 0;
    const char *p = strstr(buf, "\nbtime ");
    unsigned long long btime = 0;
    return p != NULL && sscanf(p + 7, "%llu", &btime) == 1 ? (double)btime : 0;
}

static unsigned long long count_fds(void)
{
    DIR *dir = opendir("/proc/self/fd");
    if (dir == NULL)
        return 0;
    unsigned long long n = 0;
    const struct dirent *e;
    while ((e = readdir(dir)) != NULL)
        if (e->d_name[0] != '.')
            n++;
    (void)closedir(dir);      /* a directory read: nothing to lose */
    return n > 0 ? n - 1 : 0; /* less the one opendir holds */
}

void cs_proc_facts_read(struct cs_proc_facts *out)
{
    memset(out, 0, sizeof(*out));
    char buf[1024];
    if (read_small("/proc/self/stat", buf, sizeof(buf)) <= 0)
        return;
    /* The command name may hold spaces and parentheses: fields are counted
     * from the last ')'. After it come field 3 (state) onwards. */
    const char *p = strrchr(buf, ')');
    unsigned long long utime, stime, threads, start, vsize, rss;
    if (p == NULL || sscanf(p + 2,
                            "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d "
                            "%*d %llu %*d %llu %llu %llu",
                            &utime, &stime, &threads, &start, &vsize, &rss) != 6)
        return;
    double tck = (double)sysconf(_SC_CLK_TCK);
    out->cpu_seconds = (double)(utime + stime) / tck;
    out->start_time_seconds = boot_time_s() + (double)start / tck;
    out->threads = threads;
    out->virtual_bytes = vsize;
    out->resident_bytes = rss * (unsigned long long)sysconf(_SC_PAGESIZE);
    out->open_fds = count_fds();
    struct rlimit lim;
    if (getrlimit(RLIMIT_NOFILE, &lim) == 0)
        out->max_fds = lim.rlim_cur;
    out->ok = true;
}
