#!/usr/bin/env bash
# install-deps.sh: install the Debian 12 packages csched needs.
#
#   deploy/install-deps.sh            everything to build, test and run csched,
#                                     and the group csched (cschedd's admins)
#   deploy/install-deps.sh --runtime  only what the installed programs need
#   deploy/install-deps.sh --runtime-external-db
#                                     the same but PostgreSQL's server, for a
#                                     cschedd given --database-url
#
# Also adds the system user csched-job (jobs' default user under a root
# cschedd). Idempotent: when every package is already installed and the user
# exists it changes nothing and needs no network. Run as root (or with sudo on PATH).
set -euo pipefail

# libssl-dev: libcrypto, which cschedd links for SHA-256 and for checking
# certificates; openssl makes the TLS tests' certificates.
# clang and libclang-rt-14-dev (libFuzzer's and the sanitizers' runtimes for
# clang 14) build the fuzz targets of tests/fuzz. grpc-proto: gRPC's own
# .proto files (grpc.health.v1), which the API uses rather than a copy.
# libmicrohttpd-dev: the metrics endpoint's and the HTTP API's server (with
# GnuTLS, whose headers it brings: the HTTP API hands GnuTLS its certificate
# at each handshake); libjansson-dev: the JSON parser of the CLI and the HTTP API (and
# the body of a hook's webhook); libcurl4-openssl-dev: the HTTP client that
# delivers webhooks (server/hook, OpenSSL's TLS and the system's CAs);
# prometheus (promtool with it) and curl: the metrics tests scrape with them
# and run a real Prometheus on ports of their own. On a machine with systemd,
# installing prometheus also starts its daemon on :9090; the tests never use
# that one. python3-pkg-resources: python3 -m grpc_tools.protoc (the interop
# client, part of the default build) imports pkg_resources, which Debian's
# python3-grpc-tools does not depend on. mmdebstrap, podman (buildah is built
# into it), skopeo and runc build the container image offline and run it in
# its test (deploy/image/build.sh, tests/containers/); runc, not crun, which
# refuses hosts with cgroups v1 (hybrid). python3-apscheduler: the
# benchmark's in-process Python scheduler beside csched (tests/bench, A and T).
BUILD_PACKAGES=(
    build-essential cmake pkg-config git
    libgrpc-dev grpc-proto protobuf-c-compiler libprotobuf-c-dev protobuf-compiler
    libuv1-dev libpq-dev libcmocka-dev libyaml-dev musl-tools libssl-dev openssl
    postgresql
    python3 python3-grpcio python3-grpc-tools python3-pkg-resources python3-protobuf python3-yaml
    python3-apscheduler
    tzdata
    clang-format procps util-linux
    clang libclang-rt-14-dev
    libmicrohttpd-dev libjansson-dev libcurl4-openssl-dev prometheus curl
    mmdebstrap podman skopeo runc
    chromium
)
# nodejs and npm build the web console (client/console; Debian 12's Node.js
# 18 or newer); chromium runs its browser test. A Node.js of another origin
# (NodeSource's nodejs, which conflicts with Debian's npm) is kept as it is:
# apt would otherwise replace it.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    BUILD_PACKAGES+=(nodejs npm)
fi

# Shared libraries of cschedd and csched, runuser for running PostgreSQL
# unprivileged as root; tzdata: the time zones of schedules, read from
# /usr/share/zoneinfo (server/tzdb_work.c; the tests compare them with
# Python's zoneinfo).
RUNTIME_PACKAGES=(
    libgrpc29 libprotobuf-c1 libuv1 libpq5 libyaml-0-2 libssl3 libmicrohttpd12 libjansson4 libcurl4
    procps util-linux ca-certificates tzdata
)
# The PostgreSQL server binaries, for the embedded database only. With LLVM
# (its JIT) they are most of a runtime image's size (docs/deploy.md).
EMBEDDED_PG_PACKAGES=(postgresql-15)

die() {
    echo "install-deps: error: $*" >&2
    exit 1
}

packages=("${BUILD_PACKAGES[@]}")
make_group=1
case "${1:-}" in
"") ;;
--runtime | --runtime-external-db)
    # Images and packages make their own users and groups (deploy/Dockerfile).
    packages=("${RUNTIME_PACKAGES[@]}")
    [ "$1" = --runtime-external-db ] || packages+=("${EMBEDDED_PG_PACKAGES[@]}")
    make_group=0
    ;;
-h | --help)
    sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
    ;;
*) die "unknown argument '$1' (expected --runtime, --runtime-external-db or nothing)" ;;
esac

[ -r /etc/debian_version ] || die "this script is for Debian 12; /etc/debian_version is missing"
command -v dpkg-query >/dev/null || die "dpkg-query not found; this script is for Debian 12"

# The user that jobs naming no run_as_user run as under a root cschedd
# (docs/security.md): a system user with no login shell and no home.
if ! getent passwd csched-job >/dev/null; then
    as_root=()
    [ "$(id -u)" -eq 0 ] || as_root=(sudo)
    echo "install-deps: adding the system user csched-job"
    "${as_root[@]}" useradd --system --user-group --no-create-home --home-dir /nonexistent \
        --shell /usr/sbin/nologin csched-job || die "useradd csched-job failed"
fi

missing=()
for pkg in "${packages[@]}"; do
    status=$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)
    [ "$status" = installed ] || missing+=("$pkg")
done

# The group whose members cschedd makes admins on its unix socket by default
# (--admin-group); with no members it grants nothing.
ensure_group() {
    [ "$make_group" -eq 1 ] || return 0
    getent group csched >/dev/null && return 0
    if [ "$(id -u)" -ne 0 ]; then
        command -v sudo >/dev/null || die "not root and no sudo: run as root to create group csched"
        sudo groupadd --system csched || die "groupadd csched failed"
    else
        groupadd --system csched || die "groupadd csched failed"
    fi
    echo "install-deps: created group csched (its members are cschedd admins)"
}

if [ ${#missing[@]} -eq 0 ]; then
    echo "install-deps: all ${#packages[@]} packages present"
    ensure_group
    exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || die "not root and no sudo: run as root to install ${missing[*]}"
    sudo=(sudo)
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq || die "apt-get update failed"
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
    die "apt-get install failed for: ${missing[*]}"
ensure_group
echo "install-deps: done"
