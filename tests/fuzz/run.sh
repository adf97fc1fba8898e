#!/usr/bin/env bash
# run.sh: fuzzes every target of tests/fuzz for a fixed time each, one after
# the other, as CI does (tests/run-all.sh).
#
#   tests/fuzz/run.sh BUILD_DIR [SECONDS]    (default 20 seconds a target)
#
# BUILD_DIR is a build configured with -DCMAKE_C_COMPILER=clang
# -DCSCHED_FUZZ=ON whose fuzz_* targets are built. Each target starts from a
# copy of its committed corpus in a temporary directory, so nothing is
# written into the repo; what fails (crash, leak, timeout, out of memory)
# is kept under $CSCHED_FUZZ_OUT (default: a new directory under /tmp),
# with the log. Exit status 0 only when every target ran clean.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[ $# -ge 1 ] || {
    sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
}
bin=$1/bin
seconds=${2:-20}
out=${CSCHED_FUZZ_OUT:-$(mktemp -d /tmp/csched-fuzz.XXXXXX)}
failed=0

for corpus in "$here"/corpus/*/; do
    name=$(basename "$corpus")
    target=$bin/fuzz_$name
    if [ ! -x "$target" ]; then
        echo "fuzz_$name: not built in $1 (build it with --target fuzz_$name)"
        failed=1
        continue
    fi
    work=$out/$name
    rm -rf "$work"
    mkdir -p "$work/corpus" "$work/artifacts"
    cp "$corpus"* "$work/corpus/"
    args=(-max_total_time="$seconds" -timeout=5 -rss_limit_mb=2048 -print_final_stats=1
        -artifact_prefix="$work/artifacts/")
    [ ! -f "$here/$name.dict" ] || args+=(-dict="$here/$name.dict")
    if (cd "$work" && "$target" "${args[@]}" "$work/corpus" >"$work/log" 2>&1); then
        echo "fuzz_$name: ok, $(grep -m1 -o 'stat::number_of_executed_units: [0-9]*' "$work/log" |
            grep -o '[0-9]*$') inputs in ${seconds}s"
    else
        echo "fuzz_$name: FAILED; the log and the input are in $work:"
        grep -E '^==[0-9]+==ERROR|^SUMMARY|Test unit written to' "$work/log" || tail -n 20 "$work/log"
        failed=1
    fi
done
exit "$failed"
