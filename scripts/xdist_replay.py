"""Replay a test run's per-test times through pytest-xdist's ``load`` scheduler.

How long would the two workers of ``pytest -n 2`` be busy with another collection order or
``--maxschedchunk``?  A full run takes minutes of both cores; this replays the measured
times of one run (``pytest --durations=0`` output: setup, call and teardown of each test)
through the algorithm of ``xdist.scheduler.load.LoadScheduling`` (pytest-xdist 3.x): a
first chunk of ``min(items_per_node // 4, maxschedchunk)`` *consecutive* tests per worker,
then, after each test, a refill up to half of what is left per worker unless the worker
is on long tests (``duration >= 0.1`` s with two or more queued).  Tests whose time the run
did not print (under 5 ms) count ``--overhead`` seconds.

Usage::

    pytest -q -n 2 --durations=0 > run.txt
    pytest -q --collect-only > collected.txt
    python scripts/xdist_replay.py run.txt collected.txt [--first test_a.py,test_b.py]
        [--maxschedchunk N] [--workers 2]
"""

from __future__ import annotations

import argparse
import re
from collections import defaultdict
from typing import Optional, Sequence

_LINE = re.compile(r"^([\d.]+)s (call|setup|teardown)\s+(\S+)")


def read_durations(path: str) -> dict[str, float]:
    """Seconds of each test (setup + call + teardown) from ``--durations`` output."""
    out: dict[str, float] = defaultdict(float)
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = _LINE.match(line)
            if m:
                out[m.group(3)] += float(m.group(1))
    return dict(out)


def read_collection(path: str) -> list[str]:
    """Test ids in collection order from ``pytest --collect-only -q`` output."""
    with open(path, encoding="utf-8") as f:
        return [ln.strip() for ln in f if "::" in ln]


def reorder(ids: Sequence[str], first: Sequence[str]) -> list[str]:
    """``ids`` with the tests of the files named in ``first`` moved to the front, in that
    order (a stable sort: each file's tests stay together and in order)."""
    rank = {name: i for i, name in enumerate(first)}
    return sorted(ids, key=lambda t: rank.get(t.split("::")[0].rsplit("/", 1)[-1],
                                               len(rank)))


def replay(seconds: Sequence[float], workers: int = 2,
           maxschedchunk: Optional[int] = None) -> list[float]:
    """Busy time of each worker when tests taking ``seconds`` (in collection order) are
    handed out by xdist's ``load`` scheduler."""
    pending = list(range(len(seconds)))
    chunk_max = len(seconds) if maxschedchunk is None else maxschedchunk
    chunk = max(min(len(seconds) // workers // 4, chunk_max), 2)
    queues: list[list[int]] = []
    for _ in range(workers):
        queues.append(pending[:chunk])
        del pending[:chunk]
    clock = [0.0] * workers
    while any(queues):
        i = min((w for w in range(workers) if queues[w]),
                key=lambda w: clock[w] + seconds[queues[w][0]])
        took = seconds[queues[i].pop(0)]
        clock[i] += took
        if not pending:
            continue
        low = max(2, len(pending) // workers // 4)
        high = max(2, len(pending) // workers // 2)
        if len(queues[i]) < low and not (took >= 0.1 and len(queues[i]) >= 2):
            k = min(high - len(queues[i]), max(2 - len(queues[i]), chunk_max))
            queues[i].extend(pending[:k])
            del pending[:k]
    return clock


def main(argv: Optional[Sequence[str]] = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("durations", help="pytest --durations=0 output of a run")
    ap.add_argument("collected", help="pytest --collect-only -q output")
    ap.add_argument("--first", default="", help="test files to move first, comma-separated")
    ap.add_argument("--maxschedchunk", type=int, default=None)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--overhead", type=float, default=0.004,
                    help="seconds per test on top of its printed time")
    args = ap.parse_args(argv)
    times = read_durations(args.durations)
    ids = read_collection(args.collected)
    if args.first:
        ids = reorder(ids, args.first.split(","))
    secs = [times.get(t, 0.0) + args.overhead for t in ids]
    busy = replay(secs, args.workers, args.maxschedchunk)
    print(f"{len(ids)} tests, {sum(secs):.0f} s of work ({sum(secs) / args.workers:.0f} s "
          f"per worker if evenly split); workers busy "
          + ", ".join(f"{b:.0f} s" for b in sorted(busy, reverse=True)))


if __name__ == "__main__":
    main()
