/* state_path: the state dir's path, resolved once at start and refused when
 * another user could replace any part of it.
 *
 * cschedd writes as root under its state dir (attempt directories, their
 * output, the embedded PostgreSQL). Checking only the dir's owner is not
 * enough: whoever may rename or replace an entry of any directory on the
 * way to it (a parent of theirs, a link of theirs in /tmp) can swap the
 * path after the check and have root write where they choose. So every
 * directory looked up on the way, links followed one by one, must be root's
 * or cschedd's, and written by no one else, unless it is sticky and the
 * entry looked up in it is root's or cschedd's (sticky: only an entry's
 * owner may rename or remove it). The resolved path has no links left, and
 * it is the path cschedd uses from then on. */
#ifndef CS_STATE_PATH_H
#define CS_STATE_PATH_H

#include <stddef.h>

#include "util.h"

/* Resolves path (absolute) into out (size bytes) as described above. Reads
 * the file system: main thread, before the loop runs. 0, or a negative
 * errno with err naming the part of the path at fault and what to do:
 * -EPERM a part another user could replace, -ENOTDIR a part that is not a
 * directory, -ELOOP too many links, -ENAMETOOLONG, or lstat's error. */
int cs_state_path_resolve(const char *path, char *out, size_t size, struct cs_err *err);

#endif
