#!/bin/sh
# The error-convention check must be able to fail: on a small tree with a
# bare return -1, a negated -errno, an INVALID_ARGUMENT without its field
# and a flag parser that returns 1, it must
# report each; on the same tree written to the convention, nothing.
# Usage: check_errors_negative.sh CHECK_ERRORS_SH
set -u
check=$1
work=$(mktemp -d "${TMPDIR:-/tmp}/check_errors_neg.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT

# tree DIR BAD: writes DIR/server, DIR/storage and DIR/client/cli, with the
# offences if BAD is 1, written to the convention if 0.
tree() {
    mkdir -p "$1/server" "$1/storage" "$1/client/cli"
    if [ "$2" -eq 1 ]; then
        failed='-1' negate='-' taken='1' not_mine='0'
    else
        failed='-EINVAL' negate='' taken='CS_CLI_FLAG_TAKEN' not_mine='CS_CLI_FLAG_NOT_MINE'
    fi
    cat >"$1/server/open.c" <<EOF
int cs_open(const char *path)
{
    if (path == 0)
        return $failed;
    return 0;
}
EOF
    if [ "$2" -eq 1 ]; then
        fail_call='cs_call_fail(call, -EINVAL, "to_unix_ms is before from_unix_ms")'
    else
        fail_call='cs_call_fail_field(call, -EINVAL, "to_unix_ms", "to_unix_ms is before from_unix_ms")'
    fi
    cat >"$1/server/list.c" <<EOF
void cs_list(struct cs_call *call)
{
    $fail_call;
}
EOF
    cat >"$1/storage/start.c" <<EOF
int cs_start(void)
{
    int rc = ${negate}cs_open("x");
    long left_ms = 5 - cs_now_ms();
    return rc < 0 || left_ms < 0 ? rc : 0;
}
EOF
    cat >"$1/client/cli/size.c" <<EOF
static int count(int n)
{
    return n > 0 ? 1 : 0;
}

int cs_cli_size_flag(int argc, char **argv, int *i, struct cs_cli_err *err)
{
    if (count(argc) == 0)
        return $not_mine;
    return $taken;
}
EOF
}

fail=0
tree "$work/bad" 1
out=$(sh "$check" "$work/bad")
rc=$?
for want in 'server/open.c:4: a bare return -1' 'storage/start.c:3: a negated -errno' \
    'server/list.c:3: an INVALID_ARGUMENT without its field' \
    'client/cli/size.c:9: a flag parser returning' 'client/cli/size.c:10: a flag parser returning'; do
    if [ "$rc" -ne 1 ] || ! printf '%s\n' "$out" | grep -q "$want"; then
        echo "check_errors_negative: expected exit 1 and '$want', got $rc:"
        printf '%s\n' "$out"
        fail=1
    fi
done
if printf '%s\n' "$out" | grep -q 'size.c:3:'; then
    echo "check_errors_negative: a return 1 outside a flag parser was reported:"
    printf '%s\n' "$out"
    fail=1
fi
tree "$work/good" 0
if ! out=$(sh "$check" "$work/good"); then
    echo "check_errors_negative: code written to the convention was reported:"
    printf '%s\n' "$out"
    fail=1
fi
[ "$fail" -eq 0 ] && echo "check_errors_negative: every offence reported, the tree written to the convention passed"
exit "$fail"
