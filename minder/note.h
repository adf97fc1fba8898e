/* The status note: what csched-minder leaves behind when an attempt ends (how
 * the command ended, its times and resource use). Portable C11 plus POSIX file calls, no
 * state: the minder writes the note, the server reads it on libuv's pool. */
#ifndef CS_NOTE_H
#define CS_NOTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "minder_contract.h" /* CS_NOTE_FILE and the other files beside it */

/* Upper bound of a formatted note in bytes, message escapes included. */
#define CS_NOTE_MAX_BYTES 2048

enum cs_note_outcome {
    CS_NOTE_EXITED = 1,
    CS_NOTE_SIGNALED,
    CS_NOTE_TIMED_OUT,
    CS_NOTE_CANCELLED,
    CS_NOTE_START_FAILED,
    /* The deadline of cschedd's lease (-L) passed unrenewed: the command
     * was stopped as on a timeout, or, with started_unix_ms 0, never
     * started. The server ends the attempt LOST. */
    CS_NOTE_FENCED
};

struct cs_note {
    enum cs_note_outcome outcome;
    /* Valid for EXITED, START_FAILED (127), and TIMED_OUT/CANCELLED/FENCED
     * when the command exited; 0 when it was ended by a signal. */
    int exit_code;
    int term_signal; /* non-zero if the command was ended by a signal */
    int64_t started_unix_ms, ended_unix_ms;
    int64_t user_cpu_ms, system_cpu_ms, max_rss_kb; /* of the command (RUSAGE_CHILDREN) */
    bool stdout_truncated, stderr_truncated;
    /* What the command wrote to each stream, and what its log kept of it
     * (up to the cap; less if the log could not be written). Missing from
     * a note of an older minder: then 0, unknown. */
    int64_t stdout_written_bytes, stdout_kept_bytes;
    int64_t stderr_written_bytes, stderr_kept_bytes;
    /* Processes the command left running when it ended (in its group, or
     * out of it after setsid or a double fork), which the minder stopped. */
    int leftover_processes;
    /* The most memory the attempt's memory cgroup held (0 without one:
     * max_rss_kb is all there is); which limit ended the command (enum
     * cs_limit_hit, attempt_limits.h, 0 for none); the limits it set that this
     * host could not enforce (enum cs_limit_bit). Missing from a note of
     * an older minder: then 0. */
    int64_t peak_memory_bytes;
    int limit_hit;
    int unenforced_limits;
    char message[256]; /* for a person, may be empty */
};

/* Formats the note as text (versioned "key=value\n" lines, first line
 * "csched-note 1"); returns length or -ENOSPC. Control characters and
 * backslashes in the message are escaped, so it always stays on one line. */
int cs_note_format(const struct cs_note *note, char *buf, size_t cap);

/* Parses text made by cs_note_format; 0 or -EINVAL (strict: unknown version,
 * missing keys, garbage, truncated input are errors; unknown extra keys are
 * ignored for forward compatibility, and leftover_processes and the byte
 * counts of the streams may be missing, as in a note from an older minder:
 * then they are 0). out is undefined after an error. */
int cs_note_parse(const char *buf, size_t len, struct cs_note *out);

/* Opens the attempt directory DIR for what the minder makes in it, as root
 * before it drops to the job's user: a link anywhere on the path is refused
 * (-ELOOP; openat2's RESOLVE_NO_SYMLINKS, or where the kernel lacks it, a
 * link as the last part only), since cschedd hands over a path it resolved
 * with no link left in it (server/host/state_path.h). The fd, or -errno. */
int cs_note_dir_open(const char *dir);

/* Makes the note's temp file in the directory dfd (cs_note_dir_open) and
 * reserves CS_NOTE_MAX_BYTES for it (posix_fallocate), so that the note can
 * be written once the command has run, however full the disk is by then.
 * 0 or -errno (-ENOSPC, -EDQUOT: no room). Blocking. */
int cs_note_reserve_at(int dfd);
/* The same in DIR, opened with cs_note_dir_open. */
int cs_note_reserve(const char *dir);

/* Writes status atomically in the directory dfd (tmp + fsync + rename +
 * fsync dir), into the space cs_note_reserve_at set aside when it did (the
 * temp file is written over, then cut to the note's length); 0 or -errno.
 * Blocking. */
int cs_note_write_at(int dfd, const struct cs_note *note);
/* The same in DIR, opened with cs_note_dir_open. */
int cs_note_write(const char *dir, const struct cs_note *note);

/* Reads DIR/status; 0, -ENOENT if there is none yet, -EINVAL if malformed, or
 * -errno. Blocking: the server calls it only from libuv's pool. */
int cs_note_read(const char *dir, struct cs_note *out);

/* The outcome's name as written in the note ("exited", "timed_out", ...), or
 * NULL if it is not a known outcome. */
const char *cs_note_outcome_name(enum cs_note_outcome outcome);

#endif
