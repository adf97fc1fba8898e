#!/usr/bin/python3
"""tz_oracle: every zone of a tz database, as csched reads it (tz_probe),
held against Python's zoneinfo reading the same files.

Usage: tz_oracle.py PROBE DIR

The zones are every name tzdata.zi defines or links (Z and L lines), the
posix/ and right/ copies aside. For each, the UTC offset and the DST flag
must agree at

  - January 1 and July 1, 00:00 UTC, of every year 1970-2040;
  - both sides of every change csched's table has in 1970-2040 (t-1, t);
  - both sides of every change Python shows there: a weekly scan finds the
    weeks in which the offset or flag differs, and a bisection the second.

Python's answers are made here, at test time, from the files on the
machine: nothing is committed. Exit 0 when all agree, 1 with the first
disagreements listed, 2 on bad usage or when the data cannot be read.
"""
import os
import subprocess
import sys
from datetime import datetime, timedelta, timezone
import zoneinfo
from zoneinfo import ZoneInfo

BEGIN = int(datetime(1970, 1, 1, tzinfo=timezone.utc).timestamp())
END = int(datetime(2040, 1, 1, tzinfo=timezone.utc).timestamp())
WEEK = 7 * 86400
ZERO = timedelta(0)


def zone_names(tzdir):
    """The names tzdata.zi defines (Z NAME ...) and links (L TARGET NAME)."""
    names = set()
    with open(os.path.join(tzdir, "tzdata.zi"), encoding="utf-8") as f:
        for line in f:
            words = line.split()
            if len(words) >= 2 and words[0] == "Z":
                names.add(words[1])
            elif len(words) >= 3 and words[0] == "L":
                names.add(words[2])
    return sorted(n for n in names if not n.startswith(("posix/", "right/")))


def python_local(zone, t):
    dt = datetime.fromtimestamp(t, zone)
    return int(dt.utcoffset().total_seconds()), dt.dst() != ZERO


def python_changes(zone):
    """The instants in [BEGIN, END) at which Python's local time changes,
    as far as a weekly scan can see them."""
    found = []
    t, here = BEGIN, python_local(zone, BEGIN)
    while t < END:
        nxt = min(t + WEEK, END)
        there = python_local(zone, nxt)
        if there != here:
            lo, hi = t, nxt  # local(lo) == here, local(hi) != here
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if python_local(zone, mid) == here:
                    lo = mid
                else:
                    hi = mid
            found.append(hi)
            # More than one change in the week: scan the rest of it again.
            t, here = hi, python_local(zone, hi)
            continue
        t, here = nxt, there
    return found


def run_probe(probe, tzdir, args, lines):
    out = subprocess.run([probe, tzdir] + args, input="".join(lines), capture_output=True,
                         text=True, check=True).stdout
    return [line.split(" ", 3) for line in out.splitlines()]


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    probe, tzdir = sys.argv[1], sys.argv[2]
    zoneinfo.reset_tzpath(to=[tzdir])
    try:
        names = zone_names(tzdir)
    except OSError as e:
        print(f"tz_oracle: cannot read {tzdir}/tzdata.zi: {e}", file=sys.stderr)
        return 2
    if len(names) < 300:
        print(f"tz_oracle: only {len(names)} zone names in {tzdir}/tzdata.zi", file=sys.stderr)
        return 2

    refused = {}
    c_changes = {n: [] for n in names}
    for words in run_probe(probe, tzdir, ["changes", str(BEGIN), str(END)],
                           [n + "\n" for n in names]):
        if words[1] == "!":
            refused[words[0]] = " ".join(words[2:])
        else:
            c_changes[words[0]].append(int(words[1]))

    grid = [int(datetime(y, m, 1, tzinfo=timezone.utc).timestamp())
            for y in range(1970, 2041) for m in (1, 7)]
    expected = {}
    queries = []
    for name in names:
        if name in refused:
            continue
        zone = ZoneInfo(name)
        instants = set(grid)
        for t in c_changes[name] + python_changes(zone):
            instants.update((t - 1, t))
        for t in sorted(instants):
            expected[(name, t)] = python_local(zone, t)
            queries.append(f"{name} {t}\n")

    bad = [f"{name}: csched refuses it ({why}), Python reads it"
           for name, why in sorted(refused.items())]
    answered = 0
    for name, t, offset, isdst in run_probe(probe, tzdir, ["lookup"], queries):
        answered += 1
        t = int(t)
        got = (int(offset), isdst == "1")
        want = expected.pop((name, t))
        if got != want:
            when = datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
            bad.append(f"{name} at {when} ({t}): csched offset {got[0]} dst {int(got[1])}, "
                       f"Python offset {want[0]} dst {int(want[1])}")
    bad += [f"{name} at {t}: csched gave no answer" for (name, t) in sorted(expected)]

    print(f"tz_oracle: {len(names)} zones of {tzdir}, {answered} instants compared "
          f"with Python {sys.version.split()[0]}'s zoneinfo: {len(bad)} disagreements")
    for line in bad[:50]:
        print("  " + line)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
