#!/bin/sh
# The call-circle check must be able to fail: two objects that call each
# other, three that call round in a circle, and two that define the same
# symbol must each be reported; calls that only point down, and two files
# of one name in two folders, must pass.
# Usage: check_calls_negative.sh CHECK_CALLS_SH CC
set -u
check=$1
cc=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/check_calls_neg.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT

# unit OBJECT NAME CALLEE: $work/OBJECT defines NAME_f, which calls CALLEE_f.
unit() {
    mkdir -p "$(dirname "$work/$1")"
    printf 'void %s_f(void);\nvoid %s_f(void);\nvoid %s_f(void) { %s_f(); }\n' "$3" "$2" "$2" "$3" \
        >"$work/unit.c"
    "$cc" -c -o "$work/$1" "$work/unit.c" || exit 2
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
# expect_pass DIR WHY: the check passes on DIR.
expect_pass() {
    if ! out=$(sh "$check" "$work/$1"); then
        echo "check_calls_negative: $2 were reported:"
        printf '%s\n' "$out"
        fail=1
    fi
}

unit pair/up.c.o up down
unit pair/down.c.o down up
expect pair 'down.c <-> up.c: down.c calls up_f, up.c calls down_f'
unit ring/a.c.o a b
unit ring/b.c.o b c
unit ring/c.c.o c a
expect ring 'input contains a loop'
unit twice/one.c.o same none
unit twice/two.c.o same none
expect twice 'same_f: defined in both one.c and two.c'
unit line/top.c.o top mid
unit line/mid.c.o mid low
unit line/low.c.o low none
expect_pass line "calls that only point down"
# one/s.c calls two/r.c, which calls two/s.c: a circle only if both s.c
# were one module. two/s.c built into two targets is one module, which
# defines its symbol once.
unit folders/one/CMakeFiles/t.dir/s.c.o one_s two_r
unit folders/two/CMakeFiles/u.dir/r.c.o two_r two_s
unit folders/two/CMakeFiles/u.dir/s.c.o two_s none
unit folders/two/CMakeFiles/v.dir/s.c.o two_s none
expect_pass folders "files of one name in two folders, or a file in two targets,"
[ "$fail" -eq 0 ] && echo "check_calls_negative: both circles and the symbol defined twice reported, the line and the folders passed"
exit "$fail"
