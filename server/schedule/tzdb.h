/* tzdb: the system's tz database on disk, the directory of compiled zones
 * that Go, Python's zoneinfo and systemd read too (/usr/share/zoneinfo,
 * Debian's tzdata package): a zone's TZif file by its name, and the
 * version of the data. These functions read files, so they block: libuv's
 * pool (zone_work.h), tests and tools only, never the loop. Each call reads
 * the disk afresh, so an updated package is seen by the next call. */
#ifndef CS_TZDB_H
#define CS_TZDB_H

#include <stddef.h>

#include "tz.h"
#include "util.h"

#define CS_TZDB_DIR_DEFAULT "/usr/share/zoneinfo"
/* Bytes of a zone's file read at most (the largest zone is under 4 KB). */
#define CS_TZDB_FILE_MAX (256 * 1024)
/* Room for a version ("2025b") with its NUL. */
#define CS_TZDB_VERSION_MAX 32

/* Reads the zone called name ("Europe/Berlin", "UTC", a backward link such
 * as "US/Eastern") from dir into *out, owned by the caller (cs_tz_free).
 * 0; -EINVAL with err saying `unknown time zone "Europe/Berln"`, or that
 * the name is not a zone name (empty, absolute, a "." or ".." part, a
 * character no zone name has), or that the file is not a zone's; another
 * negative errno (-EACCES, -EMFILE, -EIO) with err naming the file when it
 * cannot be read. */
int cs_tzdb_open(const char *dir, const char *name, struct cs_tz **out, struct cs_err *err);

/* The version of dir's data ("2025b"), from its +VERSION file or the
 * "# version" line that opens tzdata.zi, into out (len bytes); "unknown"
 * when neither says. */
void cs_tzdb_version(const char *dir, char *out, size_t len);

#endif
