#!/usr/bin/env bash
# systemd_test.sh: the packaged unit under systemd as PID 1, as a host runs
# it. Run by tests/package_test.sh on the clean root it made.
#
#   tests/systemd_test.sh ROOT WORK_DIR
#
# ROOT is a Debian 12 root with the csched package, postgresql-15 and systemd
# installed. podman boots it with systemd as PID 1 (runc: this kind of host's
# cgroups are v1 hybrid; explicit ulimits: root lacks CAP_SYS_RESOURCE, see
# deploy/image/build.sh), with no network. There:
#   1. systemd-analyze verify finds nothing to say of cschedd.service;
#   2. on the embedded database: systemctl start serves; a restart while a
#      job runs keeps its command running and adopts its minder, and the run
#      succeeds; systemctl reload rereads the files (SIGHUP); stop ends
#      with status 0;
#   3. as one replica on a shared PostgreSQL (CSCHED_DATABASE_URL and
#      CSCHED_REPLICA_ID in /etc/csched/cschedd.env, as docs/deploy.md says):
#      systemctl stop with a run in flight drains, waiting for it, marks the
#      replica's row left, and ends with status 0; the run succeeded.
# Nothing sleeps for a fixed time: each step polls for what it waits for.
set -euo pipefail

[ $# -eq 2 ] || {
    echo "usage: $0 ROOT WORK_DIR" >&2
    exit 64
}
root=$(cd "$1" && pwd)
mkdir -p "$2"
work=$(cd "$2" && pwd)
name=csched-systemd-$$

say() { echo "systemd_test: $*"; }
die() {
    echo "systemd_test: $*" >&2
    if podman container exists "$name" 2>/dev/null; then
        podman exec "$name" journalctl -u cschedd --no-pager 2>&1 | tail -40 >&2 || true
    fi
    exit 1
}
cleanup() { podman rm -f -t 0 "$name" >/dev/null 2>&1 || true; }
trap cleanup EXIT

in_ct() { podman exec "$name" "$@"; }
as_csched() { in_ct setpriv --reuid=csched --regid=csched --init-groups -- "$@"; }

# wait_for WHAT SECONDS CMD...: polls CMD every 0.2 s until it succeeds.
wait_for() {
    local what=$1 deadline=$((SECONDS + $2))
    shift 2
    until "$@" >/dev/null 2>&1; do
        [ $SECONDS -lt $deadline ] || die "timed out waiting for $what"
        sleep 0.2
    done
}

booted() { [[ $(in_ct systemctl is-system-running 2>/dev/null) =~ ^(running|degraded)$ ]]; }
serving() { [ "$(as_csched csched health 2>/dev/null)" = SERVING ]; }
run_state() { as_csched csched run "$1" -o json | grep -o '"state":"RUN_STATE_[A-Z_]*"' | head -n 1; }
run_is() { [ "$(run_state "$1")" = "\"state\":\"RUN_STATE_$2\"" ]; }
inactive() { [ "$(in_ct systemctl is-active cschedd)" = inactive ]; }
journal_has() { in_ct journalctl -u cschedd --no-pager | grep -q -e "$1"; }

# stopped_cleanly: the last stop of cschedd ended it with status 0.
stopped_cleanly() {
    local show
    show=$(in_ct systemctl show cschedd -p Result -p ExecMainStatus)
    if ! grep -qx 'Result=success' <<<"$show" || ! grep -qx 'ExecMainStatus=0' <<<"$show"; then
        die "cschedd did not stop cleanly: $(tr '\n' ' ' <<<"$show")"
    fi
}

# A job that runs until the file go appears in the state dir (PrivateTmp
# gives the service a /tmp of its own).
gate=/var/lib/csched/go
gated_job() {
    as_csched csched job create "$1" -- /bin/sh -c "until [ -e $gate ]; do sleep 0.1; done" \
        >/dev/null
}
# trigger JOB: the id of a new run of JOB ("run N of JOB: queued").
trigger() { as_csched csched trigger "$1" | sed -n 's/^run \([0-9]*\) of .*/\1/p'; }

podman --runtime runc run -d --name "$name" --systemd=always --network none \
    --ulimit "nofile=$(ulimit -Hn):$(ulimit -Hn)" --ulimit nproc=32768:32768 \
    --rootfs "$root" /sbin/init >"$work/podman-run.log" 2>&1 ||
    { cat "$work/podman-run.log" >&2; die "podman could not boot the root with systemd"; }
wait_for "systemd to boot" 120 booted
say "systemd $(in_ct systemctl --version | sed -n '1s/^systemd \([0-9]*\).*/\1/p') is PID 1"

verify=$(in_ct systemd-analyze verify cschedd.service 2>&1) ||
    die "systemd-analyze verify cschedd.service failed: $verify"
[ -z "$verify" ] || die "systemd-analyze verify cschedd.service says: $verify"
say "systemd-analyze verify cschedd.service: clean"

# On the embedded database.
in_ct systemctl start cschedd
wait_for "cschedd to serve" 120 serving
in_ct rm -f "$gate"
gated_job held
run=$(trigger held)
wait_for "run $run to run" 60 run_is "$run" RUNNING
in_ct systemctl restart cschedd
wait_for "cschedd to serve after the restart" 120 serving
wait_for "the minder of run $run to be adopted" 60 journal_has "adopted minder .* of run $run "
in_ct touch "$gate"
wait_for "run $run to succeed" 60 run_is "$run" SUCCEEDED
say "restart with a run in flight: its minder adopted, the run succeeded"
in_ct systemctl reload cschedd
wait_for "SIGHUP to reload" 30 journal_has "auth: reloaded"
say "reload: the files read again"
in_ct systemctl stop cschedd
stopped_cleanly
say "stop on the embedded database: status 0"

# One replica on a shared PostgreSQL: Debian's own cluster, reached over its
# socket as the csched role (peer authentication). A state dir belongs to
# one database (attempt directories are named by run id), so the host starts
# from an empty one, as docs/deploy.md says.
in_ct sh -c 'rm -rf /var/lib/csched/* /var/lib/csched/.[!.]*'
in_ct pg_createcluster 15 shared --start >/dev/null
in_ct su postgres -c "createuser csched && createdb -O csched csched"
in_ct sh -c 'mkdir -p /etc/csched && printf "%s\n" \
    "CSCHED_DATABASE_URL=postgresql:///csched?host=/var/run/postgresql" \
    "CSCHED_REPLICA_ID=host-a" >/etc/csched/cschedd.env'
in_ct rm -f "$gate"
in_ct systemctl start cschedd
wait_for "the replica to serve" 120 serving
as_csched csched replicas | grep -q host-a || die "csched replicas does not show host-a"
gated_job drained
run=$(trigger drained)
wait_for "run $run of the shared database to run" 60 run_is "$run" RUNNING
in_ct systemctl stop --no-block cschedd
wait_for "the drain to begin" 60 journal_has "draining: 1 attempts run"
[ "$(in_ct systemctl is-active cschedd)" = deactivating ] ||
    die "cschedd stopped before its run ended"
in_ct touch "$gate"
wait_for "cschedd to stop after its drain" 90 inactive
stopped_cleanly
journal_has "drained: no attempt runs" || die "the journal has no end of the drain"
# Read in the database itself: cschedd is stopped. States as RunState (4:
# SUCCEEDED) and replica_states (4: left) number them.
sql() { in_ct su postgres -c "psql -Atq -d csched -c \"$1\""; }
state=$(sql "SELECT state FROM runs WHERE id = $run")
left=$(sql "SELECT state FROM replicas WHERE id = 'host-a'")
[ "$state" = 4 ] || die "the drained run's state is $state in the database, not 4 (SUCCEEDED)"
[ "$left" = 4 ] || die "the replica's row is in state $left after the drain, not 4 (left)"
say "stop as a replica: drained (the run succeeded), its row left, status 0"
say "ok"
