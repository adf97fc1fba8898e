#!/usr/bin/env bash
# build.sh: build csched's container images offline, with no registry: a
# Debian 12 base made here with mmdebstrap from the apt sources this machine
# is configured with, imported so that deploy/Dockerfile's FROM debian:12-slim
# finds it, then the images with podman and an OCI archive of each (skopeo).
#
#   deploy/image/build.sh [--from-build DIR] [--tag TAG] [--out DIR]
#                         [--variants "external-db embedded-pg"]
#
#   --from-build DIR  put the host's Release build in DIR (cmake --install) into
#                     the image instead of compiling inside the build stage;
#                     the host must be Debian 12, as the image is
#   --tag TAG         image tag (default: the project's version)
#   --out DIR         where the OCI archives go (default: build/image)
#   --variants LIST   external-db: localhost/csched:TAG, without PostgreSQL's
#                     server (what deploy/k8s runs); embedded-pg:
#                     localhost/csched:TAG-embedded-pg (default: both)
#
# Environment: CSCHED_IMAGE_CACHE (default /var/cache/csched-image when
# /var/cache is writable): the base rootfs tarball is kept there and made
# again after CSCHED_IMAGE_BASE_DAYS days (default 7) or when the apt sources
# change. CSCHED_IMAGE_SOURCES: the deb822 or one-line sources file(s) the base
# uses (default: /etc/apt/sources.list and /etc/apt/sources.list.d/*.sources
# and *.list, those naming bookworm). Run as root. docs/deploy.md, "The image".
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
from_build=
tag=
out=$repo/build/image
variants="external-db embedded-pg"

die() {
    echo "image/build: error: $*" >&2
    exit 1
}

while [ $# -gt 0 ]; do
    case "$1" in
    --from-build) from_build=${2:?--from-build needs a directory} && shift 2 ;;
    --tag) tag=${2:?--tag needs a value} && shift 2 ;;
    --out) out=${2:?--out needs a directory} && shift 2 ;;
    --variants) variants=${2:?--variants needs a list} && shift 2 ;;
    -h | --help)
        sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    *) die "unknown argument '$1' (see --help)" ;;
    esac
done

for tool in mmdebstrap podman skopeo runc; do
    command -v "$tool" >/dev/null || die "$tool not found: deploy/install-deps.sh installs it"
done
[ "$(id -u)" -eq 0 ] || die "run as root: mmdebstrap's root mode and rootful podman"
if [ -z "$tag" ]; then
    tag=$(sed -n 's/^project(csched VERSION \([0-9.]*\).*/\1/p' "$repo/CMakeLists.txt")
    [ -n "$tag" ] || die "no project version in CMakeLists.txt; pass --tag"
fi
mkdir -p "$out"
work=$(mktemp -d "${TMPDIR:-/tmp}/csched-image.XXXXXX")
trap 'rm -rf "$work"' EXIT
started=$(date +%s)

say() {
    printf 'image/build: [%3ss] %s\n' "$(($(date +%s) - started))" "$*"
}

# ---- the base: Debian 12 minbase, trimmed like Debian's own slim images.
sources=()
if [ -n "${CSCHED_IMAGE_SOURCES:-}" ]; then
    read -r -a sources <<<"$CSCHED_IMAGE_SOURCES"
else
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list; do
        [ -f "$f" ] && grep -q bookworm "$f" && sources+=("$f")
    done
fi
[ ${#sources[@]} -gt 0 ] || die "no apt sources naming bookworm; set CSCHED_IMAGE_SOURCES"

# The host's settings for reaching its archive carry over into the base (and
# so into the RUN apt-get of the Dockerfile): a proxy, and a snapshot mirror's
# Release files that are past their Valid-Until.
aptopts=()
for key in Acquire::http::Proxy Acquire::https::Proxy Acquire::Check-Valid-Until Acquire::Check-Date; do
    value=$(apt-config dump "$key" | sed -n "s/^$key \"\(.*\)\";$/\1/p")
    [ -z "$value" ] || aptopts+=(--aptopt="$key \"$value\"")
done
# --hook-dir merged-usr: /usr merged by mmdebstrap itself, so the base has
# usr-is-merged, not usrmerge and the Perl (20 MB) that it pulls in.
# The dpkg path excludes (kept in the base, so they hold for every later
# apt-get too) leave out documentation and translations, as debian:12-slim does.
mmdebstrap_args=(
    --variant=minbase --mode=root --format=tar
    --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr
    "${aptopts[@]}"
    --dpkgopt='path-exclude=/usr/share/man/*'
    --dpkgopt='path-exclude=/usr/share/info/*'
    --dpkgopt='path-exclude=/usr/share/doc/*'
    --dpkgopt='path-include=/usr/share/doc/*/copyright'
    --dpkgopt='path-exclude=/usr/share/locale/*'
    bookworm
)
cache=${CSCHED_IMAGE_CACHE:-}
if [ -z "$cache" ] && [ -w /var/cache ]; then
    cache=/var/cache/csched-image
fi
cache=${cache:-$work}
mkdir -p "$cache"
key=$(cat "${sources[@]}" <(printf '%s\n' "${mmdebstrap_args[@]}") | sha256sum | cut -c1-16)
base=$cache/debian-12-minbase-$key.tar
if [ -f "$base" ] && [ -z "$(find "$base" -mtime +"${CSCHED_IMAGE_BASE_DAYS:-7}")" ]; then
    say "base rootfs: $base (cached)"
else
    say "base rootfs: mmdebstrap bookworm from ${sources[*]}"
    rm -f "$cache"/debian-12-minbase-*.tar
    mmdebstrap "${mmdebstrap_args[@]}" "$base.part" "${sources[@]}" >"$work/mmdebstrap.log" 2>&1 ||
        { cat "$work/mmdebstrap.log" >&2; die "mmdebstrap failed"; }
    mv "$base.part" "$base"
fi

# FROM debian:12-slim resolves to docker.io/library/debian:12-slim (podman's
# short-name alias). An image of that name pulled from a registry is left
# alone and used; ours carries the label csched.base with the tarball's key.
base_image=docker.io/library/debian:12-slim
have=$(podman image inspect --format '{{index .Config.Labels "csched.base"}}' "$base_image" 2>/dev/null ||
    echo absent)
if [ "$have" = "$key" ]; then
    say "base image: $base_image (imported before)"
elif [ "$have" = "<no value>" ]; then
    say "base image: $base_image from a registry, used as it is"
else
    podman import --quiet --change "LABEL csched.base=$key" --change 'CMD ["bash"]' \
        "$base" "$base_image" >/dev/null
    say "base image: $base_image imported"
fi

# ---- the binaries: compiled in the build stage, or the host's own build.
context_args=()
if [ -n "$from_build" ]; then
    grep -q '^CMAKE_BUILD_TYPE:STRING=Release$' "$from_build/CMakeCache.txt" 2>/dev/null ||
        die "$from_build is not a configured Release build (cmake -DCMAKE_BUILD_TYPE=Release)"
    grep -q '^VERSION_ID="12"' /etc/os-release ||
        die "--from-build needs a Debian 12 host: the image's libraries are Debian 12's"
    DESTDIR=$work/prebuilt/out cmake --install "$from_build" --prefix /usr/local --strip >/dev/null
    rm -rf "$work"/prebuilt/out/usr/local/{include,lib/cmake,lib/pkgconfig}
    # The build stage is replaced by this directory: COPY --from=build /out/
    # takes the host's files and nothing is compiled.
    context_args=(--build-context "build=$work/prebuilt")
    say "binaries: the Release build in $from_build"
else
    say "binaries: compiled in the build stage"
fi

# ---- the images.
# --pull=never: no registry; every FROM is local.
# --network=host: the RUN apt-get reaches the archive through the host's
#   network; podman's own networks need CNI plugins this host does not have.
# --runtime=runc: crun refuses this kind of machine (cgroups v1, hybrid).
# --ulimit: podman would raise RLIMIT_NOFILE to 1048576 for each container,
#   which root cannot do here (no CAP_SYS_RESOURCE): the host's hard limits.
# --format=docker: OCI images have no HEALTHCHECK; podman drops it from them.
ulimits=(--ulimit "nofile=$(ulimit -Hn):$(ulimit -Hn)" --ulimit "nproc=32768:32768")
build_args=(--pull=never --network=host --runtime=runc --format=docker "${ulimits[@]}")
for variant in $variants; do
    case "$variant" in
    external-db) name=localhost/csched:$tag pg=0 ;;
    embedded-pg) name=localhost/csched:$tag-embedded-pg pg=1 ;;
    *) die "unknown variant '$variant' (external-db or embedded-pg)" ;;
    esac
    say "image $name: podman build"
    podman build "${build_args[@]}" "${context_args[@]}" --build-arg "CSCHED_EMBEDDED_PG=$pg" \
        -f "$repo/deploy/Dockerfile" -t "$name" "$repo" >"$work/build-$variant.log" 2>&1 ||
        { tail -n 40 "$work/build-$variant.log" >&2; die "podman build of $name failed"; }
    size=$(podman image inspect --format '{{.Size}}' "$name")
    archive=$out/csched-${name##*:}.oci.tar
    rm -f "$archive"
    skopeo copy --quiet "containers-storage:$name" "oci-archive:$archive:${name#localhost/}"
    say "image $name: $((size / 1000000)) MB; OCI archive $archive ($(($(stat -c %s "$archive") / 1000000)) MB)"
done
say "done"
