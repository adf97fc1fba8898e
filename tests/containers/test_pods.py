#!/usr/bin/env python3
"""Replicas in containers, run the way deploy/k8s's StatefulSet says.

Two containers of the built image (deploy/image/build.sh) are started with
podman as the StatefulSet's pod spec describes them: its args and env (the
pod's name as replica id, the database URL as from its Secret), its user, a
read-only root with each volume mounted where the spec mounts it (emptyDir as
tmpfs, the claim as a named volume, Secrets as read-only files of mode 0440
and group fsGroup), all capabilities dropped, no privilege escalation, and
explicit ulimits. They share the host's network on loopback addresses and a
PostgreSQL the test starts from the host's binaries. Then, with the host's
csched CLI over TLS and a bearer token, as a client of the Service would:

  - the probes run as the kubelet runs them (the spec's exec commands inside
    each container): started and alive on both, ready on the active only;
  - runs of a job spread over both pods: the active replica places each
    attempt on the machine with the most room, and each ran where its
    attempt says (Attempt.replica);
  - kill -9 of the active replica's container: the standby takes over; the
    runs that were running in the killed container end, retried, and those
    running in the standby's go on, once;
  - the killed container restarted rejoins as a standby;
  - both rolled one by one to a new image tag, the standby first, SIGTERM
    draining the active one: no run lost.

The test's own settings: --heartbeat 200ms, --attempt-lease 3s and
--drain-timeout 20s over the spec's values, and --listen on 127.0.0.1. Every
wait polls against a deadline. Exit 77 (skipped) when podman, runc, the image
or PostgreSQL's binaries are missing, or when not run as root.

  test_pods.py --cli BUILD/bin/csched --image localhost/csched:TAG
               [--statefulset FILE]

--statefulset (or CSCHED_TEST_STATEFULSET): the manifest whose pod spec is
run; default deploy/k8s/base/statefulset.yaml of this tree.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import yaml

SKIP = 77
PG_BIN = "/usr/lib/postgresql/15/bin"
# Ports of this test (47100-47199): the database and one per replica.
PG_PORT = 47150
REPLICA_PORTS = {"cschedd-0": 47151, "cschedd-1": 47152}
# podman would raise RLIMIT_NOFILE to 1048576, which root without
# CAP_SYS_RESOURCE cannot: explicit values within the host's hard limits.
ULIMITS = ["--ulimit", "nofile=%d:%d" % ((os.sysconf("SC_OPEN_MAX"),) * 2),
           "--ulimit", "nproc=32768:32768"]
TEST_ARGS = {"--heartbeat": "200ms", "--attempt-lease": "3s", "--drain-timeout": "20s"}
START = time.monotonic()


def log(msg):
    print("[%6.1fs] %s" % (time.monotonic() - START, msg), flush=True)


def skip(why):
    print("test_pods: SKIPPED: " + why, flush=True)
    sys.exit(SKIP)


def run(argv, check=True, timeout=120, **kw):
    p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **kw)
    if check and p.returncode != 0:
        raise RuntimeError("%s: exit %d\n%s%s" % (" ".join(argv), p.returncode, p.stdout, p.stderr))
    return p


def wait_for(what, pred, deadline_s):
    """Polls pred() until it returns something true; fails after deadline_s."""
    until = time.monotonic() + deadline_s
    last = None
    while time.monotonic() < until:
        try:
            got = pred()
            if got:
                return got
        except (RuntimeError, subprocess.TimeoutExpired, KeyError, ValueError) as e:
            last = e
        time.sleep(0.1)
    raise AssertionError("timed out after %ss waiting for %s%s" %
                         (deadline_s, what, ": %s" % last if last else ""))


class PodSpec:
    """The cschedd container of the StatefulSet and its pod's volumes."""

    def __init__(self, path):
        with open(path) as f:
            sts = next(d for d in yaml.safe_load_all(f) if d and d.get("kind") == "StatefulSet")
        pod = sts["spec"]["template"]["spec"]
        self.container = next(c for c in pod["containers"] if c["name"] == "cschedd")
        self.pod_security = pod.get("securityContext", {})
        self.volumes = {v["name"]: v for v in pod.get("volumes", [])}
        self.claims = {c["metadata"]["name"] for c in sts["spec"].get("volumeClaimTemplates", [])}
        self.grace = pod.get("terminationGracePeriodSeconds", 30)

    def security(self):
        sc = dict(self.pod_security)
        sc.update(self.container.get("securityContext", {}))
        return sc

    def probe(self, kind):
        probe = self.container.get(kind)
        if probe is None:
            return None
        if "exec" not in probe:
            raise AssertionError("%s: only exec probes are run by this test" % kind)
        return probe["exec"]["command"]


class Cluster:
    def __init__(self, spec, image, cli, tmp):
        self.spec, self.image, self.cli, self.tmp = spec, image, cli, tmp
        self.secrets = os.path.join(tmp, "secrets")
        self.pg_dir = os.path.join(tmp, "pg")
        self.pg = None
        self.names = []

    # ---- PostgreSQL: the host's binaries, as the user postgres, loopback only.
    def start_postgres(self):
        os.makedirs(self.pg_dir)
        shutil.chown(self.pg_dir, "postgres", "postgres")
        as_pg = ["runuser", "-u", "postgres", "--"]
        run(as_pg + [PG_BIN + "/initdb", "-D", self.pg_dir + "/data", "-A", "trust", "-U", "postgres"])
        self.pg = subprocess.Popen(
            as_pg + [PG_BIN + "/postgres", "-D", self.pg_dir + "/data", "-p", str(PG_PORT),
                     "-c", "listen_addresses=127.0.0.1", "-k", self.pg_dir],
            stdout=open(os.path.join(self.tmp, "postgres.log"), "w"), stderr=subprocess.STDOUT)
        wait_for("PostgreSQL", lambda: run([PG_BIN + "/pg_isready", "-h", "127.0.0.1", "-p",
                                            str(PG_PORT)], check=False).returncode == 0, 30)
        run([PG_BIN + "/createdb", "-h", "127.0.0.1", "-p", str(PG_PORT), "-U", "postgres", "csched"])
        log("PostgreSQL on 127.0.0.1:%d (the host's binaries)" % PG_PORT)

    # ---- the Secrets: TLS for 127.0.0.1 and the tokens, 0440 group fsGroup.
    def make_secrets(self):
        tls, tokens = os.path.join(self.secrets, "tls"), os.path.join(self.secrets, "tokens")
        os.makedirs(tls)
        os.makedirs(tokens)
        ca_key, ca = os.path.join(self.tmp, "ca.key"), os.path.join(self.tmp, "ca.crt")
        run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
             "-nodes", "-keyout", ca_key, "-out", ca, "-days", "1", "-subj", "/CN=csched test CA"])
        csr = os.path.join(self.tmp, "server.csr")
        run(["openssl", "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
             "-keyout", os.path.join(tls, "tls.key"), "-out", csr, "-subj", "/CN=cschedd"])
        ext = os.path.join(self.tmp, "san.ext")
        with open(ext, "w") as f:
            f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
        run(["openssl", "x509", "-req", "-in", csr, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial",
             "-days", "1", "-extfile", ext, "-out", os.path.join(tls, "tls.crt")])
        shutil.copy(ca, os.path.join(tls, "ca.crt"))
        self.ca = ca
        lines = []
        for name, role in (("tester", "admin"), ("probe", "viewer")):
            out = run([self.cli, "token", "new", name, role]).stdout.splitlines()
            token, line = out[1], out[3]
            lines.append(line)
            path = os.path.join(self.tmp if name == "tester" else tokens, name + "-token")
            with open(path, "w") as f:
                f.write(token + "\n")
            if name == "tester":
                os.chmod(path, 0o600)
                self.token_file = path
        with open(os.path.join(tokens, "tokens"), "w") as f:
            f.write("\n".join(lines) + "\n")
        group = self.spec.security().get("fsGroup", 0)
        for d in (tls, tokens):
            for name in os.listdir(d):
                os.chown(os.path.join(d, name), 0, group)
                os.chmod(os.path.join(d, name), 0o440)

    # ---- a replica's container, from the pod spec.
    def podman_args(self, name):
        c, sc = self.spec.container, self.spec.security()
        argv = ["podman", "run", "-d", "--name", name, "--pull=never", "--runtime=runc",
                "--network=host", "--no-healthcheck"] + ULIMITS
        if "runAsUser" in sc:
            argv += ["--user", "%s:%s" % (sc["runAsUser"], sc.get("runAsGroup", sc["runAsUser"]))]
        if "fsGroup" in sc:
            argv += ["--group-add", str(sc["fsGroup"])]
        if sc.get("readOnlyRootFilesystem"):
            # No tmpfs of podman's own at /tmp, /run, /var/tmp: only what the
            # spec mounts is writable, as in a pod.
            argv += ["--read-only", "--read-only-tmpfs=false"]
        if sc.get("allowPrivilegeEscalation") is False:
            argv += ["--security-opt", "no-new-privileges"]
        for cap in sc.get("capabilities", {}).get("drop", []):
            argv += ["--cap-drop", cap.lower()]
        for m in c.get("volumeMounts", []):
            v = self.spec.volumes.get(m["name"])
            ro = ",ro" if m.get("readOnly") else ""
            if m["name"] in self.spec.claims:
                argv += ["--mount", "type=volume,src=%s-%s,dst=%s%s" % (name, m["name"], m["mountPath"], ro)]
            elif v is not None and "emptyDir" in v:
                # A directory of the pod's, as the kubelet makes it (start()):
                # it outlives a restart of the container, not the pod.
                # (podman's tmpfs under /run takes no tmpfs-mode.)
                src = os.path.join(self.tmp, "pods", name, m["name"])
                argv += ["--mount", "type=bind,src=%s,dst=%s%s" % (src, m["mountPath"], ro)]
            elif v is not None and "secret" in v:
                src = os.path.join(self.secrets, os.path.basename(m["mountPath"]))
                argv += ["--mount", "type=bind,src=%s,dst=%s%s" % (src, m["mountPath"], ro or ",ro")]
            else:
                raise AssertionError("volume %s: a kind this test does not map" % m["name"])
        env = {}
        for e in c.get("env", []):
            src = e.get("valueFrom", {})
            if "value" in e:
                env[e["name"]] = e["value"]
            elif src.get("fieldRef", {}).get("fieldPath") == "metadata.name":
                env[e["name"]] = name
            elif src.get("fieldRef", {}).get("fieldPath") == "metadata.namespace":
                env[e["name"]] = "default"
            elif src.get("secretKeyRef", {}).get("name") == "csched-database":
                env[e["name"]] = "postgresql://postgres@127.0.0.1:%d/csched" % PG_PORT
            else:
                raise AssertionError("env %s: a source this test does not map" % e["name"])
        for k, val in env.items():
            argv += ["--env", "%s=%s" % (k, val)]
        args = [re.sub(r"\$\((\w+)\)", lambda mt: env.get(mt.group(1), mt.group(0)), a)
                for a in c.get("args", [])]
        overrides = dict(TEST_ARGS)
        overrides["--listen"] = "127.0.0.1:%d" % REPLICA_PORTS[name]
        # The pod's name in the headless Service resolves in a cluster
        # only; here each replica is reached at its own port on loopback.
        overrides["--advertise"] = "127.0.0.1:%d" % REPLICA_PORTS[name]
        overrides["--replica-id"] = name
        for flag, val in overrides.items():
            if flag in args:
                args[args.index(flag) + 1] = val
            else:
                args += [flag, val]
        return argv + [self.image] + args

    def start(self, name, image=None):
        """Starts a new pod: fresh emptyDirs, the claim's volume kept."""
        if image:
            self.image = image
        run(["podman", "rm", "-f", "--ignore", name])
        shutil.rmtree(os.path.join(self.tmp, "pods", name), ignore_errors=True)
        for v in self.spec.volumes.values():
            if "emptyDir" in v:
                d = os.path.join(self.tmp, "pods", name, v["name"])
                os.makedirs(d)
                os.chown(d, 0, self.spec.security().get("fsGroup", 0))
                os.chmod(d, emptydir_mode(v["emptyDir"], self.spec.security()))
        run(self.podman_args(name))
        if name not in self.names:
            self.names.append(name)

    def state(self, name):
        return run(["podman", "inspect", "--format", "{{.State.Status}} {{.State.ExitCode}}",
                    name]).stdout.split()

    def logs(self, name):
        p = run(["podman", "logs", "--tail", "30", name], check=False)
        return p.stdout + p.stderr

    # ---- the probes, as the kubelet runs them: the spec's command inside.
    def probe(self, name, kind):
        status, code = self.state(name)
        if status != "running":
            raise AssertionError("%s is %s (exit %s); its log ends:\n%s" %
                                 (name, status, code, self.logs(name)))
        cmd = self.spec.probe(kind)
        return run(["podman", "exec", name] + cmd, check=False, timeout=15).returncode == 0

    def wait_started(self, name):
        wait_for("%s's startup probe" % name, lambda: self.probe(name, "startupProbe"), 60)

    def ready(self):
        return [n for n in self.names if self.state(n)[0] == "running" and self.probe(n, "readinessProbe")]

    def wait_active(self, deadline_s, exclude=()):
        def one_ready():
            r = [n for n in self.ready() if n not in exclude]
            return r[0] if len(r) == 1 else None
        return wait_for("exactly one ready (active) replica", one_ready, deadline_s)

    # ---- the client, through the ready replica (what the Service selects).
    def csched(self, server, *args):
        p = run([self.cli, "--server", "127.0.0.1:%d" % REPLICA_PORTS[server], "--ca", self.ca,
                 "--token-file", self.token_file, "--timeout", "5", "-o", "json"] + list(args))
        return json.loads(p.stdout) if p.stdout.strip() else None

    def stop(self):
        for n in self.names:
            run(["podman", "rm", "-f", "--ignore", "-t", "0", n], check=False)
            run(["podman", "volume", "rm", "-f", "%s-state" % n], check=False)
        if self.pg:
            self.pg.terminate()
            self.pg.wait(30)


def emptydir_mode(empty_dir, security):
    """The mode the kubelet gives an emptyDir: 0777 on disk; a tmpfs's own
    1777 (sticky) for medium Memory; with fsGroup, setgid too."""
    mode = 0o1777 if (empty_dir or {}).get("medium") == "Memory" else 0o777
    return mode | 0o2000 if "fsGroup" in security else mode


def field(obj, *names):
    for n in names:
        if n in obj:
            return obj[n]
    return None


def run_state(cl, server, run_id):
    r = cl.csched(server, "run", str(run_id))
    r = r.get("run", r)
    return str(field(r, "state")), r


def trigger(cl, server, job, n):
    ids = []
    for _ in range(n):
        r = cl.csched(server, "trigger", job)
        r = r.get("run", r)
        ids.append(int(field(r, "id", "runId", "run_id")))
    return ids


def wait_ended(cl, server_of, ids, deadline_s):
    """Waits until every run has ended; returns {id: run}."""
    ended = {}

    def all_ended():
        for i in ids:
            if i in ended:
                continue
            state, r = run_state(cl, server_of(), i)
            if not any(s in state for s in ("QUEUED", "STARTING", "RUNNING")):
                ended[i] = r
        return len(ended) == len(ids)
    wait_for("runs %s to end" % ids, all_ended, deadline_s)
    return ended


def attempts(r):
    return field(r, "attempts") or []


def placed_in(r, attempt):
    """The pod (replica id) the run's attempt ran in, as the run says."""
    return str(field(attempts(r)[attempt - 1], "replica"))


def ran_in(cl, name, run_id, attempt):
    return run(["podman", "exec", name, "test", "-e", "/tmp/ran-%d-%d" % (run_id, attempt)],
               check=False).returncode == 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--image", required=True)
    ap.add_argument("--statefulset", default=os.environ.get("CSCHED_TEST_STATEFULSET") or os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "deploy", "k8s", "base", "statefulset.yaml"))
    a = ap.parse_args()

    for tool in ("podman", "runc", "openssl", "runuser"):
        if shutil.which(tool) is None:
            skip("%s is not installed (deploy/install-deps.sh installs it)" % tool)
    if os.geteuid() != 0:
        skip("not root: the test runs rootful podman (no subuids here)")
    if not os.path.exists(PG_BIN + "/postgres"):
        skip("PostgreSQL 15's server binaries are not installed (" + PG_BIN + ")")
    if run(["podman", "image", "exists", a.image], check=False).returncode != 0:
        skip("image %s is not built (deploy/image/build.sh)" % a.image)

    spec = PodSpec(a.statefulset)
    tmp = tempfile.mkdtemp(prefix="csched-pods.")
    os.chmod(tmp, 0o755)
    cl = Cluster(spec, a.image, a.cli, tmp)
    try:
        scenario(cl)
    finally:
        cl.stop()
    shutil.rmtree(tmp, ignore_errors=True)
    log("passed")


def scenario(cl):
    r0, r1 = "cschedd-0", "cschedd-1"
    cl.start_postgres()
    cl.make_secrets()
    log("pod spec: " + " ".join(cl.podman_args(r0)[1:]))
    for n in (r0, r1):
        cl.start(n)
    for n in (r0, r1):
        cl.wait_started(n)
    active = cl.wait_active(30)
    standby = r1 if active == r0 else r0
    for n in (r0, r1):
        assert cl.probe(n, "livenessProbe"), "%s: liveness probe failed" % n
    log("both started and alive; ready (active): %s, not ready (standby): %s" % (active, standby))

    cl.csched(active, "job", "create", "work", "--max-attempts", "3", "--retry-backoff-ms", "100",
              "--shell", "touch /tmp/ran-$CSCHED_RUN_ID-$CSCHED_ATTEMPT; sleep 2")
    ids = trigger(cl, active, "work", 4)
    runs = wait_ended(cl, lambda: active, ids, 60)
    where = {}
    for i, r in runs.items():
        assert "SUCCEEDED" in str(r["state"]), "run %d: %s" % (i, r)
        where[i] = placed_in(r, 1)
        assert ran_in(cl, where[i], i, 1), "run %d did not run in %s, where its attempt says" % (
            i, where[i])
    assert set(where.values()) == {r0, r1}, "runs %s did not spread over both pods: %s" % (ids, where)
    log("runs %s succeeded, spread over both pods: %s" % (ids, where))
    # A client that reaches the standby is answered too: it forwards the
    # call to the active replica over TLS.
    state, _ = run_state(cl, standby, ids[0])
    assert "SUCCEEDED" in state, "run %d through the standby: %s" % (ids[0], state)
    log("run %d read through the standby %s, which forwarded the call" % (ids[0], standby))

    # ---- kill -9 of the active replica's container.
    ids = trigger(cl, active, "work", 3)
    wait_for("the runs to be running", lambda: all(
        "RUNNING" in run_state(cl, active, i)[0] for i in ids), 30)
    killed_at = time.monotonic()
    run(["podman", "kill", "-s", "KILL", active])
    log("killed %s (podman kill -s KILL) with runs %s running" % (active, ids))
    new_active = wait_for("the standby to become ready", lambda: standby in cl.ready() and standby, 30)
    log("%s ready (SERVING) %.1fs after the kill" % (new_active, time.monotonic() - killed_at))
    runs = wait_ended(cl, lambda: new_active, ids, 60)
    for i, r in runs.items():
        att = attempts(r)
        assert "SUCCEEDED" in str(r["state"]), "run %d: %s" % (i, r)
        if placed_in(r, 1) == active:
            assert len(att) >= 2, "run %d was not retried: %s" % (i, r)
            assert ran_in(cl, new_active, i, len(att)), "run %d's last attempt not in %s" % (
                i, new_active)
        else:
            assert len(att) == 1, "run %d, placed in %s, was retried: %s" % (i, new_active, r)
    log("runs %s ended SUCCEEDED, those of %s retried on %s (attempts: %s) %.1fs after the kill" % (
        ids, active, new_active, [len(attempts(runs[i])) for i in ids],
        time.monotonic() - killed_at))

    # ---- the killed container restarted: a standby.
    run(["podman", "start", active])
    cl.wait_started(active)
    assert cl.probe(active, "livenessProbe"), "%s: liveness failed after the restart" % active
    wait_for("%s to stay not ready (standby)" % active, lambda: cl.ready() == [new_active], 10)
    reps = cl.csched(new_active, "replicas")
    log("%s restarted: started, alive, not ready (standby); replicas: %s" % (active, json.dumps(reps)))
    active, standby = new_active, active

    # ---- rollout to a new image tag, one by one: the standby, then the active.
    new_image = cl.image + "-rollout"
    run(["podman", "build", "--pull=never", "--runtime=runc", "--format=docker"] + ULIMITS +
        ["-t", new_image, "-"], input="FROM %s\nLABEL csched.test.rollout=1\n" % cl.image)
    ids = trigger(cl, active, "work", 2)
    t0 = time.monotonic()
    run(["podman", "stop", "-t", str(cl.spec.grace), standby], timeout=cl.spec.grace + 30)
    cl.start(standby, new_image)
    cl.wait_started(standby)
    log("standby %s rolled to %s (%.1fs)" % (standby, new_image, time.monotonic() - t0))
    # Runs longer than the drain's start, shorter than --drain-timeout.
    cl.csched(active, "job", "create", "drain", "--max-attempts", "3", "--shell", "sleep 6")
    drained = trigger(cl, active, "drain", 3)
    wait_for("the runs to be running", lambda: all(
        "RUNNING" in run_state(cl, active, i)[0] for i in drained), 30)
    ids += drained
    t0 = time.monotonic()
    # SIGTERM, as the kubelet sends it, with the pod's grace period.
    run(["podman", "stop", "-t", str(cl.spec.grace), active], timeout=cl.spec.grace + 30)
    status, code = cl.state(active)
    log("active %s drained and exited %s (%.1fs after SIGTERM)" % (active, code, time.monotonic() - t0))
    assert code == "0", "%s exited %s after SIGTERM:\n%s" % (active, code, cl.logs(active))
    wait_for("%s to become ready" % standby, lambda: standby in cl.ready(), 30)
    cl.start(active, new_image)
    cl.wait_started(active)
    ids += trigger(cl, standby, "work", 2)
    runs = wait_ended(cl, lambda: standby, ids, 90)
    for i, r in runs.items():
        assert "SUCCEEDED" in str(r["state"]), "run %d lost in the rollout: %s" % (i, r)
        # One placed on a pod as it stopped may have been taken back unstarted
        # (LOST "never started", which max_attempts does not count): one ran.
        ran = [a for a in attempts(r) if not str(a.get("message", "")).startswith("never started")]
        assert len(ran) == 1, "run %d needed a retry in the rollout: %s" % (i, r)
    assert cl.ready() == [standby], "ready after the rollout: %s" % cl.ready()
    for n in (r0, r1):
        assert cl.probe(n, "livenessProbe"), "%s: liveness failed after the rollout" % n
        img = run(["podman", "inspect", "--format", "{{.ImageName}}", n]).stdout.strip()
        assert img == new_image, "%s runs %s" % (n, img)
    log("rollout done: both on %s, %s active; runs %s all SUCCEEDED, each run once" % (
        new_image, standby, ids))
    run(["podman", "rmi", "-f", new_image], check=False)


if __name__ == "__main__":
    main()
