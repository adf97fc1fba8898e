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
# The web console and the HTTP API are served on loopback, at
# http://127.0.0.1:8080/ (CSCHED_HTTP_LISTEN=ADDR:PORT moves it; set it
# empty for none), when Node.js is there to build the console. Its login
# token is made on the first start and kept in STATE_DIR/console-token,
# listed in STATE_DIR/tokens (cschedd's --tokens-file).
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

# The console: built when node and npm are there (CMake says so otherwise).
http_listen=${CSCHED_HTTP_LISTEN-127.0.0.1:8080}
http_args=()
console_msg=
if [ -n "$http_listen" ] && [ -d "$build/client/console/npm" ]; then
    cmake --build "$build" --target console >/dev/null
    if [ ! -s "$state_dir/console-token" ]; then
        made=$("$build/bin/csched" token new quickstart admin | grep -v '^#')
        (
            umask 077
            printf '%s\n' "$made" | sed -n 1p >"$state_dir/console-token"
            printf '%s\n' "$made" | sed -n 2p >>"$state_dir/tokens"
        )
    fi
    http_args=(--http-listen "$http_listen" --console-dir "$build/client/console/dist"
        --tokens-file "$state_dir/tokens")
    ui_hint="build/bin/csched ui says so too"
    [ "$http_listen" = 127.0.0.1:8080 ] ||
        ui_hint="export CSCHED_CONSOLE_URL=http://$http_listen/ for build/bin/csched ui"
    console_msg="
The web console: http://$http_listen/ ($ui_hint).
Log in with the token in $state_dir/console-token:

    cat $state_dir/console-token
"
elif [ -n "$http_listen" ]; then
    console_msg="
No web console: Node.js and npm are missing (deploy/install-deps.sh installs them).
"
fi
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
${console_msg}
MSG
exec "$build/bin/cschedd" --state-dir "$state_dir" --socket "$socket" "${http_args[@]}" "$@"
