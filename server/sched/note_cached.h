/* note_cached: the status note read on the loop thread, when that cannot
 * wait for the disk.
 *
 * A minder writes its note just before it exits, so when the loop sees the
 * exit the note's path and bytes are nearly always in the kernel's caches.
 * Reading it then costs three syscalls on the loop, where a trip through
 * libuv's pool costs two thread wake-ups and a turn of the loop more. The
 * lookup is made with RESOLVE_CACHED and the read with RWF_NOWAIT, so
 * either fails at once rather than wait for I/O, and the open asks for
 * O_NOATIME, so the read writes nothing either (not even on a frozen file
 * system). Whenever any of that is refused, the caller reads the note on
 * the pool as before. Loop thread. */
#ifndef CS_NOTE_CACHED_H
#define CS_NOTE_CACHED_H

#include "note.h"

/* Reads DIR/status into out without waiting for the disk: 0, or a
 * negative errno when the note could not be read that way (-EAGAIN: not
 * all of it in the caches; -EPERM: O_NOATIME refused for a note of another
 * owner; -ENOSYS: no openat2; -ENOENT, -EINVAL, ...). After any error the
 * caller reads the note again the blocking way, which tells the errors
 * apart; out is undefined then. */
int cs_note_read_cached(const char *dir, struct cs_note *out);

#endif
