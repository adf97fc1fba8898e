#!/usr/bin/env bash
# run-all.sh: every check csched has, in the order CI runs them.
#
#   1. install the Debian packages (deploy/install-deps.sh)
#   2. clang-format --dry-run --Werror over our own *.c and *.h
#   3. a plain build of every target, Release (-O3, what deploy/quickstart.sh,
#      the package and the image install: -O3 brings warnings of its own, and
#      -Werror makes them errors), and all of ctest
#   4. tests/deploy_lint.sh over deploy/ (checking cschedd's flags with the
#      plain build's binary), and tests/package_test.sh: the Debian package of
#      the plain build, installed and started on a clean Debian 12 root; both
#      run while the next stage compiles, and are waited for before its tests
#   5. an ASan+UBSan build (leak detection on) and all of ctest again, but
#      the label replicas: real cschedd processes cut off and killed, whose
#      timings are what those tests check, run once, in stage 3
#   6. csched-minder built with the sanitizers too, and its own tests
#   7. the libFuzzer targets (tests/fuzz/) in a clang build: their committed
#      corpora replayed (ctest -L fuzz), then each fuzzed for a fixed time,
#      as many at once as there are cores
#   8. the container images built offline from the plain build
#      (deploy/image/build.sh), and the replicas run in them as deploy/k8s's
#      StatefulSet says (ctest -L containers in the plain build); skipped,
#      saying why, where podman, runc or mmdebstrap are missing
#
# Every stage runs even when an earlier one failed; the exit status is 0 only
# when all of them passed. Benchmarks (tests/bench/) are not run.
#
# Environment: CSCHED_BUILD_ROOT (default <repo>/build; builds go to plain/,
# asan/, asan-minder/ and fuzz/ under it, the images' OCI archives
# to image/), CSCHED_JOBS (parallel compile jobs, default nproc),
# CSCHED_CTEST_JOBS (tests at once, default CSCHED_JOBS),
# CSCHED_SKIP_DEPS=1 to skip stage 1, CSCHED_FUZZ_SECONDS (per fuzz target,
# default 20).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_root=${CSCHED_BUILD_ROOT:-$repo/build}
jobs=${CSCHED_JOBS:-$(nproc)}
ctest_jobs=${CSCHED_CTEST_JOBS:-$jobs}
summary=()
failed=0

# stage TITLE: a stage's heading, with the seconds run-all has taken so far.
stage() {
    printf '\n==== %s (at %d s)\n' "$*" "$SECONDS"
}

record() {
    summary+=("$(printf '%-12s %s' "$1" "$2")")
}

check_format() {
    local files=() bad=() out rc
    if git -C "$repo" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
        mapfile -t files < <(git -C "$repo" ls-files -- '*.c' '*.h')
    else
        mapfile -t files < <(cd "$repo" && find . -path ./build -prune -o \
            \( -name '*.c' -o -name '*.h' \) -print | sed 's|^\./||' | sort)
    fi
    # Many files to a clang-format (starting one costs more than checking a
    # file), as many at once as there are cores; each violation it reports
    # names its file.
    out=$(cd "$repo" && printf '%s\0' "${files[@]}" |
        xargs -0 -n 100 -P "$jobs" clang-format --dry-run --Werror 2>&1 >/dev/null) && rc=0 || rc=$?
    mapfile -t bad < <(grep -oE '^[^:]+:[0-9]+:[0-9]+: error: code should be clang-formatted' \
        <<<"$out" | cut -d: -f1 | sort -u)
    if [ "$rc" -ne 0 ] && [ ${#bad[@]} -eq 0 ]; then
        printf '%s\n' "$out"
        record format "FAILED (clang-format exit status $rc)"
        return 1
    fi
    if [ ${#bad[@]} -eq 0 ]; then
        echo "clang-format: ${#files[@]} files formatted"
        record format "ok (${#files[@]} files)"
        return 0
    fi
    echo "clang-format: ${#bad[@]} of ${#files[@]} files need formatting:"
    printf '  %s\n' "${bad[@]}"
    echo "fix with: clang-format -i <file>..."
    record format "FAILED (${#bad[@]} of ${#files[@]} files not formatted)"
    return 1
}

# build_and_test NAME DIR TARGETS TESTS LABELS [cmake args...]: configure
# (RelWithDebInfo unless the args say otherwise), build TARGETS (empty:
# everything; last_built says whether it was), call before_tests (a
# command, when set), and run the ctest
# tests whose names match the regex TESTS (empty: all of them) and whose
# labels do not match the regex LABELS.
build_and_test() {
    local name=$1 dir=$2 targets=$3 tests=$4 labels=$5 log rc line
    local build_args=() ctest_args=()
    shift 5
    last_built=0
    log=$dir/ctest.log
    rm -f "$log"
    mkdir -p "$dir"
    if ! cmake -S "$repo" -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >"$dir.configure.log" 2>&1; then
        cat "$dir.configure.log"
        record "$name" "FAILED (cmake configure)"
        return 1
    fi
    if [ -n "$targets" ]; then
        read -r -a build_args <<<"$targets"
        build_args=(--target "${build_args[@]}")
    fi
    if ! cmake --build "$dir" -j "$jobs" "${build_args[@]}"; then
        record "$name" "FAILED (build)"
        return 1
    fi
    last_built=1
    [ -z "${before_tests:-}" ] || "$before_tests"
    [ -z "$tests" ] || ctest_args=(-R "$tests")
    # As many at once as there are cores; the tests whose timings or CPU
    # another test would disturb (the concurrency and replicas tests among
    # them) are RUN_SERIAL and run alone (tests/CMakeLists.txt).
    set +e
    ctest --test-dir "$dir" --output-on-failure --no-tests=error --timeout 900 -j "$ctest_jobs" \
        -LE "$labels" "${ctest_args[@]}" 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
    set -e
    line=$(grep -E '^[0-9]+% tests passed' "$log" | tail -n 1 || true)
    if [ "$rc" -eq 0 ]; then
        record "$name" "ok: ${line:-ctest passed}"
        return 0
    fi
    record "$name" "FAILED: ${line:-ctest exit status $rc}"
    return 1
}

mkdir -p "$build_root"

if [ "${CSCHED_SKIP_DEPS:-0}" != 1 ]; then
    stage "dependencies"
    "$repo/deploy/install-deps.sh"
fi

stage "format"
check_format || failed=1

stage "plain build (Release) and ctest ($build_root/plain)"
# The label containers needs the images: the image stage runs it.
build_and_test plain "$build_root/plain" "" "" 'bench|containers' -DCMAKE_BUILD_TYPE=Release \
    -DCSCHED_SANITIZE= -DCSCHED_MINDER_MUSL=ON || failed=1
plain_built=$last_built

# deploy_and_package: stage 4, its output into $build_root/deploy-package.log.
deploy_and_package() {
    local started=$SECONDS
    if CSCHED_BIN_DIR="$build_root/plain/bin" CSCHED_DEPLOY_WORK="$build_root/deploy-validate" \
        "$repo/tests/deploy_lint.sh"; then
        echo "deploy ok ($((SECONDS - started)) s)"
    else
        echo "deploy FAILED ($((SECONDS - started)) s)"
    fi
    started=$SECONDS
    if "$repo/tests/package_test.sh" "$build_root/plain" "$build_root/package"; then
        echo "package ok ($((SECONDS - started)) s)"
    else
        echo "package FAILED ($((SECONDS - started)) s)"
    fi
}

# wait_deploy_and_package: waits for stage 4, shows its output and records
# its two results.
wait_deploy_and_package() {
    local result line
    deploy_waited=1
    wait "$deploy_pid" || true
    stage "deploy lint and package (run during the ASan build)"
    cat "$build_root/deploy-package.log"
    for result in deploy package; do
        line=$(grep -E "^$result (ok|FAILED) " "$build_root/deploy-package.log" | tail -n 1 || true)
        record "$result" "${line#"$result "}"
        case $line in "$result ok"*) ;; *) failed=1 ;; esac
    done
}

deploy_and_package >"$build_root/deploy-package.log" 2>&1 &
deploy_pid=$!
deploy_waited=0

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
export LSAN_OPTIONS=suppressions=$repo/tests/lsan.supp:print_suppressions=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

stage "ASan+UBSan build and ctest ($build_root/asan)"
# The minder stays the static musl build that production runs: an
# instrumented minder costs several times the CPU per attempt, which the
# concurrency tests' time bounds cannot absorb. The next stage covers it.
# The web console is the plain build's to build and test (tests/browser): its
# bundle is the same under the sanitizers.
before_tests=wait_deploy_and_package
build_and_test asan "$build_root/asan" "" "" 'bench|replicas|containers' \
    -DCSCHED_SANITIZE=address,undefined \
    -DCSCHED_MINDER_MUSL=ON -DCSCHED_CONSOLE=OFF || failed=1
before_tests=
# Configure or build failed before the hook ran.
[ "$deploy_waited" -eq 1 ] || wait_deploy_and_package

stage "ASan+UBSan csched-minder and its tests ($build_root/asan-minder)"
build_and_test asan-minder "$build_root/asan-minder" "csched_minder test_minder test_note" \
    '^unit_(minder|note)$' bench -DCSCHED_SANITIZE=address,undefined -DCSCHED_MINDER_MUSL=OFF \
    -DCSCHED_CONSOLE=OFF ||
    failed=1

stage "libFuzzer targets: corpus replay and ${CSCHED_FUZZ_SECONDS:-20}s of fuzzing each ($build_root/fuzz)"
# Only the fuzz targets are built: clang instruments what they link. What a
# fuzzer finds is kept under fuzz-out/, never in the repo.
if build_and_test fuzz "$build_root/fuzz" fuzz_targets '^fuzz_' bench -DCMAKE_C_COMPILER=clang \
    -DCSCHED_FUZZ=ON -DCSCHED_SANITIZE= -DCSCHED_MINDER_MUSL=ON -DCSCHED_CONSOLE=OFF; then
    rm -rf "$build_root/fuzz-out"
    mkdir -p "$build_root/fuzz-out"
    if CSCHED_FUZZ_OUT=$build_root/fuzz-out "$repo/tests/fuzz/run.sh" "$build_root/fuzz" \
        "${CSCHED_FUZZ_SECONDS:-20}"; then
        record fuzz-run "ok (${CSCHED_FUZZ_SECONDS:-20}s a target)"
    else
        record fuzz-run "FAILED (inputs and logs in $build_root/fuzz-out)"
        failed=1
    fi
else
    failed=1
fi

stage "container images and the replicas in them ($build_root/image)"
image_started=$(date +%s)
image_missing=()
for tool in mmdebstrap podman skopeo runc; do
    command -v "$tool" >/dev/null || image_missing+=("$tool")
done
if [ ${#image_missing[@]} -gt 0 ]; then
    echo "image: skipped: ${image_missing[*]} not installed (deploy/install-deps.sh installs them)"
    record image "skipped (${image_missing[*]} not installed)"
elif [ "$plain_built" -ne 1 ]; then
    record image "FAILED (no plain build to put in)"
    failed=1
elif ! "$repo/deploy/image/build.sh" --from-build "$build_root/plain" --out "$build_root/image"; then
    record image "FAILED (deploy/image/build.sh)"
    failed=1
elif ! ctest --test-dir "$build_root/plain" -V --no-tests=error -L containers \
    2>&1 | tee "$build_root/image/ctest.log"; then
    record image "FAILED (ctest -L containers; $(($(date +%s) - image_started))s)"
    failed=1
elif grep -q 'Skipped' "$build_root/image/ctest.log"; then
    record image "skipped ($(grep -o 'SKIPPED: .*' "$build_root/image/ctest.log" | head -n 1))"
else
    record image "ok (images built, replicas run in them; $(($(date +%s) - image_started))s)"
fi

stage "summary"
echo "run-all took $SECONDS s"
printf '%s\n' "${summary[@]}"
for name in plain asan asan-minder fuzz image; do
    log=$build_root/$name/ctest.log
    [ -f "$log" ] || continue
    echo "-- $name:"
    grep -E '^[0-9]+% tests passed|^Total Test time|^The following tests FAILED|^[[:space:]]+[0-9]+ - ' "$log" || true
done
if [ "$failed" -ne 0 ]; then
    echo "run-all: FAILED"
    exit 1
fi
echo "run-all: all checks passed"
