#!/bin/sh
# check_install.sh BUILD_DIR EXAMPLES_DIR [SANITIZERS]: installs the build into a temporary
# prefix, then builds examples/trigger_and_wait.c against it twice (with
# pkg-config and with CMake's find_package) and runs it against a port where
# no server listens, which must fail with UNAVAILABLE, then against a real
# cschedd, where it prints the run's states by name. A library built with
# sanitizers needs them in the program too.
set -eu
build=$1
examples=$2
san_flags=${3:+-fsanitize=$3}
bin=$build/bin
# shellcheck source-path=SCRIPTDIR source=cschedd_test.sh
. "$(dirname "$0")/cschedd_test.sh"

cmake --install "$build" --component client --prefix "$tmp/prefix" >"$tmp/install.log"
test ! -e "$tmp/prefix/include/grpc" || { echo "installed into include/grpc/"; exit 1; }
test -f "$tmp/prefix/share/bash-completion/completions/csched" ||
    { echo "no bash completion installed"; exit 1; }

# As docs/client.md says: PKG_CONFIG_PATH names the prefix's pkgconfig
# directory, and an rpath from the .pc file's libdir finds libcsched.so.0 at
# run time, with no LD_LIBRARY_PATH.
libdir=$(cd "$tmp/prefix" && ls -d lib*/pkgconfig | head -n1 | xargs dirname)
export PKG_CONFIG_PATH="$tmp/prefix/$libdir/pkgconfig"
unset LD_LIBRARY_PATH
test "$(realpath "$(pkg-config --variable=libdir csched)")" = "$(realpath "$tmp/prefix/$libdir")" ||
    { echo "csched.pc libdir: $(pkg-config --variable=libdir csched)"; exit 1; }
# shellcheck disable=SC2046
cc -std=c11 -Wall -Wextra -Werror $san_flags -o "$tmp/example_pc" "$examples/trigger_and_wait.c" \
    $(pkg-config --cflags --libs csched) -Wl,-rpath,"$(pkg-config --variable=libdir csched)"

# As on a machine without libgrpc-dev: pkg-config finds no .pc file but
# csched's and protobuf-c's (PKG_CONFIG_LIBDIR replaces its own search
# path), and the example reads no header of gRPC's (-H lists every header
# read). A dynamic libcsched needs neither.
mkdir "$tmp/no-grpc"
cp "$(pkg-config --variable=pcfiledir libprotobuf-c)/libprotobuf-c.pc" "$tmp/no-grpc/"
flags=$(PKG_CONFIG_LIBDIR="$tmp/no-grpc" pkg-config --cflags --libs csched) ||
    { echo "pkg-config csched needs more than protobuf-c's .pc"; exit 1; }
# shellcheck disable=SC2086
cc -std=c11 -H -fsyntax-only "$examples/trigger_and_wait.c" $flags 2>"$tmp/headers"
if grep '/grpc/' "$tmp/headers"; then
    echo "the example reads gRPC's headers"; exit 1
fi

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

# Against a real cschedd (its embedded PostgreSQL): both builds trigger a
# job and print the run's states by name.
start_server
"$bin/csched" --server "unix:$tmp/csched.sock" job create hello --shell 'exit 0' >/dev/null
for exe in "$tmp/example_pc" "$tmp/cm/trigger_and_wait"; do
    "$exe" "unix:$tmp/csched.sock" hello >"$tmp/out" 2>&1 || { cat "$tmp/out"; exit 1; }
    grep -q '^run [0-9]*: running$' "$tmp/out" && grep -q '^run [0-9]* succeeded: exit 0$' "$tmp/out" ||
        { echo "$exe: no state names"; cat "$tmp/out"; exit 1; }
done
echo "2 passed, 0 failed"
