/* The metrics tests' helpers (see metrics_fixture.h). */
#include "metrics_fixture.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

int cs_metrics_free_port(void)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(a);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    close(fd);
    return ntohs(a.sin_port);
}

/* Reads fd to its end into a new NUL-terminated buffer. */
static char *read_all(int fd)
{
    size_t len = 0, cap = 65536;
    char *buf = malloc(cap);
    assert_non_null(buf);
    ssize_t n;
    while ((n = read(fd, buf + len, cap - len - 1)) > 0) {
        len += (size_t)n;
        if (cap - len < 1024) {
            cap *= 2;
            buf = realloc(buf, cap);
            assert_non_null(buf);
        }
    }
    buf[len] = '\0';
    return buf;
}

char *cs_metrics_http(int port, const char *method, const char *path, int *status)
{
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
                            .sin_port = htons((uint16_t)port)};
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    *status = 0;
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
        close(fd);
        return strdup("");
    }
    char req[512];
    int n = snprintf(req, sizeof(req), "%s %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n", method, path);
    assert_int_equal(write(fd, req, (size_t)n), n);
    char *all = read_all(fd);
    close(fd);
    (void)sscanf(all, "HTTP/%*s %d", status);
    char *body = strstr(all, "\r\n\r\n");
    char *out = strdup(body != NULL ? body + 4 : "");
    free(all);
    return out;
}

char *cs_metrics_curl(const char *url, const char *const *args, int *status)
{
    char body_path[] = "/tmp/cs-metrics-curl-XXXXXX";
    int body_fd = mkstemp(body_path);
    assert_true(body_fd >= 0);
    int pipefd[2];
    assert_int_equal(pipe(pipefd), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        const char *argv[24] = {"curl", "-s", "-o", body_path, "-w", "%{http_code}"};
        size_t n = 6;
        for (size_t i = 0; args != NULL && args[i] != NULL && n < 22; i++)
            argv[n++] = args[i];
        argv[n++] = url;
        argv[n] = NULL;
        dup2(pipefd[1], 1);
        execvp("curl", (char *const *)argv);
        _exit(127);
    }
    close(pipefd[1]);
    char *code = read_all(pipefd[0]);
    close(pipefd[0]);
    int wstatus;
    assert_int_equal(waitpid(pid, &wstatus, 0), pid);
    *status = atoi(code);
    free(code);
    char *body = read_all(body_fd);
    close(body_fd);
    unlink(body_path);
    return body;
}

bool cs_metrics_value(const char *text, const char *series, double *out)
{
    size_t n = strlen(series);
    for (const char *line = text; line != NULL && *line != '\0';) {
        if (strncmp(line, series, n) == 0 && line[n] == ' ')
            return sscanf(line + n + 1, "%lf", out) == 1;
        line = strchr(line, '\n');
        if (line != NULL)
            line++;
    }
    return false;
}

void cs_metrics_promtool_ok(const char *text)
{
    char path[] = "/tmp/cs-metrics-promtool-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    size_t len = strlen(text);
    assert_int_equal(write(fd, text, len), (ssize_t)len);
    close(fd);
    char cmd[256];
    (void)snprintf(cmd, sizeof(cmd), "promtool check metrics < %s 2>&1", path);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char *said = read_all(fileno(p));
    int rc = pclose(p);
    unlink(path);
    if (rc != 0 || said[0] != '\0')
        fail_msg("promtool check metrics: exit %d: %s", WEXITSTATUS(rc), said);
    free(said);
}
