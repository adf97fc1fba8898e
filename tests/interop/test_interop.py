#!/usr/bin/python3
"""Interop test: the official Python gRPC client, generated from proto/, against
a real cschedd with its embedded PostgreSQL and real minders.

One cschedd is started for the whole file with --ready-file and a temporary
--state-dir, on its own unix socket and on 127.0.0.1:0 serving TLS
(certificates made by openssl through tests/integration/make_certs.sh) with
bearer tokens; the client uses grpcio's ssl_channel_credentials and an admin
token as call metadata. It is stopped with SIGTERM at the end and must exit 0.
Run with /usr/bin/python3 (Debian's python3-grpcio and python3-grpc-tools).
"""

import argparse
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

PARSER = argparse.ArgumentParser(description=__doc__)
PARSER.add_argument("--bin-dir", required=True, help="where cschedd and csched-minder are")
PARSER.add_argument("--gen-dir", required=True, help="where grpc_tools.protoc wrote the modules")
PARSER.add_argument("--make-certs", required=True, help="the script that makes the certificates")
PARSER.add_argument("--proto-dir", required=True, help="the API's .proto files (proto/)")
ARGS, UNITTEST_ARGV = PARSER.parse_known_args()
sys.path.insert(0, ARGS.gen_dir)

import grpc  # noqa: E402
import health_pb2  # noqa: E402
import health_pb2_grpc  # noqa: E402
from csched.v1 import scheduler_pb2 as pb  # noqa: E402
from csched.v1 import scheduler_pb2_grpc  # noqa: E402

from google.protobuf import any_pb2, descriptor_pb2, descriptor_pool  # noqa: E402
from google.protobuf import message_factory  # noqa: E402

ADMIN_TOKEN = "interop-admin-token-0123456789abcdef"
VIEWER_TOKEN = "interop-viewer-token-0123456789abcdef"
READY_TIMEOUT_S = 90.0
RPC_TIMEOUT_S = 10.0
RUN_TIMEOUT_S = 30.0

TERMINAL_STATES = (pb.RUN_STATE_SUCCEEDED, pb.RUN_STATE_FAILED, pb.RUN_STATE_TIMED_OUT,
                   pb.RUN_STATE_CANCELLED, pb.RUN_STATE_LOST)


def peak_rss_kb(pid):
    """The most memory process pid has held at once (VmHWM), in KiB."""
    with open("/proc/%d/status" % pid) as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise AssertionError("no VmHWM in /proc/%d/status" % pid)


def rich_error_classes():
    """google.rpc.Status and google.rpc.BadRequest, from their published
    field numbers (google/rpc/status.proto, google/rpc/error_details.proto):
    Debian packages neither module for Python."""
    fdp = descriptor_pb2.FieldDescriptorProto
    pool = descriptor_pool.DescriptorPool()
    pool.AddSerializedFile(any_pb2.DESCRIPTOR.serialized_pb)
    f = descriptor_pb2.FileDescriptorProto(name="google/rpc/csched_interop.proto",
                                           package="google.rpc", syntax="proto3",
                                           dependency=["google/protobuf/any.proto"])

    def message(name, fields, parent=None):
        m = (parent.nested_type if parent else f.message_type).add(name=name)
        for number, (field, kind, label, type_name) in enumerate(fields, 1):
            m.field.add(name=field, number=number, type=kind, label=label, type_name=type_name)
        return m

    one, many = fdp.LABEL_OPTIONAL, fdp.LABEL_REPEATED
    message("Status", [("code", fdp.TYPE_INT32, one, None),
                       ("message", fdp.TYPE_STRING, one, None),
                       ("details", fdp.TYPE_MESSAGE, many, ".google.protobuf.Any")])
    bad = message("BadRequest", [("field_violations", fdp.TYPE_MESSAGE, many,
                                  ".google.rpc.BadRequest.FieldViolation")])
    message("FieldViolation", [("field", fdp.TYPE_STRING, one, None),
                               ("description", fdp.TYPE_STRING, one, None)], bad)
    pool.Add(f)
    get = getattr(message_factory, "GetMessageClass", None) or \
        message_factory.MessageFactory(pool).GetPrototype
    return (get(pool.FindMessageTypeByName("google.rpc.Status")),
            get(pool.FindMessageTypeByName("google.rpc.BadRequest")))


class Server:
    """A cschedd child process on a unix socket in its own state dir; tokens:
    (name, role, token) triples for its tokens file."""

    def __init__(self, bin_dir, extra_args=(), tokens=None):
        triples = tokens or (("interop-admin", "admin", ADMIN_TOKEN),
                             ("interop-viewer", "viewer", VIEWER_TOKEN))
        self.state_dir = tempfile.mkdtemp(prefix="csched-interop-")
        self.ready_file = os.path.join(self.state_dir, "ready")
        self.log_path = os.path.join(self.state_dir, "cschedd.log")
        self.log = open(self.log_path, "wb")
        self.certs = os.path.join(self.state_dir, "certs")
        os.mkdir(self.certs)
        subprocess.run(["sh", ARGS.make_certs, self.certs], check=True)
        tokens = os.path.join(self.certs, "tokens")
        with open(os.open(tokens, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
            for name, role, token in triples:
                f.write("%s %s %s\n" % (name, role, hashlib.sha256(token.encode()).hexdigest()))
        cmd = [
            os.path.join(bin_dir, "cschedd"),
            "--socket", os.path.join(self.state_dir, "csched.sock"),
            "--listen", "127.0.0.1:0",
            "--ready-file", self.ready_file,
            "--state-dir", self.state_dir,
            "--max-running", "8",
            "--tls-cert", self.cert("server.pem"),
            "--tls-key", self.cert("server.key"),
            "--tokens-file", tokens,
        ] + list(extra_args)
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT)
        self.target = self._wait_ready()

    def _wait_ready(self):
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("cschedd exited with %d before it was ready:\n%s"
                                   % (self.proc.returncode, self.log_text()))
            try:
                with open(self.ready_file) as f:
                    target = f.read().strip()
                if target:
                    return target
            except FileNotFoundError:
                pass
            time.sleep(0.05)
        raise RuntimeError("cschedd not ready after %.0f s:\n%s"
                           % (READY_TIMEOUT_S, self.log_text()))

    def cert(self, name):
        return os.path.join(self.certs, name)

    def channel(self, token=None):
        """A TLS channel trusting the test CA, sending token (if any) on every call."""
        with open(self.cert("ca.pem"), "rb") as f:
            creds = grpc.ssl_channel_credentials(root_certificates=f.read())
        if token is not None:
            creds = grpc.composite_channel_credentials(
                creds, grpc.access_token_call_credentials(token))
        return grpc.secure_channel(self.target, creds)

    def log_text(self):
        if not self.log.closed:
            self.log.flush()
        with open(self.log_path, "rb") as f:
            return f.read().decode("utf-8", "replace")[-4000:]

    def stop(self):
        """SIGTERM, wait (bounded), and return the exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        return self.proc.returncode

    def remove(self):
        shutil.rmtree(self.state_dir, ignore_errors=True)


class GeneratedPackagesTest(unittest.TestCase):
    """What Python generates from proto/ and the health stubs leave grpcio's
    own "grpc" package alone."""

    def test_grpc_is_grpcio(self):
        self.assertTrue(hasattr(grpc, "insecure_channel"))
        self.assertFalse(os.path.realpath(grpc.__file__).startswith(
            os.path.realpath(ARGS.gen_dir)))
        self.assertFalse(os.path.exists(os.path.join(ARGS.gen_dir, "grpc")))
        self.assertEqual(health_pb2.DESCRIPTOR.package, "grpc.health.v1")
        self.assertIsNotNone(
            health_pb2.DESCRIPTOR.services_by_name["Health"].methods_by_name.get("Check"))

    def test_everything_in_proto_dir_generates_no_grpc_package(self):
        protos = []
        for root, _, files in os.walk(ARGS.proto_dir):
            protos += [os.path.relpath(os.path.join(root, f), ARGS.proto_dir)
                       for f in files if f.endswith(".proto")]
        self.assertIn(os.path.join("csched", "v1", "scheduler.proto"), protos)
        out = tempfile.mkdtemp(prefix="csched-interop-gen-")
        try:
            subprocess.run([sys.executable, "-m", "grpc_tools.protoc", "-I" + ARGS.proto_dir,
                            "--python_out=" + out, "--grpc_python_out=" + out] + protos,
                           check=True)
            self.assertEqual(sorted(os.listdir(out)), ["csched"])
            probe = subprocess.run(
                [sys.executable, "-c",
                 "import sys; sys.path.insert(0, sys.argv[1]); import grpc; "
                 "from csched.v1 import scheduler_pb2_grpc; print(grpc.__file__)", out],
                check=True, capture_output=True, text=True)
            self.assertFalse(os.path.realpath(probe.stdout.strip()).startswith(
                os.path.realpath(out)))
        finally:
            shutil.rmtree(out)


class ServerTest(unittest.TestCase):
    """One cschedd for the class's tests, started with server_args more (and
    server_tokens) and reached through open_channel; it must stop with exit
    status 0."""
    server = None
    channel = None
    server_args = ()
    server_tokens = None  # Server's default

    @classmethod
    def open_channel(cls):
        return cls.server.channel(ADMIN_TOKEN)

    @classmethod
    def setUpClass(cls):
        cls.server = Server(ARGS.bin_dir, cls.server_args, cls.server_tokens)
        cls.channel = cls.open_channel()
        grpc.channel_ready_future(cls.channel).result(timeout=RPC_TIMEOUT_S)
        cls.stub = scheduler_pb2_grpc.SchedulerStub(cls.channel)
        cls.health = health_pb2_grpc.HealthStub(cls.channel)

    @classmethod
    def tearDownClass(cls):
        if cls.channel is not None:
            cls.channel.close()
        if cls.server is not None:
            status = cls.server.stop()
            log = cls.server.log_text()
            if status == 0:
                cls.server.remove()
            assert status == 0, "cschedd exit status %r, want 0 (state dir %s):\n%s" % (
                status, cls.server.state_dir, log)


class InteropTest(ServerTest):
    server_args = ("--replica-id", "interop-self")

    def test_health_serving(self):
        reply = self.health.Check(health_pb2.HealthCheckRequest(service=""),
                                  timeout=RPC_TIMEOUT_S)
        self.assertEqual(reply.status, health_pb2.HealthCheckResponse.SERVING)

    def test_tls_without_token_is_unauthenticated(self):
        with self.server.channel() as channel:
            with self.assertRaises(grpc.RpcError) as ctx:
                scheduler_pb2_grpc.SchedulerStub(channel).ListJobs(pb.ListJobsRequest(),
                                                                   timeout=RPC_TIMEOUT_S)
        self.assertEqual(ctx.exception.code(), grpc.StatusCode.UNAUTHENTICATED)
        self.assertIn("Bearer", ctx.exception.details())

    def test_viewer_token_lists_but_does_not_create(self):
        with self.server.channel() as channel:
            stub = scheduler_pb2_grpc.SchedulerStub(channel)
            md = (("authorization", "Bearer " + VIEWER_TOKEN),)
            stub.ListJobs(pb.ListJobsRequest(), timeout=RPC_TIMEOUT_S, metadata=md)
            with self.assertRaises(grpc.RpcError) as ctx:
                stub.CreateJob(pb.CreateJobRequest(job=pb.Job(name="interop-viewer",
                                                              command=["true"])),
                               timeout=RPC_TIMEOUT_S, metadata=md)
        self.assertEqual(ctx.exception.code(), grpc.StatusCode.PERMISSION_DENIED)
        self.assertIn("token:interop-viewer", ctx.exception.details())

    def test_viewer_lists_replicas(self):
        """ListReplicas answers a viewer with the replicas the database has,
        by id: the server's own row, once it writes one, marked self, and no
        other."""
        with self.server.channel(VIEWER_TOKEN) as channel:
            reply = scheduler_pb2_grpc.SchedulerStub(channel).ListReplicas(
                pb.ListReplicasRequest(), timeout=RPC_TIMEOUT_S)
        ids = [r.id for r in reply.replicas]
        self.assertEqual(ids, sorted(ids))
        for r in reply.replicas:
            self.assertEqual(r.self, r.id == "interop-self", r)
            self.assertIn(r.state, pb.ReplicaState.values(), r)

    def test_plaintext_client_refused(self):
        with grpc.insecure_channel(self.server.target) as channel:
            with self.assertRaises(grpc.RpcError) as ctx:
                scheduler_pb2_grpc.SchedulerStub(channel).ListJobs(pb.ListJobsRequest(),
                                                                   timeout=RPC_TIMEOUT_S)
        self.assertEqual(ctx.exception.code(), grpc.StatusCode.UNAVAILABLE)

    def test_compressed_request_is_refused_uninflated(self):
        """gRPC inflated a compressed request whole before checking its size:
        a gzip'd name of 96 MB (about 100 KB on the wire) made cschedd hold
        96 MB, and any local user may send one. A compressed request is now
        refused at once, unread; the same call uncompressed is served."""
        before_kb = peak_rss_kb(self.server.proc.pid)
        with self.assertRaises(grpc.RpcError) as ctx:
            self.stub.GetJob(pb.GetJobRequest(name="a" * (96 << 20)), timeout=RPC_TIMEOUT_S,
                             compression=grpc.Compression.Gzip)
        err = ctx.exception
        self.assertEqual(err.code(), grpc.StatusCode.UNIMPLEMENTED, err.details())
        self.assertIn("'gzip' is disabled", err.details())
        grew_kb = peak_rss_kb(self.server.proc.pid) - before_kb
        self.assertLess(grew_kb, 32 << 10, "cschedd's peak memory grew by %d KiB" % grew_kb)
        with self.assertRaises(grpc.RpcError) as ctx:
            self.stub.GetJob(pb.GetJobRequest(name="interop-no-such-job-3"),
                             timeout=RPC_TIMEOUT_S)
        self.assertEqual(ctx.exception.code(), grpc.StatusCode.NOT_FOUND)

    def test_unknown_job_is_not_found(self):
        with self.assertRaises(grpc.RpcError) as ctx:
            self.stub.GetJob(pb.GetJobRequest(name="interop-no-such-job"), timeout=RPC_TIMEOUT_S)
        err = ctx.exception
        self.assertEqual(err.code(), grpc.StatusCode.NOT_FOUND, err.details())
        self.assertTrue(err.details(), "NOT_FOUND carries no message")

    def test_invalid_job_has_field_violation(self):
        job = pb.Job(name="interop-bad-labels", command=["true"], labels={"k" * 64: "v"})
        self.assertIn("63 bytes", self.field_violation(job, "job.labels"))

    def test_after_cycle_names_after_and_the_cycle(self):
        """An update that closes a cycle of after lists is one BadRequest
        violation of job.after whose words give the cycle."""
        self.stub.CreateJob(pb.CreateJobRequest(job=pb.Job(name="interop-cyc-a", command=["true"])),
                            timeout=RPC_TIMEOUT_S)
        self.stub.CreateJob(pb.CreateJobRequest(job=pb.Job(
            name="interop-cyc-b", command=["true"], after=[pb.Dependency(job="interop-cyc-a")])),
            timeout=RPC_TIMEOUT_S)
        words = self.call_violation(self.stub.UpdateJob, pb.UpdateJobRequest(job=pb.Job(
            name="interop-cyc-a", command=["true"], after=[pb.Dependency(job="interop-cyc-b")])),
            "job.after")
        self.assertIn("interop-cyc-a -> interop-cyc-b -> interop-cyc-a", words)

    def test_bad_schedule_names_its_field_and_form(self):
        job = pb.Job(name="interop-bad-cron", command=["true"],
                     schedule=pb.Schedule(text="0 0 32 * *"))
        self.assertEqual(self.field_violation(job, "job.schedule.text"),
                         "job.schedule.text: cron field 3 (day of month): 32 is out of range 1-31")

    def field_violation(self, job, field):
        """CreateJob(job) fails with one BadRequest violation of field: its words."""
        return self.call_violation(self.stub.CreateJob, pb.CreateJobRequest(job=job), field)

    def call_violation(self, method, request, field):
        """method(request) fails with one BadRequest violation of field: its words."""
        status_cls, bad_request_cls = rich_error_classes()
        with self.assertRaises(grpc.RpcError) as ctx:
            method(request, timeout=RPC_TIMEOUT_S)
        err = ctx.exception
        self.assertEqual(err.code(), grpc.StatusCode.INVALID_ARGUMENT, err.details())
        details = dict(err.trailing_metadata()).get("grpc-status-details-bin")
        self.assertIsNotNone(details, "no grpc-status-details-bin trailer")
        status = status_cls.FromString(details)
        self.assertEqual(status.code, grpc.StatusCode.INVALID_ARGUMENT.value[0])
        self.assertEqual(status.message, err.details())
        self.assertEqual(len(status.details), 1)
        self.assertEqual(status.details[0].type_url, "type.googleapis.com/google.rpc.BadRequest")
        bad = bad_request_cls.FromString(status.details[0].value)
        self.assertEqual([(v.field, v.description) for v in bad.field_violations],
                         [(field, err.details())])
        return err.details()

    def walk(self, method, request, items):
        """Every page of a List call with page_size 1: its items, and the
        number of pages, each of them full."""
        request.page_size = 1
        got, pages = [], 0
        while True:
            reply = method(request, timeout=RPC_TIMEOUT_S)
            pages += 1
            self.assertEqual(len(getattr(reply, items)), 1, "page %d is not full" % pages)
            got.extend(getattr(reply, items))
            if not reply.next_page_token:
                return got, pages
            request.page_token = reply.next_page_token

    def test_label_selectors_filter_before_paging(self):
        """ListJobs, ListRuns and ListSlots with a label selector: only what
        matches, in pages that are full (one each here) with no empty last
        page; runs by their job's labels; a bad term is INVALID_ARGUMENT with
        a BadRequest naming label_selector and the term."""
        labels = {"sel-a": {"env": "prod"}, "sel-b": {"env": "dev"},
                  "sel-c": {"env": "prod", "tier": "web"}, "sel-d": {},
                  "sel-e": {"env": "prod", "legacy": "yes"}}
        for name, l in labels.items():
            self.stub.CreateJob(pb.CreateJobRequest(job=pb.Job(name=name, command=["true"],
                                                               labels=l)),
                                timeout=RPC_TIMEOUT_S)

        def jobs(selector):
            got = self.stub.ListJobs(pb.ListJobsRequest(label_selector=selector),
                                     timeout=RPC_TIMEOUT_S).jobs
            return [j.name for j in got if j.name.startswith("sel-")]

        got, pages = self.walk(self.stub.ListJobs, pb.ListJobsRequest(label_selector="env=prod"),
                               "jobs")
        self.assertEqual([j.name for j in got], ["sel-a", "sel-c", "sel-e"])
        self.assertEqual(pages, 3)
        self.assertEqual(jobs("env in (prod, dev),!legacy"), ["sel-a", "sel-b", "sel-c"])
        self.assertEqual(jobs("env notin (prod)"), ["sel-b", "sel-d"])
        self.assertEqual(jobs("env!=prod,!tier"), ["sel-b", "sel-d"])
        self.assertEqual(jobs("tier"), ["sel-c"])
        self.assertEqual(jobs(""), sorted(labels))

        for name in ("sel-a", "sel-b", "sel-a", "sel-d", "sel-c"):
            self.stub.TriggerJob(pb.TriggerJobRequest(job_name=name), timeout=RPC_TIMEOUT_S)
        got, pages = self.walk(self.stub.ListRuns, pb.ListRunsRequest(label_selector="env=prod"),
                               "runs")
        self.assertEqual([r.job_name for r in got], ["sel-c", "sel-a", "sel-a"])
        self.assertEqual(pages, 3)
        others = self.stub.ListRuns(pb.ListRunsRequest(label_selector="env!=prod"),
                                    timeout=RPC_TIMEOUT_S).runs
        self.assertEqual([r.job_name for r in others if r.job_name.startswith("sel-")],
                         ["sel-d", "sel-b"])
        self.assertFalse(self.stub.ListRuns(
            pb.ListRunsRequest(job_name="sel-b", label_selector="env=prod"),
            timeout=RPC_TIMEOUT_S).runs)
        self.assertFalse(self.stub.ListRuns(pb.ListRunsRequest(label_selector="env=none"),
                                            timeout=RPC_TIMEOUT_S).runs)

        # Slots: only if the job matches.
        hour_ms = 3600 * 1000
        now_ms = int(time.time() * 1000)
        self.stub.CreateJob(pb.CreateJobRequest(job=pb.Job(
            name="sel-hourly", command=["true"], labels={"env": "prod"},
            schedule=pb.Schedule(text="0 * * * *"))), timeout=RPC_TIMEOUT_S)
        self.stub.BackfillJob(pb.BackfillJobRequest(name="sel-hourly",
                                                    from_unix_ms=now_ms - 3 * hour_ms,
                                                    to_unix_ms=now_ms - hour_ms),
                              timeout=RPC_TIMEOUT_S)
        got, pages = self.walk(self.stub.ListSlots,
                               pb.ListSlotsRequest(job_name="sel-hourly", label_selector="env"),
                               "slots")
        self.assertEqual(pages, 2)
        self.assertFalse(self.stub.ListSlots(
            pb.ListSlotsRequest(job_name="sel-hourly", label_selector="!env"),
            timeout=RPC_TIMEOUT_S).slots)

        for method, request in ((self.stub.ListJobs, pb.ListJobsRequest),
                                (self.stub.ListRuns, pb.ListRunsRequest),
                                (self.stub.ListSlots, pb.ListSlotsRequest)):
            req = request(label_selector="env=prod, tier in web")
            if request is pb.ListSlotsRequest:
                req.job_name = "sel-a"
            words = self.call_violation(method, req, "label_selector")
            self.assertIn("' tier in web'", words)

    def wait_run(self, run_id, states):
        """GetRun until the run is in one of states (bounded by RUN_TIMEOUT_S)."""
        deadline = time.monotonic() + RUN_TIMEOUT_S
        while True:
            run = self.stub.GetRun(pb.GetRunRequest(run_id=run_id), timeout=RPC_TIMEOUT_S)
            if run.state in states or time.monotonic() > deadline:
                self.assertIn(run.state, states)
                return run
            time.sleep(0.05)

    def test_state_filter_before_paging(self):
        """ListJobs' state, applied with the label selector before paging:
        full pages of the jobs running now, paused, whose last run failed or
        that never ran; a value no JobStateFilter has is INVALID_ARGUMENT
        with a BadRequest naming state."""
        names = ("st-ok", "st-fail", "st-never", "st-sleep", "st-paused", "st-late")
        commands = {"st-fail": ["false"], "st-sleep": ["sleep", "60"]}
        for name in names:
            self.stub.CreateJob(pb.CreateJobRequest(job=pb.Job(
                name=name, command=commands.get(name, ["true"]), labels={"st": "yes"},
                kill_grace_seconds=1)), timeout=RPC_TIMEOUT_S)
        # st-late failed once, then succeeded: its last run counts.
        for name, command in (("st-ok", None), ("st-fail", None), ("st-late", ["false"]),
                              ("st-late", ["true"])):
            if command is not None:
                self.stub.UpdateJob(pb.UpdateJobRequest(job=pb.Job(
                    name=name, command=command, labels={"st": "yes"})), timeout=RPC_TIMEOUT_S)
            run = self.stub.TriggerJob(pb.TriggerJobRequest(job_name=name), timeout=RPC_TIMEOUT_S)
            self.wait_run(run.id, TERMINAL_STATES)
        sleeper = self.stub.TriggerJob(pb.TriggerJobRequest(job_name="st-sleep"),
                                       timeout=RPC_TIMEOUT_S)
        self.wait_run(sleeper.id, (pb.RUN_STATE_RUNNING,))
        self.stub.PauseJob(pb.PauseJobRequest(name="st-paused"), timeout=RPC_TIMEOUT_S)

        def listed(state):
            got, pages = self.walk(self.stub.ListJobs,
                                   pb.ListJobsRequest(label_selector="st", state=state), "jobs")
            self.assertEqual(pages, len(got))
            return [j.name for j in got]

        self.assertEqual(listed(pb.JOB_STATE_FILTER_RUNNING), ["st-sleep"])
        self.assertEqual(listed(pb.JOB_STATE_FILTER_PAUSED), ["st-paused"])
        self.assertEqual(listed(pb.JOB_STATE_FILTER_LAST_FAILED), ["st-fail"])
        self.assertEqual(listed(pb.JOB_STATE_FILTER_NEVER_RUN), ["st-never", "st-paused"])
        self.assertEqual(listed(pb.JOB_STATE_FILTER_UNSPECIFIED), sorted(names))
        words = self.call_violation(self.stub.ListJobs, pb.ListJobsRequest(state=9), "state")
        self.assertIn("state 9 is not a JobStateFilter", words)

        self.stub.CancelRun(pb.CancelRunRequest(run_id=sleeper.id), timeout=RPC_TIMEOUT_S)
        self.wait_run(sleeper.id, TERMINAL_STATES)
        self.assertEqual(listed(pb.JOB_STATE_FILTER_LAST_FAILED), ["st-fail"])
        self.assertFalse(self.stub.ListJobs(
            pb.ListJobsRequest(label_selector="st", state=pb.JOB_STATE_FILTER_RUNNING),
            timeout=RPC_TIMEOUT_S).jobs)

    def test_list_fires_every_fire_in_the_window(self):
        """ListFires: every fire of the window [from, to) of each job that
        fires in it, by name, a page of jobs at a time; at most 1440 a job
        (truncated past them); a paused job or one without a schedule fires
        none; a window that is none or past 7 days is INVALID_ARGUMENT."""
        specs = {"fires-hourly": "0 * * * *", "fires-minute": "* * * * *",
                 "fires-second": "* * * * * *", "fires-paused": "0 * * * *",
                 "fires-none": ""}
        for name, text in specs.items():
            self.stub.CreateJob(pb.CreateJobRequest(job=pb.Job(
                name=name, command=["true"], labels={"fires": "yes"},
                schedule=pb.Schedule(text=text) if text else None)), timeout=RPC_TIMEOUT_S)
        self.stub.PauseJob(pb.PauseJobRequest(name="fires-paused"), timeout=RPC_TIMEOUT_S)
        # A day from hh:30:30, an hour or two from now: no hourly fire in its
        # first minute.
        start = ((int(time.time()) // 3600 + 2) * 3600 + 30 * 60 + 30) * 1000
        day = 24 * 3600 * 1000
        got, pages = self.walk(self.stub.ListFires, pb.ListFiresRequest(
            from_unix_ms=start, to_unix_ms=start + day, label_selector="fires"), "jobs")
        self.assertEqual([j.job_name for j in got], ["fires-hourly", "fires-minute",
                                                     "fires-second"])
        self.assertEqual(pages, 3)
        by = {j.job_name: j for j in got}
        hourly = list(by["fires-hourly"].at_unix_ms)
        self.assertEqual(len(hourly), 24)
        self.assertEqual(hourly, [hourly[0] + k * 3600 * 1000 for k in range(24)])
        self.assertTrue(start <= hourly[0] < start + 3600 * 1000)
        self.assertEqual(len(by["fires-minute"].at_unix_ms), 1440)
        self.assertFalse(by["fires-minute"].truncated)
        second = list(by["fires-second"].at_unix_ms)
        self.assertEqual((len(second), by["fires-second"].truncated), (1440, True))
        self.assertEqual(second[:2], [start, start + 1000])
        # A window of a minute, in one page.
        reply = self.stub.ListFires(pb.ListFiresRequest(
            from_unix_ms=start, to_unix_ms=start + 60000, label_selector="fires"),
            timeout=RPC_TIMEOUT_S)
        self.assertEqual([(j.job_name, len(j.at_unix_ms)) for j in reply.jobs],
                         [("fires-minute", 1), ("fires-second", 60)])
        self.assertFalse(reply.next_page_token)
        for req in (pb.ListFiresRequest(from_unix_ms=start, to_unix_ms=start),
                    pb.ListFiresRequest(from_unix_ms=start, to_unix_ms=start + 8 * day)):
            words = self.call_violation(self.stub.ListFires, req, "to_unix_ms")
            self.assertIn("7 days", words)

    def test_runs_since(self):
        """ListRuns' since_unix_ms: the runs made from then on, none before."""
        self.stub.CreateJob(pb.CreateJobRequest(job=pb.Job(name="since-job", command=["true"])),
                            timeout=RPC_TIMEOUT_S)
        old = self.stub.TriggerJob(pb.TriggerJobRequest(job_name="since-job"),
                                   timeout=RPC_TIMEOUT_S)
        time.sleep(0.05)
        since_ms = int(time.time() * 1000)
        time.sleep(0.05)
        new = [self.stub.TriggerJob(pb.TriggerJobRequest(job_name="since-job"),
                                    timeout=RPC_TIMEOUT_S).id for _ in range(2)]
        got = self.stub.ListRuns(pb.ListRunsRequest(job_name="since-job", since_unix_ms=since_ms),
                                 timeout=RPC_TIMEOUT_S).runs
        self.assertEqual([r.id for r in got], new[::-1])
        got = self.stub.ListRuns(pb.ListRunsRequest(since_unix_ms=since_ms),
                                 timeout=RPC_TIMEOUT_S).runs
        self.assertNotIn(old.id, [r.id for r in got])
        self.assertTrue(set(new) <= {r.id for r in got})
        self.call_violation(self.stub.ListRuns, pb.ListRunsRequest(since_unix_ms=-1),
                            "since_unix_ms")

    def test_array(self):
        """An array from Python: one TriggerJob, its runs listed by array_id
        with their indices, and the key making it once."""
        self.stub.CreateJob(pb.CreateJobRequest(job=pb.Job(name="array-job", command=["true"])),
                            timeout=RPC_TIMEOUT_S)
        req = pb.TriggerJobRequest(job_name="array-job", array_size=4, array_first_index=10,
                                   array_max_running=2, idempotency_key="py-array")
        first = self.stub.TriggerJob(req, timeout=RPC_TIMEOUT_S)
        self.assertEqual((first.array_id, first.array_index), (first.id, 10))
        self.assertEqual(first.env["CSCHED_ARRAY_SIZE"], "4")
        self.assertEqual(self.stub.TriggerJob(req, timeout=RPC_TIMEOUT_S).id, first.id)
        runs = self.stub.ListRuns(pb.ListRunsRequest(array_id=first.id),
                                  timeout=RPC_TIMEOUT_S).runs
        self.assertEqual([(r.id, r.array_index) for r in runs],
                         [(first.id + i, 10 + i) for i in range(3, -1, -1)])
        self.assertEqual({r.env["CSCHED_ARRAY_INDEX"] for r in runs}, {"10", "11", "12", "13"})

    def test_every_field_error_has_its_violation(self):
        """Each validation of a request field the API makes, one bad request
        each: INVALID_ARGUMENT with one BadRequest violation naming the field."""
        year_ms = 366 * 24 * 3600 * 1000
        now_ms = int(time.time() * 1000)

        def streamed(method):
            """A server-streaming method whose failure shows at the first read."""
            return lambda request, timeout: list(method(request, timeout=timeout))

        self.stub.CreateJob(pb.CreateJobRequest(job=pb.Job(name="errs-job", command=["true"])),
                            timeout=RPC_TIMEOUT_S)
        s = self.stub
        cases = [
            (s.CreateJob, pb.CreateJobRequest(), "job"),
            (s.CreateJob, pb.CreateJobRequest(job=pb.Job(
                name="errs-tz", command=["true"],
                schedule=pb.Schedule(text="@every 1h", time_zone="Nowhere/Atlantis"))),
             "job.schedule.time_zone"),
            (s.GetJob, pb.GetJobRequest(name=""), "name"),
            (s.ListJobs, pb.ListJobsRequest(page_token="x"), "page_token"),
            (s.ListJobs, pb.ListJobsRequest(label_selector="a in b"), "label_selector"),
            (s.TriggerJob, pb.TriggerJobRequest(job_name=""), "job_name"),
            (s.TriggerJob, pb.TriggerJobRequest(job_name="errs-job", env={"A=B": "x"}), "env"),
            (s.TriggerJob, pb.TriggerJobRequest(job_name="errs-job", env={"": "x"}), "env"),
            (s.TriggerJob, pb.TriggerJobRequest(job_name="errs-job",
                                                not_before_unix_ms=now_ms + 2 * year_ms),
             "not_before_unix_ms"),
            (s.TriggerJob, pb.TriggerJobRequest(job_name="errs-job", idempotency_key="k" * 129),
             "idempotency_key"),
            (s.TriggerJob, pb.TriggerJobRequest(job_name="errs-job", array_size=1001),
             "array_size"),
            (s.TriggerJob, pb.TriggerJobRequest(job_name="errs-job", array_max_running=2),
             "array_size"),
            (s.TriggerJob, pb.TriggerJobRequest(job_name="errs-job", array_size=2,
                                                array_first_index=2**32 - 1),
             "array_first_index"),
            (s.CancelRun, pb.CancelRunRequest(run_id=1, array_id=1), "array_id"),
            (s.ListRuns, pb.ListRunsRequest(job_name="errs-job", array_id=1), "array_id"),
            (s.GetRun, pb.GetRunRequest(run_id=0), "run_id"),
            (s.CancelRun, pb.CancelRunRequest(run_id=-1), "run_id"),
            (s.ListRuns, pb.ListRunsRequest(state=99), "state"),
            (s.ListRuns, pb.ListRunsRequest(page_token="x"), "page_token"),
            (s.ListRuns, pb.ListRunsRequest(since_unix_ms=-1), "since_unix_ms"),
            (s.ListRuns, pb.ListRunsRequest(label_selector="!"), "label_selector"),
            (s.ListSlots, pb.ListSlotsRequest(job_name="errs-job", from_unix_ms=2000,
                                              to_unix_ms=1000), "to_unix_ms"),
            (s.ListSlots, pb.ListSlotsRequest(job_name="errs-job", from_unix_ms=-1),
             "from_unix_ms"),
            (s.ListSlots, pb.ListSlotsRequest(job_name="errs-job", outcome=9), "outcome"),
            (s.ListSlots, pb.ListSlotsRequest(job_name=""), "job_name"),
            (s.ListSlots, pb.ListSlotsRequest(job_name="errs-job", page_token="x"),
             "page_token"),
            (s.PauseJob, pb.PauseJobRequest(name="errs-job", reason="r" * 300), "reason"),
            (s.BackfillJob, pb.BackfillJobRequest(name="errs-job", from_unix_ms=1000,
                                                  to_unix_ms=2000), "name"),
            (s.ListAudit, pb.ListAuditRequest(since_unix_ms=-1), "since_unix_ms"),
            (s.ListAudit, pb.ListAuditRequest(since_unix_ms=2000, until_unix_ms=1000),
             "until_unix_ms"),
            (streamed(s.Watch), pb.WatchRequest(after_seq=-1), "after_seq"),
            (streamed(s.ReadLogs), pb.ReadLogsRequest(run_id=0), "run_id"),
            (streamed(s.ReadLogs), pb.ReadLogsRequest(run_id=1, stream=7), "stream"),
        ]
        for method, request, field in cases:
            with self.subTest(method=method, field=field):
                self.call_violation(method, request, field)

    def test_error_without_field_has_no_details(self):
        with self.assertRaises(grpc.RpcError) as ctx:
            self.stub.GetJob(pb.GetJobRequest(name="interop-no-such-job-2"),
                             timeout=RPC_TIMEOUT_S)
        self.assertNotIn("grpc-status-details-bin", dict(ctx.exception.trailing_metadata()))

    def test_create_trigger_watch_to_end(self):
        name = "interop-echo"
        job = self.stub.CreateJob(
            pb.CreateJobRequest(job=pb.Job(name=name, command=["sh", "-c", "echo interop"])),
            timeout=RPC_TIMEOUT_S)
        self.assertEqual(job.name, name)
        self.assertEqual(list(job.command), ["sh", "-c", "echo interop"])
        self.assertGreater(job.version, 0)

        run = self.stub.TriggerJob(pb.TriggerJobRequest(job_name=name), timeout=RPC_TIMEOUT_S)
        self.assertGreater(run.id, 0)
        self.assertEqual(run.job_name, name)
        self.assertIn(run.state, (pb.RUN_STATE_QUEUED, pb.RUN_STATE_STARTING,
                                  pb.RUN_STATE_RUNNING, pb.RUN_STATE_SUCCEEDED))

        # A full replay of this job's history, then live events, until the
        # run-level event that ends the run.
        stream = self.stub.Watch(pb.WatchRequest(after_seq=0, job_name=name),
                                 timeout=RUN_TIMEOUT_S)
        run_states = []
        last_seq = 0
        final = None
        # Each WatchResponse is a batch of one or more events.
        events = (ev for batch in stream for ev in batch.events)
        for ev in events:
            self.assertGreater(ev.seq, last_seq, "seq not strictly increasing")
            last_seq = ev.seq
            self.assertEqual(ev.job_name, name)
            if ev.run_id != run.id or ev.attempt != 0:
                continue
            run_states.append(ev.state)
            if ev.state in TERMINAL_STATES:
                final = ev
                break
        stream.cancel()

        self.assertIsNotNone(final, "stream ended before the run did: %r" % run_states)
        self.assertEqual(run_states, [pb.RUN_STATE_QUEUED, pb.RUN_STATE_STARTING,
                                      pb.RUN_STATE_RUNNING, pb.RUN_STATE_SUCCEEDED],
                         [pb.RunState.Name(s) for s in run_states])
        self.assertEqual(final.WhichOneof("outcome"), "exit_code")
        self.assertEqual(final.exit_code, 0)

        got = self.stub.GetRun(pb.GetRunRequest(run_id=run.id), timeout=RPC_TIMEOUT_S)
        self.assertEqual(got.id, run.id)
        self.assertEqual(got.state, pb.RUN_STATE_SUCCEEDED, pb.RunState.Name(got.state))
        self.assertEqual(got.WhichOneof("outcome"), "exit_code")
        self.assertEqual(got.exit_code, 0)
        self.assertEqual(len(got.attempts), 1)
        self.assertEqual(got.attempts[0].number, 1)
        self.assertEqual(got.attempts[0].state, pb.RUN_STATE_SUCCEEDED)
        self.assertGreater(got.ended_unix_ms, 0)
        self.assertGreaterEqual(got.ended_unix_ms, got.started_unix_ms)

        chunks = self.stub.ReadLogs(
            pb.ReadLogsRequest(run_id=run.id, stream=pb.LOG_STREAM_STDOUT),
            timeout=RPC_TIMEOUT_S)
        out = b"".join(c.data for c in chunks)
        self.assertEqual(out, b"interop\n")

    def test_schedule_next_fires_and_slots(self):
        name = "interop-scheduled"
        schedule = pb.Schedule(text="@every 1s", time_zone="Europe/Berlin",
                               misfire=pb.MISFIRE_RUN_ONCE, overlap=pb.OVERLAP_FORBID)
        self.stub.CreateJob(pb.CreateJobRequest(job=pb.Job(name=name, command=["true"],
                                                           schedule=schedule)),
                            timeout=RPC_TIMEOUT_S)
        job = self.stub.GetJob(pb.GetJobRequest(name=name), timeout=RPC_TIMEOUT_S)
        self.assertEqual(job.schedule.time_zone, "Europe/Berlin")
        self.assertEqual(job.schedule.overlap, pb.OVERLAP_FORBID)
        self.assertEqual(len(job.next_fires), 5)
        for a, b in zip(job.next_fires, job.next_fires[1:]):
            self.assertEqual(b.at_unix_ms - a.at_unix_ms, 1000)
        self.assertRegex(job.next_fires[0].local_time, r" \+0[12]:00$")
        time.sleep(2.5)
        slots = self.stub.ListSlots(pb.ListSlotsRequest(job_name=name), timeout=RPC_TIMEOUT_S)
        self.assertGreaterEqual(len(slots.slots), 2)
        for s in slots.slots:
            self.assertIn(s.outcome, (pb.SLOT_OUTCOME_STARTED, pb.SLOT_OUTCOME_SKIPPED))
            if s.outcome == pb.SLOT_OUTCOME_STARTED:
                run = self.stub.GetRun(pb.GetRunRequest(run_id=s.run_id), timeout=RPC_TIMEOUT_S)
                self.assertEqual(run.slot_unix_ms, s.slot_unix_ms)
        self.assertGreater(slots.slots[0].slot_unix_ms, slots.slots[-1].slot_unix_ms)
        self.stub.PauseJob(pb.PauseJobRequest(name=name, reason="interop"), timeout=RPC_TIMEOUT_S)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]] + UNITTEST_ARGV, verbosity=2)
