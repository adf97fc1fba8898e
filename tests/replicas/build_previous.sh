#!/usr/bin/env bash
# build_previous.sh SOURCE COMMIT OUT: builds cschedd and csched-minder of
# COMMIT (from SOURCE's git history) into OUT/bin, for the upgrade test
# (replicas_upgrade): the replica of the previous migration set. Kept
# while OUT/commit names COMMIT, so a build dir builds it once.
set -euo pipefail

source=$1 commit=$2 out=$3

if [ -x "$out/bin/cschedd" ] && [ "$(cat "$out/commit" 2>/dev/null)" = "$commit" ]; then
    echo "previous cschedd ($commit) already built in $out"
    exit 0
fi
rm -rf "$out"
mkdir -p "$out/src"
git -C "$source" archive "$commit" | tar -x -C "$out/src"
log=$out/build.log
if ! { cmake -S "$out/src" -B "$out/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCSCHED_SANITIZE= &&
       cmake --build "$out/build" -j "$(nproc)" --target cschedd csched_minder; } >"$log" 2>&1; then
    tail -n 40 "$log"
    echo "build_previous.sh: building $commit failed; the whole log is $log" >&2
    exit 1
fi
ln -s build/bin "$out/bin"
echo "$commit" >"$out/commit"
echo "previous cschedd ($commit) built in $out"
