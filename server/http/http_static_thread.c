/* http_static: the console's files (see http_static.h). */
#define CS_LOG_COMPONENT "http"
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "http_static.h"
#include "log.h"
#include "util.h"

struct cs_http_static {
    int dir_fd; /* -1: not installed */
};

static const char not_installed[] =
    "<!doctype html><title>csched</title><h1>The csched console is not installed</h1>"
    "<p>cschedd serves its HTTP API here all the same: see docs/http.md. Build the console "
    "(client/console) and give its directory with --console-dir.</p>\n";

static const struct {
    const char *ext, *type;
} types[] = {
    {".html", "text/html; charset=utf-8"},
    {".js", "text/javascript; charset=utf-8"},
    {".mjs", "text/javascript; charset=utf-8"},
    {".css", "text/css; charset=utf-8"},
    {".json", "application/json"},
    {".map", "application/json"},
    {".webmanifest", "application/manifest+json"},
    {".svg", "image/svg+xml"},
    {".png", "image/png"},
    {".ico", "image/x-icon"},
    {".woff2", "font/woff2"},
    {".txt", "text/plain; charset=utf-8"},
};

struct cs_http_static *cs_http_static_open(const char *dir)
{
    struct cs_http_static *st = cs_xcalloc(1, sizeof(*st));
    st->dir_fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (st->dir_fd < 0)
        cs_log_info("no console at %s (%s): / says so, and the HTTP API serves as ever", dir,
                    strerror(errno));
    return st;
}

void cs_http_static_close(struct cs_http_static *st)
{
    if (st == NULL)
        return;
    if (st->dir_fd >= 0)
        (void)close(st->dir_fd);
    free(st);
}

/* The type of name by its extension; files of other kinds are not sent, so
 * nothing in the directory is ever served as what a browser would guess. */
static const char *type_of(const char *name)
{
    const char *dot = strrchr(name, '.');
    if (dot == NULL || strchr(dot, '/') != NULL)
        return NULL;
    for (size_t i = 0; i < CS_ARRAY_LEN(types); i++)
        if (strcmp(dot, types[i].ext) == 0)
            return types[i].type;
    return NULL;
}

/* name (relative) opened beneath the directory as a regular file: the fd,
 * or a negative errno (-ENOENT: no such file). */
static int open_beneath(const struct cs_http_static *st, const char *name)
{
    struct open_how how = {.flags = O_RDONLY | O_CLOEXEC | O_NOCTTY,
                           .resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS};
    int fd = (int)syscall(SYS_openat2, st->dir_fd, name, &how, sizeof(how));
    if (fd < 0)
        return -errno;
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        (void)close(fd);
        return -ENOENT;
    }
    return fd;
}

static struct MHD_Response *file_response(int fd, const char *name)
{
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        (void)close(fd);
        return NULL;
    }
    struct MHD_Response *r = MHD_create_response_from_fd((uint64_t)sb.st_size, fd);
    if (r == NULL) {
        (void)close(fd);
        return NULL;
    }
    (void)MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type_of(name));
    (void)MHD_add_response_header(
        r, MHD_HTTP_HEADER_CACHE_CONTROL,
        strncmp(name, "assets/", 7) == 0 ? "public, max-age=31536000, immutable" : "no-cache");
    return r;
}

static struct MHD_Response *text_response(const char *text, const char *type)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_PERSISTENT);
    if (r != NULL)
        (void)MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    return r;
}

struct MHD_Response *cs_http_static_response(struct cs_http_static *st, const char *url,
                                             unsigned *status)
{
    const char *name = url[0] == '/' ? url + 1 : url;
    const char *last = strrchr(url, '/');
    /* A path with an extension names a file; one without, a page of the
     * console, which index.html routes. */
    bool page = name[0] == '\0' || strchr(last != NULL ? last : url, '.') == NULL;
    *status = MHD_HTTP_OK;
    if (st->dir_fd < 0) {
        if (page)
            return text_response(not_installed, "text/html; charset=utf-8");
        *status = MHD_HTTP_NOT_FOUND;
        return text_response("not found: the console is not installed\n",
                             "text/plain; charset=utf-8");
    }
    int fd = page ? -ENOENT : type_of(name) != NULL ? open_beneath(st, name) : -ENOENT;
    if (fd >= 0)
        return file_response(fd, name);
    if (page && (fd = open_beneath(st, "index.html")) >= 0)
        return file_response(fd, "index.html");
    *status = MHD_HTTP_NOT_FOUND;
    return text_response("not found\n", "text/plain; charset=utf-8");
}
