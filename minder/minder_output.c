/* The command's output: one log file per stream in the attempt's directory,
 * fed from its pipe. Invariant: a log never grows past m.cap_bytes; what is
 * past it is read and dropped, and the note says the log was cut and how
 * much the command wrote and the log kept. A log that cannot be written
 * stops the logging, never the supervision. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "minder_internal.h"

void open_logs(void)
{
    int dfd = cs_note_dir_open(m.dir);

    if (dfd < 0) {
        errno = -dfd;
        die_unable("open", m.dir);
    }
    m.dir_fd = dfd; /* kept for the note */
    /* 0600: only cschedd's side reads them, whatever the mode of the
     * directories above. */
    for (int i = 0; i < 2; i++) {
        m.out[i].file_fd =
            openat(dfd, m.out[i].name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (m.out[i].file_fd < 0)
            die_unable("create", m.out[i].name);
    }
}

/* Where the note records one stream's output. */
struct stream_note {
    bool *truncated;
    int64_t *written_bytes, *kept_bytes;
};

static struct stream_note stream_note(const struct output *o)
{
    if (o == &m.out[0])
        return (struct stream_note){&m.note.stdout_truncated, &m.note.stdout_written_bytes,
                                    &m.note.stdout_kept_bytes};
    return (struct stream_note){&m.note.stderr_truncated, &m.note.stderr_written_bytes,
                                &m.note.stderr_kept_bytes};
}

void drain(struct output *o)
{
    struct stream_note note = stream_note(o);
    char buf[65536];
    uint64_t room = m.cap_bytes - o->written_bytes;
    size_t keep, done = 0;
    ssize_t n;

    n = read(o->pipe_fd, buf, sizeof(buf));
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n <= 0) {
        (void)close(o->pipe_fd); /* read end: nothing to lose */
        o->pipe_fd = -1;
        return;
    }
    keep = (uint64_t)n < room ? (size_t)n : (size_t)room;
    *note.truncated |= keep < (size_t)n;
    *note.written_bytes += n;
    o->written_bytes += keep;
    /* A full disk must not stop the supervision: stop logging, say why. */
    while (done < keep && !o->write_failed) {
        ssize_t w = write(o->file_fd, buf + done, keep - done);

        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0) {
            o->write_failed = true;
            set_message("unable to write %s: %s", o->name, strerror(errno));
            break;
        }
        done += (size_t)w;
    }
    *note.kept_bytes += (int64_t)done;
}
