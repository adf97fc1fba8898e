/* config: cschedd's settings from flags, then environment variables, then
 * defaults. Parsed once at start, before the loop runs. */
#ifndef CS_CONFIG_H
#define CS_CONFIG_H

#include <stdint.h>

#include "log.h"
#include "util.h"

#define CS_DEFAULT_LISTEN "127.0.0.1:50051"
#define CS_DEFAULT_STATE_DIR "/var/lib/csched"
#define CS_DEFAULT_MAX_RUNNING 64
#define CS_MAX_RUNNING_LIMIT 100000
#define CS_DEFAULT_NICE (-10)
#define CS_NICE_MIN (-20)
#define CS_NICE_MAX 19
#define CS_DEFAULT_RETENTION_DAYS 30
#define CS_RETENTION_DAYS_MAX 36500

struct cs_config {
    const char *listen;
    const char *database_url; /* NULL: the embedded PostgreSQL */
    const char *state_dir;
    uint32_t max_running;
    const char *ready_file;  /* NULL: none */
    const char *minder_path; /* NULL: found beside cschedd */
    enum cs_log_level log_level;
    int nice;                      /* of cschedd's session; 0: left as it is */
    uint32_t retention_days;       /* of ended attempts' directories; 0: forever */
    uint32_t audit_retention_days; /* of audit rows; 0: forever */
    bool help;
};

/* Fills config from argv and the environment (CSCHED_LISTEN,
 * CSCHED_DATABASE_URL, CSCHED_STATE_DIR, CSCHED_MAX_RUNNING, CSCHED_LOG_LEVEL,
 * CSCHED_MINDER, CSCHED_NICE, CSCHED_RETENTION_DAYS,
 * CSCHED_AUDIT_RETENTION_DAYS). Strings point into argv or environ. 0 or
 * -EINVAL with err naming the flag. */
int cs_config_parse(int argc, char **argv, struct cs_config *config, struct cs_err *err);
void cs_config_usage(const char *prog);

#endif
