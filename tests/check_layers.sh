#!/bin/sh
# Fails when a file includes, or a target links, across a boundary between
# the tree's parts that the layering forbids (calls only point down): storage,
# minder or client using server/; client using storage/; the minder using
# anything but libc and its own files.
#
# Usage: check_layers.sh SRCDIR LINKS
#   SRCDIR  the source tree; its folders are its top-level directories that
#           hold a CMakeLists.txt (server, storage, minder, client, ...).
#   LINKS   the link graph, one line per target: FOLDER TARGET LINKED...
#           (tests/layers.cmake writes it at generate time; $<LINK_ONLY:x>
#           counts as x).
#
# An include is resolved as the compiler would find it: beside the including
# file, else in the including file's own folder, else in any other folder of
# the tree. Headers found nowhere in the tree are libraries' or generated
# ones (the protobuf-c messages): the minder may include only those of libc,
# which are the headers musl-gcc sees (when musl-gcc is not installed, the
# minder's <...> headers are not checked, and the check says so).
# Exit status: 0 clean, 1 a violation, 2 bad usage.
set -u
if [ $# -ne 2 ]; then
    echo "usage: check_layers.sh SRCDIR LINKS" >&2
    exit 2
fi
src=$1
links=$2
for f in "$src" "$links"; do
    if [ ! -r "$f" ]; then
        echo "check_layers: cannot read $f" >&2
        exit 2
    fi
done
work=$(mktemp -d "${TMPDIR:-/tmp}/check_layers.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT

# forbidden LAYER OTHER: true when files of LAYER may not use OTHER.
forbidden() {
    case "$1:$2" in
    storage:server | client:server | client:storage) return 0 ;;
    minder:minder) return 1 ;;
    minder:*) return 0 ;;
    esac
    return 1
}

layer_of() {
    printf '%s\n' "${1%%/*}"
}

# Every C file of the tree's folders, relative to SRCDIR.
(
    cd "$src" || exit 2
    for dir in */; do
        dir=${dir%/}
        [ -f "$dir/CMakeLists.txt" ] && find "$dir" -type f \( -name '*.c' -o -name '*.h' \)
    done
) | sort >"$work/files" || exit 2

libc_dirs=""
if command -v musl-gcc >/dev/null 2>&1; then
    libc_dirs=$(echo | musl-gcc -E -Wp,-v - 2>&1 >/dev/null | sed -n 's/^ \(\/.*\)/\1/p')
fi
if [ -z "$libc_dirs" ]; then
    echo "check_layers: no musl-gcc: the minder's <...> headers are not checked against libc"
fi

is_libc_header() {
    for d in $libc_dirs; do
        [ -f "$d/$1" ] && return 0
    done
    return 1
}

# check_include FILE KIND NAME: KIND is '"' or '<'.
check_include() {
    file=$1
    kind=$2
    name=$3
    layer=$(layer_of "$file")
    case "$layer" in
    storage | client | minder) ;;
    *) return ;;
    esac
    if [ "$kind" = '"' ] && [ -f "$src/$(dirname "$file")/$name" ]; then
        found=$(realpath -m --relative-to="$src" "$src/$(dirname "$file")/$name")
    else
        found=$(awk -v n="/$name" 'substr($0, length($0) - length(n) + 1) == n' "$work/files")
    fi
    if [ -n "$found" ]; then
        # The own folder's header wins, as its include directory comes first.
        printf '%s\n' "$found" | grep -q "^$layer/" && return
        for path in $found; do
            other=$(layer_of "$path")
            if forbidden "$layer" "$other"; then
                echo "$file: includes $name from $other/"
                return
            fi
        done
        return
    fi
    [ "$layer" = minder ] || return
    if [ "$kind" = '"' ] || { [ -n "$libc_dirs" ] && ! is_libc_header "$name"; }; then
        echo "$file: includes $name, not libc or minder/"
    fi
}

grep -E -e '^(storage|client|minder)/' "$work/files" | while read -r file; do
    sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*\([<"]\)\([^>"]*\)[>"].*/\1 \2/p' \
        "$src/$file" | while read -r kind name; do
        check_include "$file" "$kind" "$name"
    done
done >"$work/found"

# Links: each target's folder against the folder that defines what it links.
# Targets of the top-level folder carry only build settings (cs_warnings).
awk '{ print $2, $1 }' "$links" >"$work/owners"
while read -r folder target deps; do
    layer=$(layer_of "$folder")
    for dep in $deps; do
        case "$dep" in
        ::@*) continue ;; # CMake's marker of a link set from another folder
        '$<LINK_ONLY:'*'>') dep=${dep#'$<LINK_ONLY:'} && dep=${dep%'>'} ;;
        esac
        owner=$(awk -v t="$dep" '$1 == t { print $2; exit }' "$work/owners")
        if [ -n "$owner" ]; then
            other=$(layer_of "$owner")
            if [ "$owner" != "." ] && forbidden "$layer" "$other"; then
                echo "$folder/CMakeLists.txt: $target links $dep from $other/"
            fi
        elif [ "$layer" = minder ]; then
            echo "$folder/CMakeLists.txt: $target links $dep, not libc or minder/"
        fi
    done
done <"$links" >>"$work/found"

sort -u "$work/found" >"$work/bad"
n_bad=$(wc -l <"$work/bad")
if [ "$n_bad" -ne 0 ]; then
    sed 's/^/check_layers: /' "$work/bad" >&2
    echo "check_layers: $n_bad crossings of a forbidden boundary" >&2
    exit 1
fi
echo "check_layers: $(wc -l <"$work/files") files and $(wc -l <"$links") targets checked: no crossings"
exit 0
