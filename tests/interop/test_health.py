#!/usr/bin/python3
"""grpc.health.v1 Watch from the official Python client, against a real
cschedd with its embedded PostgreSQL (test_interop.py's Server), over the
unix socket.

A Watch must send the serving status at once and again each time it
changes: with the embedded PostgreSQL frozen (SIGSTOP) it turns
NOT_SERVING, as Check does, and SERVING again after the thaw. Health is
open to every caller, so a local user without a role may open thousands
of Watch streams: they must not make each event of a burst of runs cost
more, which kept the loop 250 to 600 ms late with 20000 of them. And they
are bounded: a connection holds at most 100 streams at once (the client
waits for one of its own to end), all callers together at most
--max-health-watches Watch streams (one more is RESOURCE_EXHAUSTED), and a
user without role admin at most 64 connections (more are closed at once).
A request to a method open to all is at most 4 KiB, as a Watch keeps it:
one of a megabyte per stream would have made each cost 100 times more.
Run with /usr/bin/python3 (Debian's python3-grpcio and python3-grpc-tools).
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest

from test_interop import ARGS, RPC_TIMEOUT_S, UNITTEST_ARGV, ServerTest

import grpc  # noqa: E402
import health_pb2  # noqa: E402
import health_pb2_grpc  # noqa: E402
from csched.v1 import scheduler_pb2 as pb  # noqa: E402

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING
SERVICE_UNKNOWN = health_pb2.HealthCheckResponse.SERVICE_UNKNOWN
# The store's watchdog sees a frozen database within seconds (see
# test_e2e_dbfreeze.c), and a Watch hears it within CS_HEALTH_POLL_MS more.
CHANGE_TIMEOUT_S = 20.0
# The default --max-health-watches, each connection holding the most streams
# it may (rpc.h's CS_RPC_MAX_STREAMS_PER_CONNECTION).
HEALTH_WATCHES = 10000
STREAMS_PER_CONNECTION = 100
# local_listen.h's CS_LOCAL_MAX_CONNECTIONS_PER_UID, and a uid no one has.
CONNECTIONS_PER_UID = 64
PEER_UID = 61904
BURST_RUNS = 400
# The loop-lag bound a burst must keep (testlib.h's CS_TEST_LAG_P99_MAX_US is
# 50 ms), with room for a loaded machine.
LAG_MAX_US = 200000


class Statuses:
    """Reads a health Watch on a thread of its own, keeping every status."""

    def __init__(self, stub, service):
        self.call = stub.Watch(health_pb2.HealthCheckRequest(service=service), timeout=60)
        self.seen = []
        self.changed = threading.Condition()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        try:
            for reply in self.call:
                with self.changed:
                    self.seen.append(reply.status)
                    self.changed.notify_all()
        except grpc.RpcError:
            pass

    def wait_for(self, status, timeout):
        with self.changed:
            return self.changed.wait_for(lambda: status in self.seen, timeout)

    def stop(self):
        self.call.cancel()
        self.thread.join()


def cluster_of(state_dir):
    """The embedded PostgreSQL's postmaster and every process it started."""
    with open(os.path.join(state_dir, "pg", "data", "postmaster.pid")) as f:
        postmaster = int(f.readline())
    pids = [postmaster]
    for entry in os.listdir("/proc"):
        try:
            with open("/proc/%s/stat" % entry) as f:
                if int(f.read().rsplit(")", 1)[1].split()[1]) == postmaster:
                    pids.append(int(entry))
        except (ValueError, OSError, IndexError):
            continue
    return pids


def unix_channel(path):
    """A channel with a connection of its own: grpcio shares one between
    channels to the same target unless told not to."""
    return grpc.insecure_channel("unix:" + path, options=[("grpc.use_local_subchannel_pool", 1)])


class UnixSocketTest(ServerTest):
    @classmethod
    def open_channel(cls):
        return unix_channel(cls.socket())

    @classmethod
    def socket(cls):
        return os.path.join(cls.server.state_dir, "csched.sock")


class HealthWatchTest(UnixSocketTest):

    def test_watch_follows_a_frozen_database(self):
        watch = Statuses(self.health, "")
        unknown = Statuses(self.health, "no.such.Service")
        self.assertTrue(watch.wait_for(SERVING, RPC_TIMEOUT_S), watch.seen)
        pids = cluster_of(self.server.state_dir)
        try:
            for pid in pids:
                os.kill(pid, signal.SIGSTOP)
            self.assertTrue(watch.wait_for(NOT_SERVING, CHANGE_TIMEOUT_S),
                            "Watch still says %r with the database frozen" % watch.seen)
        finally:
            for pid in pids:
                os.kill(pid, signal.SIGCONT)
        self.assertEqual(watch.seen, [SERVING, NOT_SERVING])
        with watch.changed:
            self.assertTrue(watch.changed.wait_for(lambda: len(watch.seen) == 3,
                                                   CHANGE_TIMEOUT_S), watch.seen)
        self.assertEqual(watch.seen[2], SERVING)
        watch.stop()
        unknown.stop()
        self.assertEqual(unknown.seen, [SERVICE_UNKNOWN])

    def test_many_watches_leave_a_burst_on_time(self):
        channels = [unix_channel(self.socket())
                    for _ in range(HEALTH_WATCHES // STREAMS_PER_CONNECTION)]
        watches = [health_pb2_grpc.HealthStub(c).Watch(health_pb2.HealthCheckRequest(service=""))
                   for c in channels for _ in range(STREAMS_PER_CONNECTION)]
        try:
            for w in watches:
                self.assertEqual(next(w).status, SERVING)
            with self.assertRaises(grpc.RpcError) as refused:
                next(self.health.Watch(health_pb2.HealthCheckRequest(service=""),
                                       timeout=RPC_TIMEOUT_S))
            self.assertEqual(refused.exception.code(), grpc.StatusCode.RESOURCE_EXHAUSTED)
            self.assertIn("%d health Watch streams are open" % HEALTH_WATCHES,
                          refused.exception.details())
            self.stub.CreateJob(pb.CreateJobRequest(job=pb.Job(name="health-burst",
                                                               command=["true"])),
                                timeout=RPC_TIMEOUT_S)
            before = self.stub.GetStats(pb.GetStatsRequest(), timeout=RPC_TIMEOUT_S)
            triggers = [self.stub.TriggerJob.future(pb.TriggerJobRequest(job_name="health-burst"),
                                                    timeout=60)
                        for _ in range(BURST_RUNS)]
            for t in triggers:
                t.result()
            deadline = time.monotonic() + 60
            while True:
                stats = self.stub.GetStats(pb.GetStatsRequest(), timeout=RPC_TIMEOUT_S)
                if stats.runs_finished >= before.runs_finished + BURST_RUNS:
                    break
                self.assertLess(time.monotonic(), deadline, "the burst did not end")
                time.sleep(0.2)
            self.assertLess(stats.lag_last_minute.max_us, LAG_MAX_US,
                            "%d health watches made a burst of %d runs late"
                            % (HEALTH_WATCHES, BURST_RUNS))
        finally:
            for w in watches:
                w.cancel()
            for c in channels:
                c.close()


class StreamLimitsTest(UnixSocketTest):
    server_args = ("--max-health-watches", "150")

    def test_open_methods_take_small_requests(self):
        with self.assertRaises(grpc.RpcError) as refused:
            next(self.health.Watch(health_pb2.HealthCheckRequest(service="x" * 5000),
                                   timeout=RPC_TIMEOUT_S))
        self.assertEqual(refused.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("the request is 5003 bytes; /grpc.health.v1.Health/Watch, open to every "
                      "caller, takes at most 4096", refused.exception.details())
        reflect = self.channel.stream_stream(
            "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo")
        # file_by_filename (field 3) of 5000 bytes, by hand: no reflection stubs here.
        big = b"\x1a\x88\x27" + b"x" * 5000
        with self.assertRaises(grpc.RpcError) as refused:
            list(reflect(iter([big]), timeout=RPC_TIMEOUT_S))
        self.assertEqual(refused.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("takes at most 4096", refused.exception.details())
        self.assertEqual(next(self.health.Watch(health_pb2.HealthCheckRequest(service="x" * 4000),
                                                timeout=RPC_TIMEOUT_S)).status, SERVICE_UNKNOWN)

    def test_a_connection_holds_at_most_its_streams(self):
        channel = unix_channel(self.socket())
        stub = health_pb2_grpc.HealthStub(channel)
        watches = [Statuses(stub, "") for _ in range(STREAMS_PER_CONNECTION + 1)]
        try:
            for w in watches[:-1]:
                self.assertTrue(w.wait_for(SERVING, RPC_TIMEOUT_S), w.seen)
            self.assertFalse(watches[-1].wait_for(SERVING, 2.0),
                             "stream %d of one connection was served" % len(watches))
            watches[0].stop()
            self.assertTrue(watches[-1].wait_for(SERVING, RPC_TIMEOUT_S),
                            "the waiting stream did not start once another ended")
        finally:
            for w in watches:
                w.stop()
            channel.close()

    def test_watches_past_the_cap_are_refused_until_one_ends(self):
        channels = [unix_channel(self.socket()) for _ in range(2)]
        watches = [Statuses(health_pb2_grpc.HealthStub(c), "")
                   for c in channels for _ in range(75)]
        try:
            for w in watches:
                self.assertTrue(w.wait_for(SERVING, RPC_TIMEOUT_S), w.seen)
            with self.assertRaises(grpc.RpcError) as refused:
                next(self.health.Watch(health_pb2.HealthCheckRequest(service="no.such.Service"),
                                       timeout=RPC_TIMEOUT_S))
            self.assertEqual(refused.exception.code(), grpc.StatusCode.RESOURCE_EXHAUSTED)
            self.assertIn("150 health Watch streams are open, the most cschedd keeps "
                          "(--max-health-watches)", refused.exception.details())
            self.assertEqual(self.health.Check(health_pb2.HealthCheckRequest(service=""),
                                               timeout=RPC_TIMEOUT_S).status, SERVING)
            watches[0].stop()
            deadline = time.monotonic() + RPC_TIMEOUT_S
            while True:
                again = Statuses(self.health, "")
                if again.wait_for(SERVING, 1.0):
                    break
                again.stop()
                self.assertLess(time.monotonic(), deadline, "no Watch after one ended")
            watches.append(again)
        finally:
            for w in watches:
                w.stop()
            for c in channels:
                c.close()


# Run as PEER_UID: opens connections to argv[1] one by one, each checked
# with a health Check, and prints which worked; then closes one and opens
# one more.
PEER_SCRIPT = """
import json, sys
sys.path.insert(0, sys.argv[3])
import grpc, health_pb2, health_pb2_grpc
def check(channel):
    try:
        health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=5)
        return True
    except grpc.RpcError:
        return False
opts = [("grpc.use_local_subchannel_pool", 1)]
channels = [grpc.insecure_channel("unix:" + sys.argv[1], options=opts)
            for _ in range(int(sys.argv[2]))]
served = [check(c) for c in channels]
channels[0].close()
import time
deadline = time.monotonic() + 10
while True:
    later = check(grpc.insecure_channel("unix:" + sys.argv[1], options=opts))
    if later or time.monotonic() > deadline:
        break
    time.sleep(0.2)
print(json.dumps({"served": served, "later": later}))
"""


class ConnectionLimitTest(UnixSocketTest):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        # The socket's directory is the state dir (0700): let the peer
        # through to the socket, and nowhere else.
        os.chmod(cls.server.state_dir, 0o711)

    def test_a_user_without_admin_holds_at_most_its_connections(self):
        if os.geteuid() != 0:
            self.skipTest("changing uid needs root")
        # The peer imports copies of the health stubs, in a dir of its own:
        # PEER_UID may have no way into the build tree (a clone under /root).
        stubs = tempfile.mkdtemp(prefix="csched-interop-peer-")
        try:
            os.chmod(stubs, 0o755)
            for name in ("health_pb2.py", "health_pb2_grpc.py"):
                copy = shutil.copyfile(os.path.join(ARGS.gen_dir, name), os.path.join(stubs, name))
                os.chmod(copy, 0o644)
            peer = subprocess.run(
                [sys.executable, "-c", PEER_SCRIPT, self.socket(), str(CONNECTIONS_PER_UID + 3),
                 stubs],
                user=PEER_UID, group=PEER_UID, extra_groups=[], cwd=stubs, capture_output=True,
                text=True, timeout=120, check=True)
        finally:
            shutil.rmtree(stubs)
        seen = json.loads(peer.stdout)
        self.assertEqual(seen["served"], [True] * CONNECTIONS_PER_UID + [False] * 3)
        self.assertTrue(seen["later"], "no connection once one was closed")
        # Others are not held back by that user's connections.
        self.assertEqual(self.health.Check(health_pb2.HealthCheckRequest(),
                                           timeout=RPC_TIMEOUT_S).status, SERVING)
        self.assertIn("already has %d open" % CONNECTIONS_PER_UID, self.server.log_text())


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]] + UNITTEST_ARGV, verbosity=2)
