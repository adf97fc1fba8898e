# shellcheck shell=sh
# Sourced by the client's shell tests (test_cli_e2e.sh, check_install.sh),
# with bin set to the directory of cschedd: a temporary dir $tmp, removed at
# exit with the cschedd that start_server started there.
: "${bin:?set bin to the directory of cschedd}"
tmp=$(mktemp -d)
# The embedded PostgreSQL runs as an unprivileged user that must reach it.
mkdir "$tmp/state"
chmod 755 "$tmp" "$tmp/state"
server_pid=

cleanup() {
    if [ -n "$server_pid" ]; then
        kill -TERM "$server_pid" 2>/dev/null
        wait "$server_pid" 2>/dev/null
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT

# start_server FLAGS...: starts cschedd on the state dir and its own socket
# with FLAGS and waits for its ready file (which names where it serves).
start_server() {
    rm -f "$tmp/ready"
    "$bin/cschedd" --socket "$tmp/csched.sock" --state-dir "$tmp/state" --ready-file "$tmp/ready" \
        "$@" >"$tmp/server.log" 2>&1 &
    server_pid=$!
    i=0
    while [ ! -s "$tmp/ready" ] && [ $i -lt 120 ] && kill -0 "$server_pid" 2>/dev/null; do
        sleep 0.5
        i=$((i + 1))
    done
    if [ ! -s "$tmp/ready" ]; then
        echo "cschedd did not start"
        cat "$tmp/server.log"
        exit 1
    fi
}
