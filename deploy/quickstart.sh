#!/usr/bin/env bash
# quickstart.sh: install the packages, build csched (Release) into build/ and
# run cschedd in the foreground with its embedded PostgreSQL.
#
#   deploy/quickstart.sh [cschedd flags...]
#
# The state dir is /var/lib/csched when run as root (PostgreSQL then runs as
# the postgres user, which must be able to reach it: a dir under /root would
# not do), else ~/.local/state/csched. CSCHED_STATE_DIR overrides it.
# cschedd listens on the unix socket /run/csched/csched.sock, where csched
# finds it with no flags; run as another user, on STATE_DIR/csched.sock
# (export CSCHED_SOCKET to match, as the message says).
# Stop it with Ctrl-C; everything is kept for the next start.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$repo/build

socket_env=
if [ "$(id -u)" -eq 0 ]; then
    state_dir=${CSCHED_STATE_DIR:-/var/lib/csched}
    socket=${CSCHED_SOCKET:-/run/csched/csched.sock}
else
    state_dir=${CSCHED_STATE_DIR:-${XDG_STATE_HOME:-$HOME/.local/state}/csched}
    socket=${CSCHED_SOCKET:-$state_dir/csched.sock}
fi
if [ "$socket" != /run/csched/csched.sock ]; then
    socket_env="    export CSCHED_SOCKET=$socket
"
fi

"$repo/deploy/install-deps.sh"

echo "quickstart: building into $build"
cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCSCHED_SANITIZE= >/dev/null
# cschedd depends on csched_minder; csched_cli is the csched program.
cmake --build "$build" -j "$(nproc)" --target cschedd csched_cli >/dev/null

mkdir -p "$state_dir"
cat <<MSG

quickstart: starting cschedd on unix:$socket, state in $state_dir
The first start runs initdb and takes a few seconds. In another terminal:

    cd $repo
${socket_env}    build/bin/csched health
    build/bin/csched job create hello --shell 'echo hello from csched'
    build/bin/csched trigger hello --wait
    build/bin/csched runs
    build/bin/csched watch --after-seq 0

See README.md for a five-minute tour. Stop it with Ctrl-C.

MSG
exec "$build/bin/cschedd" --state-dir "$state_dir" --socket "$socket" "$@"
