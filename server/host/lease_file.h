/* lease_file: the deadline of this replica's lease, shared with its minders
 * through STATE_DIR/lease (CS_LEASE_FILE in minder_contract.h: a native
 * int64 at offset 0, in CLOCK_BOOTTIME nanoseconds; 0: none yet, which
 * minders take for passed). Every minder started with -L STATE_DIR/lease
 * maps it read-only and stops its command once the deadline passes
 * unrenewed (minder/README.md, "Self-fencing"), so nothing of this
 * replica's still runs when another one may take its runs over.
 * cschedd renews it in place, through a MAP_SHARED mapping, with an atomic
 * 8-byte store: no system call, so the loop thread may. Opening reads and
 * may create the file: main thread, before the loop runs. An existing file
 * is kept, deadline and all: a restarted cschedd goes on renewing the one
 * its adopted minders read. The value a file holds after the machine
 * restarted is of an earlier boot's clock and means nothing: set the
 * deadline before any minder is started with -L. */
#ifndef CS_LEASE_FILE_H
#define CS_LEASE_FILE_H

#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>

#include "util.h"

struct cs_lease_file {
    _Atomic int64_t *deadline; /* the shared mapping, or NULL when not open */
    char path[PATH_MAX];       /* STATE_DIR/lease: what the minders get as -L */
};

/* Opens STATE_DIR/lease (state_dir resolved, state_path.h), creating it
 * (0600, deadline 0) if missing, and maps it. An existing file must be a
 * regular file of cschedd's, written by no one else; a wider mode that
 * only lets others read it is narrowed to 0600, and a size other than 8
 * bytes set to 8 (the deadline to 0 if it was shorter). 0, or a negative
 * errno with err saying what to do: -ELOOP a link on the path (refused, as
 * the minders refuse it), -EPERM another owner or others may write it,
 * -EINVAL not a regular file, or the failed call's error. lf->deadline is
 * NULL unless 0 is returned. */
int cs_lease_file_open(struct cs_lease_file *lf, const char *state_dir, struct cs_err *err);

/* Sets the deadline: one atomic store, which every minder's next read
 * sees. Any thread; no system call, though the first store after the
 * kernel wrote the page back faults, to mark it dirty again, and on a busy
 * disk that fault may wait for the file system's journal. */
void cs_lease_file_set(struct cs_lease_file *lf, int64_t deadline_boot_ns);

/* The deadline as the minders read it. Any thread. */
int64_t cs_lease_file_get(const struct cs_lease_file *lf);

/* Unmaps the file, which stays for the next cschedd with its deadline: the
 * minders left running keep reading it. One not open is allowed. */
void cs_lease_file_close(struct cs_lease_file *lf);

#endif
