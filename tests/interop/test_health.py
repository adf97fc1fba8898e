#!/usr/bin/python3
"""grpc.health.v1 Watch from the official Python client, against a real
cschedd with its embedded PostgreSQL (test_interop.py's Server), over the
unix socket.

A Watch must send the serving status at once and again each time it
changes: with the embedded PostgreSQL frozen (SIGSTOP) it turns
NOT_SERVING, as Check does, and SERVING again after the thaw. Health is
open to every caller, so a local user without a role may open thousands
of Watch streams: they must not make each event of a burst of runs cost
more, which kept the loop 250 to 600 ms late with 20000 of them.
Run with /usr/bin/python3 (Debian's python3-grpcio and python3-grpc-tools).
"""

import os
import signal
import sys
import threading
import time
import unittest

from test_interop import RPC_TIMEOUT_S, UNITTEST_ARGV, ServerTest

import grpc  # noqa: E402
import health_pb2  # noqa: E402
from csched.v1 import scheduler_pb2 as pb  # noqa: E402

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING
SERVICE_UNKNOWN = health_pb2.HealthCheckResponse.SERVICE_UNKNOWN
# The store's watchdog sees a frozen database within seconds (see
# test_e2e_dbfreeze.c), and a Watch hears it within CS_HEALTH_POLL_MS more.
CHANGE_TIMEOUT_S = 20.0
HEALTH_WATCHES = 30000
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


class HealthWatchTest(ServerTest):
    @classmethod
    def open_channel(cls):
        return grpc.insecure_channel("unix:" + os.path.join(cls.server.state_dir, "csched.sock"))

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
        watches = [self.health.Watch(health_pb2.HealthCheckRequest(service=""))
                   for _ in range(HEALTH_WATCHES)]
        try:
            self.assertEqual(next(watches[-1]).status, SERVING)
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


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]] + UNITTEST_ARGV, verbosity=2)
