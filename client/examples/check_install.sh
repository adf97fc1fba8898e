#!/bin/sh
# check_install.sh BUILD_DIR EXAMPLES_DIR [SANITIZERS]: installs the build into a temporary
# prefix, then builds examples/trigger_and_wait.c against it twice (with
# pkg-config and with CMake's find_package) and runs it against a port where
# no server listens, which must fail with UNAVAILABLE. A library built with
# sanitizers needs them in the program too.
set -eu
build=$1
examples=$2
san_flags=${3:+-fsanitize=$3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cmake --install "$build" --component client --prefix "$tmp/prefix" >"$tmp/install.log"
test ! -e "$tmp/prefix/include/grpc" || { echo "installed into include/grpc/"; exit 1; }

libdir=$(cd "$tmp/prefix" && ls -d lib*/pkgconfig | head -n1 | xargs dirname)
export PKG_CONFIG_PATH="$tmp/prefix/$libdir/pkgconfig"
export LD_LIBRARY_PATH="$tmp/prefix/$libdir"
# shellcheck disable=SC2046
cc -std=c11 -Wall -Wextra -Werror $san_flags -o "$tmp/example_pc" "$examples/trigger_and_wait.c" \
    $(pkg-config --cflags --libs csched)

cmake -S "$examples" -B "$tmp/cm" -DCMAKE_PREFIX_PATH="$tmp/prefix" \
    -DCMAKE_C_FLAGS="$san_flags" >"$tmp/cmake.log"
cmake --build "$tmp/cm" >"$tmp/build.log"

for exe in "$tmp/example_pc" "$tmp/cm/trigger_and_wait"; do
    # Exit 1 is the example's own failure; anything else (a sanitizer's
    # report, a crash) is not.
    rc=0
    "$exe" 127.0.0.1:1 somejob >"$tmp/out" 2>&1 || rc=$?
    if [ "$rc" -ne 1 ] || ! grep -q UNAVAILABLE "$tmp/out"; then
        echo "$exe exited $rc"; cat "$tmp/out"; exit 1
    fi
done
echo "1 passed, 0 failed"
