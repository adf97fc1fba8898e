# server: one executable per module with logic of its own, and the check that
# no object of the server that runs on the loop thread calls anything that
# blocks or starts processes.
set(CS_SERVER_DIR ${PROJECT_SOURCE_DIR}/server)

cs_unit_test(probe SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_probe.c LIBS cs_probe)
cs_unit_test(metrics SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_metrics.c LIBS cs_metrics cs_net_addr)
# The address of a TCP peer, by which refusals are counted.
cs_unit_test(net_addr SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_net_addr.c LIBS cs_net_addr)
cs_unit_test(idmap SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_idmap.c LIBS cs_idmap)
# The ready file: written whole, through no planted link, tried again while
# out of file descriptors.
cs_unit_test(ready_work SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_ready_work.c LIBS cs_ready cs_testfile)
cs_unit_test(ended_runs SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_ended_runs.c LIBS cs_ended_runs)
cs_unit_test(note_cached SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_note_cached.c LIBS cs_note_cached)
cs_unit_test(heap SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_heap.c LIBS cs_heap)
cs_unit_test(next_turn SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_next_turn.c LIBS cs_base)
cs_unit_test(log SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_log.c LIBS cs_base)
cs_unit_test(utf8 SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_utf8.c LIBS cs_base)
cs_unit_test(env SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_env.c LIBS cs_env)
cs_unit_test(runas_cache SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_runas_cache.c LIBS cs_runas cs_testfile)
cs_unit_test(job SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_job.c LIBS cs_env)
cs_unit_test(secret SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_secret.c LIBS cs_env cs_launch)
cs_unit_test(job_table SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_job_table.c LIBS cs_env)
cs_unit_test(slot_rules SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_slot_rules.c LIBS cs_env)
cs_unit_test(config SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_config.c LIBS cs_config)
cs_unit_test(priority SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_priority.c LIBS cs_priority)
cs_unit_test(state_lock SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_state_lock.c LIBS cs_state_lock)
cs_unit_test(retention SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_retention.c LIBS cs_retention)
cs_unit_test(dir_check SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_dir_check.c LIBS cs_dir_check cs_testfile)
cs_unit_test(run_keys SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_run_keys.c LIBS cs_run_keys)
cs_unit_test(status SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_status.c LIBS cs_rpc)
cs_unit_test(wire_check SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_wire_check.c LIBS cs_request_decode)
# A map key sent twice: the last wins, once.
cs_unit_test(map_fold SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_map_fold.c LIBS cs_map_fold cs_proto_reflection)
cs_unit_test(audit_budget SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_audit_budget.c LIBS cs_audit_budget)
# The access table against docs/security.md's and the proto's methods.
cs_unit_test(access SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_access.c LIBS cs_access)
target_compile_definitions(test_access PRIVATE CS_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
cs_unit_test(local_role SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_local_role.c LIBS cs_local)
cs_unit_test(local_listen SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_local_listen.c LIBS cs_local)
cs_unit_test(mailbox SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_mailbox.c LIBS cs_mailbox)
cs_unit_test(auth_file SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_auth_file.c LIBS cs_auth)
cs_unit_test(tls_fetch SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_tls_fetch.c LIBS cs_auth)
cs_unit_test(exit_watch SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_exit_watch.c LIBS cs_exit_watch)
cs_unit_test(cron SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_cron.c LIBS cs_schedule)
cs_unit_test(schedule SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_schedule.c LIBS cs_schedule)
cs_unit_test(schedule_cronie SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_schedule_cronie.c
             LIBS cs_schedule)

# The pump, given a fake start callback at init (pump_fixture.h): the order
# it starts runs in, the limits it keeps, runs taken off their queues.
foreach(cs_concern order limits dequeue)
  cs_unit_test(pump_${cs_concern} SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_pump_${cs_concern}.c
               LIBS cs_dispatch)
endforeach()
# The run state machine, with the store's writes and the launcher's submit
# faked through the ops dispatch takes at init.
cs_unit_test(dispatch SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_dispatch.c
             ${CMAKE_CURRENT_SOURCE_DIR}/dispatch_fixture.c LIBS cs_dispatch)
# When a run holds its slot, on the same fixture.
cs_unit_test(dispatch_slots SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_dispatch_slots.c
             ${CMAKE_CURRENT_SOURCE_DIR}/dispatch_fixture.c LIBS cs_dispatch)
# What a restart makes of an attempt's directory: note, pid file, boot time.
cs_unit_test(attempt_left SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_attempt_left.c LIBS cs_dispatch)
# Retries, deadlines, the kill grace and signal, and runs for later, on the
# same fixture.
cs_unit_test(retry SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_retry.c
             ${CMAKE_CURRENT_SOURCE_DIR}/dispatch_fixture.c LIBS cs_dispatch)

# Every object of every static library and program defined in server/ (so a
# module added later is checked too, and cschedd's main.c), except
# *_thread.c and *_work.c files, which the script skips.
get_property(cs_server_targets DIRECTORY ${CS_SERVER_DIR} PROPERTY BUILDSYSTEM_TARGETS)
set(cs_server_objects "")
foreach(cs_target ${cs_server_targets})
  get_target_property(cs_type ${cs_target} TYPE)
  if(cs_type STREQUAL "STATIC_LIBRARY" OR cs_type STREQUAL "EXECUTABLE")
    list(APPEND cs_server_objects $<TARGET_OBJECTS:${cs_target}>)
  endif()
endforeach()
add_test(NAME unit_server_loop_symbols
         COMMAND sh ${PROJECT_SOURCE_DIR}/tests/lib/check_loop_symbols.sh ${cs_server_objects}
         COMMAND_EXPAND_LISTS)
set_tests_properties(unit_server_loop_symbols PROPERTIES LABELS unit TIMEOUT 120)

# The check must be able to fail: an object that calls each forbidden function
# (generated here, never linked) has every one of them reported.
set(cs_loop_bad_src ${CMAKE_CURRENT_BINARY_DIR}/loop_symbols_bad.c)
file(WRITE ${cs_loop_bad_src} [=[
/* Generated by tests/unit/server.cmake: calls that must never run on the loop
 * thread, for the check's negative test. Compiled, never linked. */
#include <netdb.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

void *PQexec(void *conn, const char *query);
void *PQconnectdb(const char *conninfo);
int PQcancel(void *cancel, char *errbuf, int errbufsize);
int cs_loop_symbols_bad(void);

int cs_loop_symbols_bad(void)
{
    struct timespec ts = {0, 0};
    struct addrinfo *ai = NULL;
    pid_t pid;
    char *argv[] = {NULL};
    int n = 0;

    n += PQexec(NULL, "") != NULL;
    n += PQconnectdb("") != NULL;
    n += PQcancel(NULL, NULL, 0);
    n += fsync(0) + fdatasync(0);
    n += (int)sleep(0) + usleep(0) + nanosleep(&ts, NULL);
    n += fork();
    n += posix_spawn(&pid, "/bin/true", NULL, NULL, argv, argv);
    n += system("");
    n += popen("", "r") != NULL;
    n += getaddrinfo("localhost", NULL, NULL, &ai);
    return n;
}
]=])
add_library(cs_loop_symbols_bad OBJECT ${cs_loop_bad_src})
set(cs_loop_bad_syms
    PQexec PQconnectdb PQcancel fsync fdatasync sleep usleep nanosleep fork posix_spawn system
    popen getaddrinfo)
set(cs_loop_bad_check ${CMAKE_CURRENT_BINARY_DIR}/loop_symbols_negative.sh)
file(WRITE ${cs_loop_bad_check} [=[
# Generated by tests/unit/server.cmake. Usage: SCRIPT OBJECT SYMBOL...
# Runs the check on OBJECT; passes if it fails and names every SYMBOL.
script=$1
obj=$2
shift 2
out=$(sh "$script" "$obj" 2>&1)
rc=$?
printf '%s\n' "$out"
if [ "$rc" -ne 1 ]; then
    echo "expected exit status 1, got $rc"
    exit 1
fi
for sym in "$@"; do
    if ! printf '%s\n' "$out" | grep -q "loop_symbols_bad.*[ :]$sym\( \|$\)"; then
        echo "expected $sym to be reported"
        exit 1
    fi
done
echo "all $# forbidden calls reported"
]=])
add_test(NAME unit_server_loop_symbols_negative
         COMMAND sh ${cs_loop_bad_check} ${PROJECT_SOURCE_DIR}/tests/lib/check_loop_symbols.sh
                 $<TARGET_OBJECTS:cs_loop_symbols_bad> ${cs_loop_bad_syms}
         COMMAND_EXPAND_LISTS)
set_tests_properties(unit_server_loop_symbols_negative PROPERTIES LABELS unit TIMEOUT 60)
# Minders started ahead, with the real csched-minder.
cs_unit_test(ahead_minder SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_ahead_minder.c LIBS cs_launch)
add_dependencies(test_ahead_minder csched_minder)
target_compile_definitions(test_ahead_minder PRIVATE CS_MINDER_PATH="${CS_MINDER_PATH}")
cs_unit_test(release_gate SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_release_gate.c LIBS cs_launch)
cs_unit_test(launcher_hold SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_launcher_hold.c LIBS cs_launch)
add_dependencies(test_launcher_hold csched_minder)
target_compile_definitions(test_launcher_hold PRIVATE CS_MINDER_PATH="${CS_MINDER_PATH}")
