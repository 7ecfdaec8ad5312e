"""A fixed CPU workload of about 0.7 s, to tell the machine's speed at the moment.

The shared test machine's speed moves by 20% within an hour (the same pytest run took
385 s and 316 s thirty minutes apart), more than most changes to the suite.  Run this
just before and just after a timed command: a run whose probe is slow was taken at a slow
moment.  Three million Python square roots (the interpreter) and twenty numpy sorts and
exponentials of two million doubles (memory and vector units); one thread.

    python benchmarks/speed_probe.py
"""

from __future__ import annotations

import math
import time

import numpy as np


def probe() -> float:
    """Seconds taken by the fixed workload."""
    t = time.perf_counter()
    s = 0.0
    for i in range(3_000_000):
        s += math.sqrt(i) * 1.0000001
    x = np.random.default_rng(0).normal(size=2_000_000)
    for _ in range(20):
        np.exp(np.sort(x)).sum()
    return time.perf_counter() - t


if __name__ == "__main__":
    print(f"speed probe {probe():.2f} s")
