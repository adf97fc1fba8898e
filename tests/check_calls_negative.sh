#!/bin/sh
# The call-circle check must be able to fail: two objects that call each
# other, and three that call round in a circle, must each be reported.
# Usage: check_calls_negative.sh CHECK_CALLS_SH CC
set -u
check=$1
cc=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/check_calls_neg.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT

# unit NAME CALLEE DIR: DIR/NAME.c.o defines NAME_f, which calls CALLEE_f.
unit() {
    mkdir -p "$work/$3"
    printf 'void %s_f(void);\nvoid %s_f(void);\nvoid %s_f(void) { %s_f(); }\n' "$2" "$1" "$1" "$2" \
        >"$work/$1.c"
    "$cc" -c -o "$work/$3/$1.c.o" "$work/$1.c" || exit 2
}

fail=0
# expect DIR PATTERN: the check fails on DIR and prints PATTERN.
expect() {
    out=$(sh "$check" "$work/$1")
    rc=$?
    if [ "$rc" -ne 1 ] || ! printf '%s\n' "$out" | grep -q "$2"; then
        echo "check_calls_negative: on $1 expected exit 1 and '$2', got $rc:"
        printf '%s\n' "$out"
        fail=1
    fi
}

unit up down pair
unit down up pair
expect pair 'down.c <-> up.c: down.c calls up_f, up.c calls down_f'
unit a b ring
unit b c ring
unit c a ring
expect ring 'input contains a loop'
unit top mid line
unit mid low line
unit low none line
if ! sh "$check" "$work/line" >/dev/null; then
    echo "check_calls_negative: calls that only point down were reported"
    fail=1
fi
[ "$fail" -eq 0 ] && echo "check_calls_negative: both circles reported, the line passed"
exit "$fail"
