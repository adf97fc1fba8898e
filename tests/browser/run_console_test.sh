#!/bin/sh
# run_console_test.sh BIN_DIR CONSOLE_DIST NODE_MODULES SHOTS_DIR: the
# console's browser test (console.test.mjs) against a real cschedd on its
# embedded PostgreSQL, serving the console and the HTTP API on loopback with
# a bearer token made by csched token new. Screenshots of each page go to
# SHOTS_DIR. Exits 77 (skipped) without /usr/bin/chromium (CS_CHROMIUM).
# The port is CS_BROWSER_PORT, else a free one the kernel picks.
set -u
bin=$1
dist=$2
node_modules=$3
shots=$4
src=$(cd "$(dirname "$0")" && pwd)
chromium=${CS_CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$chromium" ]; then
    echo "SKIPPED: no $chromium (apt-get install chromium)"
    exit 77
fi
if ! "$bin/cschedd" --help 2>&1 | grep -q -- --http-listen; then
    echo "SKIPPED: this cschedd has no --http-listen"
    exit 77
fi
# shellcheck source-path=SCRIPTDIR source=../integration/cli/cschedd_test.sh
. "$src/../integration/cli/cschedd_test.sh"

"$bin/csched" token new console-test admin >"$tmp/made" || exit 1
grep -v '^#' "$tmp/made" | sed -n 1p >"$tmp/token"
grep -v '^#' "$tmp/made" | sed -n 2p >"$tmp/tokens"
chmod 600 "$tmp/tokens"

port=${CS_BROWSER_PORT:-$(node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })')}
start_server --http-listen "127.0.0.1:$port" --console-dir "$dist" --tokens-file "$tmp/tokens"

rm -rf "$shots"
CS_URL="http://127.0.0.1:$port/" CS_TOKEN=$(cat "$tmp/token") CS_SHOTS=$shots CS_CHROMIUM=$chromium \
    NODE_PATH=$node_modules node "$src/console.test.mjs"
rc=$?
[ $rc -eq 0 ] || sed 's/^/  cschedd: /' "$tmp/server.log" | tail -n 40
exit $rc
