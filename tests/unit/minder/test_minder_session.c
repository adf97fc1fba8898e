/* Tests of the real csched-minder binary (CS_MINDER_PATH) on what it finds
 * pending when it starts: the server spawns it with every signal blocked and
 * in the server's own session, so a signal sent to the server's process
 * group before the minder's setsid() waits for it. Only a cancel from its
 * parent may count; anything else is dropped, and the command runs. Each
 * minder is started from a forked child that blocks every signal, makes one
 * pending, and execs it: exec keeps both the mask and what is pending. */
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "note.h"

static char dir[64];

static int make_dir(void **state)
{
    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/test_minder_session.XXXXXX");
    return mkdtemp(dir) == NULL ? -1 : 0;
}

static int remove_dir(void **state)
{
    char cmd[128];

    (void)state;
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* Forks a child that blocks every signal and, once it has, waits on go_fd; once told, it
 * sends itself pending_sig (0: none), sends its stderr to DIR/minder.err,
 * and execs the minder on `sh -c shell` in DIR/attempt. Returns the child. */
static pid_t start_held(int go_fd, int pending_sig, const char *shell)
{
    char attempt[96], err_path[96], ready_byte;
    int ready[2];
    sigset_t all;
    pid_t pid;

    snprintf(attempt, sizeof(attempt), "%s/attempt", dir);
    snprintf(err_path, sizeof(err_path), "%s/minder.err", dir);
    assert_int_equal(mkdir(attempt, 0700), 0);
    assert_int_equal(pipe(ready), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        char go;
        sigfillset(&all);
        sigprocmask(SIG_BLOCK, &all, NULL);
        if (write(ready[1], "r", 1) != 1 || read(go_fd, &go, 1) != 1)
            _exit(98);
        if (pending_sig != 0)
            raise(pending_sig);
        int fd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd < 0 || dup2(fd, STDERR_FILENO) < 0)
            _exit(97);
        execl(CS_MINDER_PATH, "csched-minder", "-d", attempt, "--", "/bin/sh", "-c", shell,
              (char *)NULL);
        _exit(99);
    }
    /* Held, every signal blocked: what is sent now stays pending. */
    assert_int_equal(read(ready[0], &ready_byte, 1), 1);
    close(ready[0]);
    close(ready[1]);
    return pid;
}

/* Lets the held child go, waits for its minder, and returns its note. */
static struct cs_note finish_held(pid_t pid, int go_w)
{
    char attempt[96];
    struct cs_note note;
    int wstatus;

    assert_int_equal(write(go_w, "g", 1), 1);
    assert_int_equal(waitpid(pid, &wstatus, 0), pid);
    assert_true(WIFEXITED(wstatus));
    assert_int_equal(WEXITSTATUS(wstatus), 0);
    snprintf(attempt, sizeof(attempt), "%s/attempt", dir);
    assert_int_equal(cs_note_read(attempt, &note), 0);
    return note;
}

/* A SIGINT that reached the minder before its session, from anyone but
 * its parent (here itself, as a Ctrl-C to the server's group would come
 * from the kernel), is dropped and said so: the command runs to its end. */
static void test_minder_session_drops_group_signal(void **state)
{
    int go[2];
    char err[512] = "";

    (void)state;
    assert_int_equal(pipe(go), 0);
    pid_t pid = start_held(go[0], SIGINT, "exit 3");
    struct cs_note note = finish_held(pid, go[1]);
    assert_int_equal(note.outcome, CS_NOTE_EXITED);
    assert_int_equal(note.exit_code, 3);

    char err_path[96];
    snprintf(err_path, sizeof(err_path), "%s/minder.err", dir);
    FILE *f = fopen(err_path, "r");
    assert_non_null(f);
    size_t n = fread(err, 1, sizeof(err) - 1, f);
    err[n] = '\0';
    fclose(f);
    assert_non_null(strstr(err, "ignored"));
    close(go[0]);
    close(go[1]);
}

/* A SIGTERM from its parent (the server's cancel) sent before the minder
 * had its session still cancels: the command is stopped, the note says so. */
static void test_minder_session_keeps_parent_cancel(void **state)
{
    int go[2];

    (void)state;
    assert_int_equal(pipe(go), 0);
    pid_t pid = start_held(go[0], 0, "sleep 30");
    /* Pending in the held child, sent by its parent: this process. */
    assert_int_equal(kill(pid, SIGTERM), 0);
    struct cs_note note = finish_held(pid, go[1]);
    assert_int_equal(note.outcome, CS_NOTE_CANCELLED);
    close(go[0]);
    close(go[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_minder_session_drops_group_signal, make_dir,
                                        remove_dir),
        cmocka_unit_test_setup_teardown(test_minder_session_keeps_parent_cancel, make_dir,
                                        remove_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
