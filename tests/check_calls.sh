#!/bin/sh
# Fails when the calls between object files go round in a circle: inside
# server/, storage/, client/ and minder/ every call points down, so if a.c
# calls into b.c, nothing b.c calls, directly or through others, calls back
# into a.c. A lower module that must report upwards takes a callback at
# init instead. Fails too when two source files define the same global
# symbol (main, one per program, aside): a call must name one definition,
# and a program that linked both would get either.
#
# Usage: check_calls.sh OBJECT_OR_DIR...
#   Each object file given, and every *.o below each DIR given, is one
#   module's object, named by its source file's path below the directory
#   all of them share, CMake's CMakeFiles/TARGET.dir/ left out
#   (server/CMakeFiles/cs_core.dir/pump.c.o is server/pump.c), so that
#   client/cli/schedule.c and server/schedule.c are two modules, and a
#   source built into two targets is one. A call is an undefined symbol of
#   one object that another object defines.
# Prints each pair that calls each other as "a.c <-> b.c: a.c calls f, b.c
# calls g", each longer circle as tsort(1) reports it, and each symbol
# defined twice as "f: defined in both a.c and b.c".
# Exit status: 0 no circle and no symbol defined twice, 1 one of them, 2
# bad usage.
set -u
if [ $# -lt 1 ]; then
    echo "usage: check_calls.sh OBJECT_OR_DIR..." >&2
    exit 2
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/check_calls.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT

find "$@" -name '*.o' | sort -u >"$work/objects"
if [ ! -s "$work/objects" ]; then
    echo "check_calls: no object files under $*" >&2
    exit 2
fi

# "OBJECT<tab>MODULE" per object: the path without CMakeFiles/TARGET.dir/
# and .o, then without the leading directories all objects share.
awk '
{ path[NR] = $0; n = $0; sub(/\/CMakeFiles\/[^\/]*\.dir\//, "/", n); sub(/\.o$/, "", n); name[NR] = n }
END {
    shared = name[1]
    sub(/[^\/]*$/, "", shared)
    for (i = 2; i <= NR; i++)
        while (shared != "" && index(name[i], shared) != 1)
            sub(/[^\/]*\/$/, "", shared)
    for (i = 1; i <= NR; i++)
        printf "%s\t%s\n", path[i], substr(name[i], length(shared) + 1)
}' "$work/objects" >"$work/modules"

# One line per symbol: "D module symbol" for a definition, "U module
# symbol" for a use. One nm for all objects (nm -A names each line's
# object): a process per object costs more than the rest of the check.
tr '\n' '\0' <"$work/objects" | xargs -0 nm -A --defined-only -g >"$work/defined" || exit 2
tr '\n' '\0' <"$work/objects" | xargs -0 nm -A -u >"$work/used" || exit 2
awk -F'\t' '
FILENAME == ARGV[1] { module[$1] = $2; next }
{
    n = split($0, f, " ")
    obj = f[1]
    sub(/:[^:]*$/, "", obj)
    if (FILENAME == ARGV[2] && n == 3 && f[2] ~ /^[TDBR]$/)
        print "D", module[obj], f[3]
    else if (FILENAME == ARGV[3] && f[2] == "U")
        print "U", module[obj], f[3]
}' "$work/modules" "$work/defined" "$work/used" | sort -u >"$work/symbols"

# A symbol two modules define.
awk '$1 == "D" && $3 != "main" { print $3, $2 }' "$work/symbols" | sort | awk '
$1 == last { printf "%s: defined in both %s and %s\n", $1, last_module, $2 }
{ last = $1; last_module = $2 }' >"$work/twice"

# The call graph, one "caller callee symbol" line per pair of modules (the
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
status=0
if [ -s "$work/report" ] || [ -s "$work/circles" ]; then
    cat "$work/report" "$work/circles"
    echo "check_calls: calls between objects go round in a circle; give the lower one a callback at init"
    status=1
fi
if [ -s "$work/twice" ]; then
    cat "$work/twice"
    echo "check_calls: a global symbol is defined twice; keep one definition, or rename the one that means something else"
    status=1
fi
[ "$status" -eq 0 ] &&
    echo "check_calls: $(cut -f2 "$work/modules" | sort -u | wc -l) modules, $(wc -l <"$work/calls") calls between them, no circle, no symbol defined twice"
exit "$status"
