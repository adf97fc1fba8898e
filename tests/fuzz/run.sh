#!/usr/bin/env bash
# run.sh: fuzzes every target of tests/fuzz for a fixed time each, as many
# at once as the machine has cores (each libFuzzer process uses one), as CI
# does (tests/run-all.sh).
#
#   tests/fuzz/run.sh BUILD_DIR [SECONDS]    (default 20 seconds a target)
#
# BUILD_DIR is a build configured with -DCMAKE_C_COMPILER=clang
# -DCSCHED_FUZZ=ON whose fuzz_* targets are built. Each target starts from a
# copy of its committed corpus in a temporary directory, so nothing is
# written into the repo; what fails (crash, leak, timeout, out of memory)
# is kept under $CSCHED_FUZZ_OUT (default: a new directory under /tmp),
# with the log. Exit status 0 only when every target ran clean.
# CSCHED_FUZZ_JOBS: targets fuzzed at once (default nproc).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[ $# -ge 1 ] || {
    sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
}
bin=$1/bin
seconds=${2:-20}
out=${CSCHED_FUZZ_OUT:-$(mktemp -d /tmp/csched-fuzz.XXXXXX)}
jobs=${CSCHED_FUZZ_JOBS:-$(nproc)}

# fuzz_one NAME CORPUS: fuzzes one target; prints one line, and the
# failure's details, when it ends; exit status 0 when it ran clean.
fuzz_one() {
    local name=$1 corpus=$2 target=$bin/fuzz_$1 work=$out/$1
    if [ ! -x "$target" ]; then
        echo "fuzz_$name: not built in ${bin%/bin} (build it with --target fuzz_$name)"
        return 1
    fi
    rm -rf "$work"
    mkdir -p "$work/corpus" "$work/artifacts"
    cp "$corpus"* "$work/corpus/"
    local args=(-max_total_time="$seconds" -timeout=5 -rss_limit_mb=2048 -print_final_stats=1
        -artifact_prefix="$work/artifacts/")
    [ ! -f "$here/$name.dict" ] || args+=(-dict="$here/$name.dict")
    if (cd "$work" && "$target" "${args[@]}" "$work/corpus" >"$work/log" 2>&1); then
        echo "fuzz_$name: ok, $(grep -m1 -o 'stat::number_of_executed_units: [0-9]*' "$work/log" |
            grep -o '[0-9]*$') inputs in ${seconds}s"
        return 0
    fi
    echo "fuzz_$name: FAILED; the log and the input are in $work:"
    grep -E '^==[0-9]+==ERROR|^SUMMARY|Test unit written to' "$work/log" || tail -n 20 "$work/log"
    return 1
}

failed=0
running=0
for corpus in "$here"/corpus/*/; do
    if [ "$running" -ge "$jobs" ]; then
        wait -n || failed=1
        running=$((running - 1))
    fi
    fuzz_one "$(basename "$corpus")" "$corpus" &
    running=$((running + 1))
done
while [ "$running" -gt 0 ]; do
    wait -n || failed=1
    running=$((running - 1))
done
exit "$failed"
