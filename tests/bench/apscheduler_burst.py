#!/usr/bin/env python3
"""The benchmark's APScheduler peer (README.md, "Peers"): N runs of a
command at a limit, as a user of an in-process Python scheduler would write
them: one BackgroundScheduler with a thread pool of the limit, one date
trigger per run, each run a subprocess.run. Nothing is recorded or
supervised. Prints one line, as csched-floor does:
runs=N failed=F wall_ms=W cpu_ms=C
wall from the first job added to the last run's end; cpu of this process
and every child it reaped over the same span.

Usage: apscheduler_burst.py RUNS LIMIT -- COMMAND [ARG...]
"""
import datetime
import resource
import subprocess
import sys
import threading
import time

from apscheduler.executors.pool import ThreadPoolExecutor
from apscheduler.schedulers.background import BackgroundScheduler


def cpu_ms():
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime) * 1e3


def main():
    if len(sys.argv) < 5 or sys.argv[3] != "--":
        sys.exit(__doc__)
    runs, limit, command = int(sys.argv[1]), int(sys.argv[2]), sys.argv[4:]
    lock = threading.Lock()
    done = threading.Event()
    state = {"ended": 0, "failed": 0}

    def run_once():
        rc = subprocess.run(command).returncode
        with lock:
            state["ended"] += 1
            state["failed"] += rc != 0
            if state["ended"] == runs:
                done.set()

    sched = BackgroundScheduler(executors={"default": ThreadPoolExecutor(limit)},
                                job_defaults={"misfire_grace_time": None, "coalesce": False})
    sched.start()
    cpu0, t0 = cpu_ms(), time.monotonic()
    now = datetime.datetime.now(datetime.timezone.utc)
    for _ in range(runs):
        sched.add_job(run_once, "date", run_date=now)
    done.wait()
    wall = (time.monotonic() - t0) * 1e3
    cpu = cpu_ms() - cpu0
    sched.shutdown(wait=True)
    print(f"runs={runs} failed={state['failed']} wall_ms={wall:.1f} cpu_ms={cpu:.1f}")


if __name__ == "__main__":
    main()
