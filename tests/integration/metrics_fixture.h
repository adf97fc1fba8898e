/* What the metrics endpoint's tests share: a free loopback port, an HTTP
 * GET over a plain socket, curl for HTTPS, a sample's value out of the
 * exposition text, and promtool's check of it. Main thread; helpers assert
 * with cmocka. */
#ifndef CS_METRICS_FIXTURE_H
#define CS_METRICS_FIXTURE_H

#include <stdbool.h>

/* A TCP port free on 127.0.0.1 just now (bound and closed). */
int cs_metrics_free_port(void);
/* "METHOD path" to 127.0.0.1:port over plain HTTP/1.0: the body (caller
 * frees), the status in *status (0 when nothing came back). */
char *cs_metrics_http(int port, const char *method, const char *path, int *status);
/* curl -s with args (NULL-terminated) then url: the body (caller frees) and
 * the HTTP status in *status (0: no answer). */
char *cs_metrics_curl(const char *url, const char *const *args, int *status);
/* The value of the sample series ("name" or "name{labels}") in text. */
bool cs_metrics_value(const char *text, const char *series, double *out);
/* Asserts that promtool check metrics passes text with no lint message. */
void cs_metrics_promtool_ok(const char *text);

#endif
