#!/bin/sh
# The layer check must be able to fail. On a copy of the tree and of its link
# graph it must pass as the real tree does; with forbidden includes and a
# forbidden link added to the copy (between server's folders, from client to
# storage, from the minder to server and beyond libc) and server/README.md's
# table disagreeing with tests/layers.txt, it must fail and name each.
#
# Usage: check_layers_negative.sh CHECK SRCDIR LINKS
set -u
check=$1
src=$2
links=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/check_layers_negative.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT

# Only what the check reads: the C files, the arrows and the server's README.
mkdir -p "$work/tree"
(cd "$src" && find . -path ./build -prune -o -path './.*' -prune -o \( -name '*.[ch]' \
    -o -path ./tests/layers.txt -o -path ./server/README.md \) -print0 |
    xargs -0 cp --parents -t "$work/tree") || exit 1
cp "$links" "$work/links"

if ! out=$(python3 "$check" "$work/tree" "$work/links" 2>&1); then
    printf '%s\n' "$out"
    echo "the unchanged copy fails the check"
    exit 1
fi

# A target of minder/ links the first target of server/base the graph names.
minder_target=$(awk '$1 == "minder" { print $2; exit }' "$links")
server_target=$(awk '$1 == "server/base" { print $2; exit }' "$links")
if [ -z "$minder_target" ] || [ -z "$server_target" ]; then
    echo "no target of minder/ or of server/base/ in $links"
    exit 1
fi
printf '#include "store.h"\n' >>"$work/tree/client/cli/main.c"
printf '#include <uv.h>\n' >>"$work/tree/minder/note.c"
printf '#include "rpc.h"\n' >>"$work/tree/server/sched/pump.c"
printf '#include "dispatch.h"\n' >>"$work/tree/server/schedule/cron.c"
sed -i 's/^| `host\/` | `base\/`, /| `host\/` | /' "$work/tree/server/README.md"
awk -v t="$minder_target" -v dep="$server_target" \
    '$1 == "minder" && $2 == t { $0 = $0 " " dep } { print }' "$links" >"$work/links"
out=$(python3 "$check" "$work/tree" "$work/links" 2>&1)
rc=$?
printf '%s\n' "$out"
if [ "$rc" -ne 1 ]; then
    echo "expected exit status 1, got $rc"
    exit 1
fi
set -- "client/cli/main.c: includes store.h from storage/" \
    "server/sched/pump.c: includes rpc.h from server/rpc/" \
    "server/schedule/cron.c: includes dispatch.h from server/sched/" \
    "server/README.md: the row of host/ differs from tests/layers.txt" \
    "minder/CMakeLists.txt: $minder_target links $server_target from server/base/"
# Without musl-gcc the check cannot tell libc's headers from the others.
if command -v musl-gcc >/dev/null 2>&1; then
    set -- "$@" "minder/note.c: includes uv.h, not libc or minder/"
fi
for want in "$@"; do
    if ! printf '%s\n' "$out" | grep -q -F -x -e "check_layers: $want"; then
        echo "expected '$want' to be reported"
        exit 1
    fi
done
echo "all $# forbidden crossings are reported"
