#!/bin/sh
# Fails when the calls between object files go round in a circle: inside
# server/ and storage/ every call points down, so if a.c calls into b.c,
# nothing b.c calls, directly or through others, calls back into a.c. A
# lower module that must report upwards takes a callback at init instead.
#
# Usage: check_calls.sh OBJECT_OR_DIR...
#   Each object file given, and every *.o below each DIR given, is one
#   module's object, named by its source file (pump.c.o is pump.c). A call
#   is an undefined symbol of one object that another object defines.
# Prints each pair that calls each other as "a.c <-> b.c: a.c calls f, b.c
# calls g", and each longer circle as tsort(1) reports it.
# Exit status: 0 no circle, 1 a circle, 2 bad usage.
set -u
if [ $# -lt 1 ]; then
    echo "usage: check_calls.sh OBJECT_OR_DIR..." >&2
    exit 2
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/check_calls.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT

find "$@" -name '*.o' | sort >"$work/objects"
if [ ! -s "$work/objects" ]; then
    echo "check_calls: no object files under $*" >&2
    exit 2
fi

# One line per symbol: "D object symbol" for a definition, "U object symbol"
# for a use.
while read -r obj; do
    name=$(basename "$obj" .o)
    nm --defined-only -g "$obj" | awk -v o="$name" 'NF == 3 && $2 ~ /[TDBR]/ { print "D", o, $3 }'
    nm -u "$obj" | awk -v o="$name" '{ print "U", o, $NF }'
done <"$work/objects" >"$work/symbols"

# The call graph, one "caller callee symbol" line per pair of objects (the
# first symbol that links them). Two passes: every definition, then every use.
awk '
NR == FNR { if ($1 == "D") owner[$3] = $2; next }
$1 == "U" && owner[$3] != "" && owner[$3] != $2 && !(($2, owner[$3]) in seen) {
    seen[$2, owner[$3]] = 1
    print $2, owner[$3], $3
}' "$work/symbols" "$work/symbols" >"$work/calls"

awk '
{ via[$1, $2] = $3 }
END {
    for (k in via) {
        split(k, p, SUBSEP)
        if (p[1] < p[2] && (p[2], p[1]) in via)
            printf "%s <-> %s: %s calls %s, %s calls %s\n", p[1], p[2], p[1], via[k], p[2], via[p[2], p[1]]
    }
}' "$work/calls" | sort >"$work/report"
cut -d' ' -f1,2 "$work/calls" | tsort >/dev/null 2>"$work/circles" || true
if [ -s "$work/report" ] || [ -s "$work/circles" ]; then
    cat "$work/report" "$work/circles"
    echo "check_calls: calls between objects go round in a circle; give the lower one a callback at init"
    exit 1
fi
echo "check_calls: $(wc -l <"$work/objects") objects, $(wc -l <"$work/calls") calls between them, no circle"
