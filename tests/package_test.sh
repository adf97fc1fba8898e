#!/usr/bin/env bash
# package_test.sh: the Debian package of a build, installed and started on a
# clean Debian 12 root. Run by tests/run-all.sh (the deploy stage).
#
#   tests/package_test.sh BUILD_DIR WORK_DIR
#
#   1. cpack -G DEB in BUILD_DIR (cmake/package.cmake) into WORK_DIR/pkg;
#   2. the package holds cschedd, csched-minder, csched, libcsched and the
#      systemd unit (ExecStart at the package's cschedd), and declares every
#      runtime package deploy/install-deps.sh --runtime lists;
#   3. mmdebstrap makes a minbase bookworm root from the machine's apt sources,
#      where apt installs the package and PostgreSQL 15 (which it recommends);
#      there, as the csched user its postinst made, csched --version,
#      csched --help and cschedd --help run, and cschedd starts on the
#      embedded database, serves (health SERVING), runs a job and stops on
#      SIGTERM with status 0;
#   4. the same root booted with systemd as PID 1 (tests/systemd_test.sh):
#      the packaged unit verified, started, restarted with a run in flight,
#      reloaded, stopped, and drained as a replica on a shared PostgreSQL.
# Step 3 needs root and mmdebstrap, step 4 podman and runc too (each skipped
# without them, saying so, except in CI). The
# downloaded .debs are kept for the next run in CSCHED_APT_CACHE (default
# /var/cache/csched-package when /var/cache is writable, as the image's base
# is kept, so that a clean clone's CI downloads them once; else
# WORK_DIR/apt-cache).
set -euo pipefail

[ $# -eq 2 ] || {
    echo "usage: $0 BUILD_DIR WORK_DIR" >&2
    exit 64
}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(cd "$1" && pwd)
mkdir -p "$2"
work=$(cd "$2" && pwd)

die() {
    echo "package_test: $*" >&2
    exit 1
}

rm -rf "$work/pkg"
cpack -G DEB --config "$build/CPackConfig.cmake" -B "$work/pkg" >"$work/cpack.log" 2>&1 ||
    { cat "$work/cpack.log" >&2; die "cpack -G DEB failed"; }
debs=("$work"/pkg/csched_*.deb)
deb=${debs[0]}
[ -f "$deb" ] || die "cpack made no csched_*.deb in $work/pkg"
echo "package_test: $(basename "$deb"): $(stat -c %s "$deb") bytes," \
    "installed $(dpkg-deb -f "$deb" Installed-Size) KiB"
echo "package_test: Depends: $(dpkg-deb -f "$deb" Depends)"
echo "package_test: Recommends: $(dpkg-deb -f "$deb" Recommends)"

contents=$(dpkg-deb -c "$deb" | awk '{print $6}')
for f in ./usr/bin/cschedd ./usr/bin/csched ./usr/libexec/csched/csched-minder \
    ./usr/lib/libcsched.so.0 ./usr/include/csched/client.h ./usr/lib/systemd/system/cschedd.service; do
    grep -qx -- "$f" <<<"$contents" || die "$(basename "$deb") has no $f"
done
# The web console, where cschedd's --console-dir looks by default, whenever
# the build made it (CMake found Node.js).
if [ -f "$build/client/console/dist/index.html" ]; then
    grep -qx -- ./usr/share/csched/console/index.html <<<"$contents" ||
        die "$(basename "$deb") has no web console (./usr/share/csched/console/index.html)"
fi
# Read whole before grep: grep -q leaves at its first match, and under
# pipefail the writer's SIGPIPE would fail the pipeline.
unit=$(dpkg-deb --fsys-tarfile "$deb" | tar -xO ./usr/lib/systemd/system/cschedd.service)
grep -q '^ExecStart=/usr/bin/cschedd ' <<<"$unit" ||
    die "the packaged unit does not start /usr/bin/cschedd"
declared="$(dpkg-deb -f "$deb" Depends), $(dpkg-deb -f "$deb" Recommends)"
mapfile -t runtime < <(sed -n '/^RUNTIME_PACKAGES=(/,/^)/p' "$repo/deploy/install-deps.sh" |
    sed '1d;$d' | tr -s ' \t' '\n' | sed '/^$/d')
[ ${#runtime[@]} -gt 0 ] || die "no RUNTIME_PACKAGES in deploy/install-deps.sh"
for p in "${runtime[@]}"; do
    grep -Eq "(^|, )$p( |,|$)" <<<"$declared" ||
        die "$(basename "$deb") does not declare $p, which deploy/install-deps.sh --runtime installs"
done
echo "package_test: declares all ${#runtime[@]} packages of deploy/install-deps.sh --runtime"

if [ "$(id -u)" -ne 0 ] || ! command -v mmdebstrap >/dev/null; then
    why="needs root and mmdebstrap"
    [ "${CI:-}" = true ] && die "installing on a clean root $why"
    echo "package_test: installing on a clean root skipped: it $why"
    exit 0
fi

# A minbase root with the package and PostgreSQL 15 installed by apt, from
# the machine's own sources; the .debs are synced in and out of a cache
# (mmdebstrap(1), "EXAMPLES"). The root is thrown away: dpkg need not fsync
# (the most of its time on a busy machine), nor unpack documentation, and
# postgresql-15 need not make Debian's own cluster, which cschedd does not use
# (as docs/deploy.md, "Debian package", advises).
root=$work/root
rm -rf "$root"
cache=${CSCHED_APT_CACHE:-}
if [ -z "$cache" ] && [ -w /var/cache ]; then
    cache=/var/cache/csched-package
fi
cache=${cache:-$work/apt-cache}
mkdir -p "$cache"
sources=/etc/apt/sources.list.d/debian.sources
[ -f "$sources" ] || sources=/etc/apt/sources.list
start=$SECONDS
# shellcheck disable=SC2016 # "$1" is the root, which mmdebstrap passes its hooks
mmdebstrap --variant=minbase --skip=download/empty --skip=essential/unlink \
    --dpkgopt=force-unsafe-io --dpkgopt='path-exclude=/usr/share/doc/*' \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
    --setup-hook='mkdir -p "$1/var/cache/apt/archives"' \
    --setup-hook="sync-in '$cache' /var/cache/apt/archives" \
    --customize-hook="copy-in '$deb' /tmp" \
    --customize-hook='chroot "$1" env DEBIAN_FRONTEND=noninteractive apt-get install --yes \
        --no-install-recommends postgresql-common' \
    --customize-hook='sed -ri "s/^#?(create_main_cluster) .*/\1 = false/" \
        "$1/etc/postgresql-common/createcluster.conf"' \
    --customize-hook='chroot "$1" env DEBIAN_FRONTEND=noninteractive apt-get install --yes \
        --no-install-recommends /tmp/'"$(basename "$deb")"' postgresql-15 systemd systemd-sysv' \
    --customize-hook="sync-out /var/cache/apt/archives '$cache'" \
    bookworm "$root" "$sources" >"$work/mmdebstrap.log" 2>&1 ||
    { tail -30 "$work/mmdebstrap.log" >&2; die "mmdebstrap failed"; }
echo "package_test: clean root with the package made in $((SECONDS - start)) s"

# In the root: its own /proc, /dev/shm (PostgreSQL's shared memory) and /run.
cat >"$root/smoke.sh" <<'SMOKE'
set -eu
csched --version
csched --help >/dev/null
cschedd --help >/dev/null 2>&1
id csched
install -d -o csched -g csched -m 0750 /var/lib/csched
install -d -o csched -g csched -m 0755 /run/csched
as_csched() { setpriv --reuid=csched --regid=csched --init-groups -- "$@"; }
setpriv --reuid=csched --regid=csched --init-groups -- \
    cschedd --state-dir /var/lib/csched --nice 0 --ready-file /run/csched/ready \
    >/var/lib/csched/cschedd.log 2>&1 &
pid=$!
i=0
until [ -s /run/csched/ready ]; do
    i=$((i + 1))
    if [ $i -gt 120 ] || ! kill -0 $pid 2>/dev/null; then
        cat /var/lib/csched/cschedd.log
        echo "cschedd did not start" >&2
        exit 1
    fi
    sleep 0.5
done
as_csched csched health
as_csched csched job create hello -- /bin/echo hello from the package >/dev/null
as_csched csched trigger hello --wait >/dev/null
as_csched csched runs --job hello
kill -TERM $pid
status=0
wait $pid || status=$?
tail -3 /var/lib/csched/cschedd.log
echo "cschedd stopped with status $status"
[ $status -eq 0 ]
SMOKE
# shellcheck disable=SC2016 # "$1" is the root, given to sh -c
unshare --mount --pid --fork --mount-proc="$root/proc" sh -c '
    mount -t tmpfs -o mode=1777 tmpfs "$1/dev/shm"
    mount -t tmpfs -o mode=0755 tmpfs "$1/run"
    mount -t tmpfs -o mode=1777 tmpfs "$1/tmp"
    exec chroot "$1" /bin/sh /smoke.sh' sh "$root" >"$work/smoke.log" 2>&1 ||
    { cat "$work/smoke.log" >&2; die "the package does not run on the clean root"; }
sed 's/^/package_test: root: /' "$work/smoke.log"

# The same root booted with systemd as PID 1, the unit run as a host runs it.
if command -v podman >/dev/null && command -v runc >/dev/null; then
    "$repo/tests/systemd_test.sh" "$root" "$work/systemd" | sed 's/^/package_test: /' ||
        die "the packaged unit does not start, drain and stop under systemd"
elif [ "${CI:-}" = true ]; then
    die "running the unit under systemd needs podman and runc"
else
    echo "package_test: the unit under systemd skipped: it needs podman and runc"
fi
rm -rf "$root"
echo "package_test: ok"
