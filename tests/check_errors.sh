#!/bin/sh
# Fails when code of server/, storage/, client/ or minder/ (and the folders
# below them) breaks the error convention (docs/architecture.md, "House
# rules"): a function returns 0 or a negative errno, and a message for a
# person goes in a struct cs_err (the CLI's struct cs_cli_err). It looks for
#   - a bare "return -1;": a failure says which errno it is (-EINVAL,
#     -errno), a value that means "none" is a named one;
#   - a cs_ or uv_ call's result negated ("rc = -cs_x(...)"): those return
#     -errno already, and negating one makes a positive errno of it, and
#     0 mean either success or failure once the caller turns it back;
#   - outside server/rpc (the transport, whose refusals name no field), a
#     cs_call_fail with -EINVAL: an INVALID_ARGUMENT is about a field of the
#     request, so it goes through cs_call_fail_field or cs_call_fail_err,
#     which attach the google.rpc.BadRequest naming it;
#   - in client/cli, a flag parser (a function whose name ends in _flag)
#     that returns a bare 0 or 1, an exit code or a printed usage error:
#     it returns CS_CLI_FLAG_NOT_MINE, CS_CLI_FLAG_TAKEN or a negative
#     errno with its struct cs_cli_err, and its caller prints.
#
# Usage: check_errors.sh SRCDIR
# Prints each offence as "FILE:LINE: what: the line".
# Exit status: 0 clean, 1 an offence, 2 bad usage.
set -u
if [ $# -ne 1 ] || [ ! -d "$1" ]; then
    echo "usage: check_errors.sh SRCDIR" >&2
    exit 2
fi
cd "$1" || exit 2
work=$(mktemp -d "${TMPDIR:-/tmp}/check_errors.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT

for dir in server storage client minder; do
    [ -d "$dir" ] && find "$dir" -name '*.[ch]'
done | sort >"$work/files"
if [ ! -s "$work/files" ]; then
    echo "check_errors: no C files under $1" >&2
    exit 2
fi

# -H names the file even when there is one.
tr '\n' '\0' <"$work/files" |
    xargs -0 grep -HnE 'return[[:space:]]*\(?[[:space:]]*-1[[:space:]]*\)?[[:space:]]*;' |
    sed 's/^\([^:]*:[0-9]*\):/\1: a bare return -1 (return a negative errno, or name the value):/' \
        >"$work/report"
tr '\n' '\0' <"$work/files" |
    xargs -0 grep -HnE '(=|\(|,|\?|:|return)[[:space:]]*-[[:space:]]*(cs|uv)_[a-z0-9_]*\(' |
    sed 's/^\([^:]*:[0-9]*\):/\1: a negated -errno (the call returns one already):/' \
        >>"$work/report"

grep '^server/' "$work/files" | grep -v '^server/rpc/' | tr '\n' '\0' |
    xargs -0 grep -HnE 'cs_call_fail\([^,]*,[[:space:]]*-EINVAL' |
    sed 's/^\([^:]*:[0-9]*\):/\1: an INVALID_ARGUMENT without its field (cs_call_fail_field):/' \
        >>"$work/report"

# A flag parser's body runs from a definition line (at the start of a line,
# a name ending in _flag, no ';') through its opening brace to the closing
# brace at the start of a line.
grep '^client/cli/.*\.c$' "$work/files" | while read -r f; do
    awk -v f="$f" '
    /^[a-z].*[a-z0-9]_flag\(/ && !/;[[:space:]]*$/ { def = 1; next }
    def && /^\{/ { body = 1; def = 0; next }
    def && /;[[:space:]]*$/ { def = 0 }
    body && /^\}/ { body = 0 }
    body && /return[[:space:]]+([01][[:space:]]*;|CS_EXIT_[A-Z_]+|cs_cli_usage\()/ {
        line = $0
        sub(/^[[:space:]]+/, "", line)
        printf "%s:%d: a flag parser returning other than a cs_cli_flag_result or -errno: %s\n", f, NR, line
    }' "$f"
done >>"$work/report"

if [ -s "$work/report" ]; then
    cat "$work/report"
    echo "check_errors: $(wc -l <"$work/report") breaks of the error convention (0 or a negative errno; a flag parser's cs_cli_flag_result)"
    exit 1
fi
echo "check_errors: $(wc -l <"$work/files") files keep the error convention"
