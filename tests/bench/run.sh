#!/bin/sh
# Runs the csched benchmark against the programs of one build:
#   tests/bench/run.sh BUILD_DIR [--fsync on|off] [--only A|T|S|API|M[,...]] [--repeat N]
#                      [--s-seconds N] [--s-rate R] [--api-calls N]
# The table goes to stdout, progress and per-workload details to stderr.
set -eu
if [ $# -lt 1 ]; then
    echo "usage: $0 BUILD_DIR [--fsync on|off] [--only A|T|S|API|M[,...]] [--repeat N]" \
        "[--s-seconds N] [--s-rate R] [--api-calls N]" >&2
    exit 2
fi
build=$1
shift
for program in cschedd csched-minder csched-floor csched-bench csched-bench-rpcfloor; do
    if [ ! -x "$build/bin/$program" ]; then
        echo "$0: $build/bin/$program is missing; build first: cmake --build $build" >&2
        exit 1
    fi
done
CSCHED_BIN_DIR=$build/bin exec "$build/bin/csched-bench" "$@"
