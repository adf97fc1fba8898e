#!/usr/bin/env bash
# deploy_lint.sh: static checks of deploy/ and the scripts, needing no Docker
# engine and no cluster. Run by tests/run-all.sh.
#
#   - every shell script parses (bash -n), and passes shellcheck when installed;
#   - every YAML file under deploy/ parses; every Kubernetes object has
#     apiVersion, kind and metadata.name; every path a kustomization.yaml names
#     exists;
#   - deploy/validate/check.cjs renders every kustomize overlay of deploy/k8s
#     and checks each object against the Kubernetes API's schemas (unknown
#     fields refused) and the objects against each other, the image and
#     cschedd --help; each broken variant in deploy/validate/broken must fail
#     with the message its expect file holds. Needs node, npm and kubectl
#     (skipped without them, except in CI); npm ci installs the lockfile's
#     packages once into CSCHED_DEPLOY_WORK (default build/deploy-validate);
#   - the Dockerfile is multi-stage, ends as a non-root user, copies only from
#     stages and paths that exist, and copies every directory the build adds;
#   - the systemd unit has its sections and keys, and systemd-analyze verify
#     (when installed) finds nothing to say about it;
#   - when CSCHED_BIN_DIR holds a built cschedd, every cschedd flag the deploy
#     files use is one cschedd --help lists.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
failed=0

fail() {
    echo "deploy_lint: $*" >&2
    failed=1
}

scripts=(.ci/run deploy/*.sh tests/run-all.sh tests/deploy_lint.sh tests/package_test.sh tests/systemd_test.sh
    cmake/deb/postinst)
for s in "${scripts[@]}"; do
    [ -f "$s" ] || continue
    bash -n "$s" || fail "$s: bash -n failed"
done
if command -v shellcheck >/dev/null; then
    shellcheck "${scripts[@]}" || fail "shellcheck found problems"
else
    echo "deploy_lint: shellcheck not installed, skipped"
fi

# systemd's own parser over the unit, with ExecStart pointed at a program that
# exists here; it reports problems as warnings, so any output is a failure.
if command -v systemd-analyze >/dev/null; then
    tmp=$(mktemp -d)
    sed 's|^ExecStart=[^ ]*|ExecStart=/bin/true|' deploy/systemd/cschedd.service >"$tmp/cschedd.service"
    # Its drop-ins beside it, so that they are parsed with it.
    cp -r deploy/systemd/cschedd.service.d "$tmp/"
    out=$(systemd-analyze verify "$tmp/cschedd.service" 2>&1) || fail "systemd-analyze verify failed"
    if [ -n "$out" ]; then
        echo "$out" >&2
        fail "systemd-analyze verify reported problems in deploy/systemd/cschedd.service"
    fi
    rm -rf "$tmp"
else
    echo "deploy_lint: systemd-analyze not installed, unit check skipped"
fi

manifests() {
    local work=${CSCHED_DEPLOY_WORK:-$repo/build/deploy-validate} tool missing=()
    for tool in node npm kubectl; do
        command -v "$tool" >/dev/null || missing+=("$tool")
    done
    if [ ${#missing[@]} -ne 0 ]; then
        if [ "${CI:-}" = true ]; then
            fail "${missing[*]} not installed: the manifests cannot be checked"
        else
            echo "deploy_lint: ${missing[*]} not installed, manifest check skipped"
        fi
        return 0
    fi
    mkdir -p "$work"
    # npm ci again only when the lockfile changed: later runs need no network.
    if ! cmp -s deploy/validate/package-lock.json "$work/package-lock.json" ||
        [ ! -d "$work/node_modules" ]; then
        cp deploy/validate/package.json deploy/validate/package-lock.json "$work/"
        # From npm's cache alone when it has every package, else the registry.
        (cd "$work" && { npm ci --offline --no-audit --no-fund --loglevel=silent \
            --cache "$work/npm-cache" || npm ci --prefer-offline --no-audit --no-fund \
            --loglevel=error --cache "$work/npm-cache"; }) || {
            fail "npm ci in $work failed"
            return 0
        }
    fi
    local check=(node deploy/validate/check.cjs --modules "$work" --work "$work/ts")
    if [ -x "${CSCHED_BIN_DIR:-}/cschedd" ]; then
        "$CSCHED_BIN_DIR/cschedd" --help >"$work/cschedd-help.txt" 2>&1 || true
        check+=(--cschedd-help "$work/cschedd-help.txt")
    fi
    "${check[@]}" deploy/k8s/base deploy/k8s/overlays/*/ || fail "the manifests of deploy/k8s are not valid"

    # Each broken variant fails, with the message its expect file holds.
    local out broken name
    out=$("${check[@]}" deploy/validate/broken/*/ 2>&1 >/dev/null) &&
        fail "deploy/validate/check.cjs passed the broken variants"
    for broken in deploy/validate/broken/*/; do
        name=${broken%/}
        if grep -F -- "$(cat "$name/expect")" <<<"$out" | grep -q "^$name: "; then
            echo "deploy_lint: refused as expected: $(grep -F -- "$(cat "$name/expect")" <<<"$out" | head -1)"
        else
            fail "$name was not refused with: $(cat "$name/expect")"
        fi
    done
}
manifests

/usr/bin/python3 - "${CSCHED_BIN_DIR:-}" <<'PY' || failed=1
import configparser
import glob
import os
import re
import subprocess
import sys

import yaml

bin_dir = sys.argv[1]
errors = []


def err(msg):
    errors.append(msg)


# YAML and Kubernetes objects.
objects = []
yaml_files = sorted(glob.glob("deploy/**/*.yaml", recursive=True) +
                    glob.glob("deploy/**/*.yml", recursive=True))
for path in yaml_files:
    try:
        with open(path) as f:
            docs = [d for d in yaml.safe_load_all(f) if d is not None]
    except yaml.YAMLError as e:
        err(f"{path}: YAML does not parse: {e}")
        continue
    if os.path.basename(path) == "kustomization.yaml":
        base = os.path.dirname(path)
        k = docs[0] if docs else {}
        for key in ("resources", "components"):
            for ref in k.get(key, []) or []:
                target = os.path.join(base, ref)
                if not (os.path.isfile(target) or
                        os.path.isfile(os.path.join(target, "kustomization.yaml"))):
                    err(f"{path}: {key} entry '{ref}' does not exist")
        for p in k.get("patches", []) or []:
            if isinstance(p, dict) and "path" in p and \
                    not os.path.isfile(os.path.join(base, p["path"])):
                err(f"{path}: patch '{p['path']}' does not exist")
        continue
    for doc in docs:
        if not isinstance(doc, dict):
            err(f"{path}: a document is not a mapping")
            continue
        name = (doc.get("metadata") or {}).get("name")
        is_patch = "patch" in os.path.basename(path)
        for key in ("apiVersion", "kind"):
            if key not in doc:
                err(f"{path}: object without {key}")
        if not name:
            err(f"{path}: {doc.get('kind')} without metadata.name")
        if not is_patch:
            objects.append((path, doc))


def containers(doc):
    spec = (doc.get("spec") or {}).get("template", {}).get("spec", {})
    return spec.get("containers", []) or []


# Dockerfile.
dockerfile = "deploy/Dockerfile"
if os.path.isfile(dockerfile):
    stages, user, last_stage = [], None, None
    with open(dockerfile) as f:
        text = re.sub(r"\\\n", " ", f.read())
    for line in text.splitlines():
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        op = words[0].upper()
        if op == "FROM":
            last_stage = words[3] if len(words) >= 4 and words[2].upper() == "AS" else None
            stages.append(last_stage)
            user = None
        elif op == "USER":
            user = words[1]
        elif op == "COPY":
            args = [w for w in words[1:] if not w.startswith("--")]
            opts = [w for w in words[1:] if w.startswith("--from=")]
            if opts:
                src = opts[0].split("=", 1)[1]
                if src not in stages:
                    err(f"{dockerfile}: COPY --from={src} names no earlier stage")
            else:
                for src in args[:-1]:
                    if not glob.glob(src):
                        err(f"{dockerfile}: COPY source {src} does not exist")
    if len(stages) < 2:
        err(f"{dockerfile}: not multi-stage")
    # The build stage copies the source tree piece by piece: every directory
    # the top-level CMakeLists.txt adds must be among the pieces.
    copied = set()
    for line in text.splitlines():
        words = line.split()
        if words and words[0].upper() == "COPY" and not any(w.startswith("--from=") for w in words):
            copied |= {w.rstrip("/") for w in words[1:-1] if not w.startswith("--")}
    with open("CMakeLists.txt") as f:
        for sub in re.findall(r"add_subdirectory\(\s*([^\s)]+)", f.read()):
            if sub not in copied:
                err(f"{dockerfile}: the build stage does not COPY {sub}/, which CMakeLists.txt adds")
    if user in (None, "root", "0", "0:0"):
        err(f"{dockerfile}: the final stage does not switch to a non-root USER")
else:
    err(f"{dockerfile} is missing")

# systemd unit.
unit = "deploy/systemd/cschedd.service"
if os.path.isfile(unit):
    cp = configparser.ConfigParser(strict=False, interpolation=None)
    cp.optionxform = str
    try:
        cp.read(unit)
        for section, keys in (("Unit", ["Description"]),
                              ("Service", ["ExecStart", "StateDirectory", "ProtectSystem"]),
                              ("Install", ["WantedBy"])):
            if not cp.has_section(section):
                err(f"{unit}: no [{section}] section")
                continue
            for key in keys:
                if not cp.has_option(section, key):
                    err(f"{unit}: [{section}] has no {key}=")
        # The stop timeout covers the drain and 10 s to leave (as the pod's
        # grace period does, deploy/validate/cross.cjs).
        exec_start = cp.get("Service", "ExecStart", fallback="")
        m = re.search(r"--drain-timeout[ =](\d+)(ms|s|m)\b", exec_start)
        drain = int(m.group(1)) * {"ms": 0.001, "s": 1, "m": 60}[m.group(2)] if m else 25
        stop = cp.get("Service", "TimeoutStopSec", fallback="90")
        if not stop.isdigit() or int(stop) < drain + 10:
            err(f"{unit}: TimeoutStopSec={stop} does not cover --drain-timeout ({drain:g} s) plus 10 s")
    except configparser.Error as e:
        err(f"{unit}: does not parse: {e}")
else:
    err(f"{unit} is missing")

# Build targets that deploy/quickstart.sh names must exist in the CMake files.
defined = set()
for cm in glob.glob("**/CMakeLists.txt", recursive=True) + glob.glob("**/*.cmake", recursive=True):
    if cm.startswith("build"):
        continue
    with open(cm) as f:
        defined |= set(re.findall(r"add_(?:executable|custom_target|library)\(\s*([A-Za-z0-9_.-]+)",
                                  f.read()))
with open("deploy/quickstart.sh") as f:
    for m in re.finditer(r"--target ([^>\n]+)", f.read()):
        for target in m.group(1).split():
            if target not in defined:
                err(f"deploy/quickstart.sh builds target {target}, which no CMake file defines")

# Flags of cschedd used by the deploy files, against the built binary: the
# container args in the manifests, ExecStart in the unit, CMD in the Dockerfile.
used = set()
for path, doc in objects:
    for c in containers(doc):
        if c.get("name") == "cschedd":
            used |= {a.split("=")[0] for a in (c.get("args") or []) if a.startswith("--")}
if os.path.isfile(unit):
    with open(unit) as f:
        for line in f:
            if line.startswith("ExecStart="):
                used |= set(re.findall(r"(--[a-z-]+)", line))
if os.path.isfile(dockerfile):
    with open(dockerfile) as f:
        for line in f:
            if line.startswith(("CMD", "ENTRYPOINT")):
                used |= set(re.findall(r"(--[a-z][a-z-]+)", line))
cschedd = os.path.join(bin_dir, "cschedd") if bin_dir else ""
if cschedd and os.access(cschedd, os.X_OK):
    r = subprocess.run([cschedd, "--help"], capture_output=True, text=True, timeout=10)
    usage = r.stdout + r.stderr
    for flag in sorted(used):
        if not re.search(re.escape(flag) + r"\b", usage):
            err(f"deploy/ passes {flag} to cschedd, which cschedd --help does not list")
    print(f"deploy_lint: cschedd flags used by deploy/: {' '.join(sorted(used))}")
else:
    print("deploy_lint: no built cschedd in CSCHED_BIN_DIR, flag check skipped")

for e in errors:
    print("deploy_lint: " + e, file=sys.stderr)
sys.exit(1 if errors else 0)
PY

if [ "$failed" -ne 0 ]; then
    echo "deploy_lint: FAILED" >&2
    exit 1
fi
echo "deploy_lint: ok"
