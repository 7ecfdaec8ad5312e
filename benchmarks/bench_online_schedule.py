"""Benchmark: online accounting of DP-SGD whose noise changes every 50 steps.

Reported: with subsampled Gaussian steps whose ``sigma`` changes every 50 steps, the
online accountant (``sp.Accountant(horizon=...)``) switched its online updates off (a new
mechanism was wider than the grid) and every query rebuilt by FFT (110 ms per step).
Now a new mechanism wider than the grid re-plans the grid once.  This prints the time
per step (``compose`` then ``epsilon(1e-5)``) over ``--steps`` steps, split into steps
that bring a new sigma and the others, for two schedules:

* ``cycling``: ``q = 0.01``, sigma cycles through 1.0, 1.1, ..., 1.6;
* ``decreasing``: ``q = 0.001``, sigma from 1.2 down by 0.002 every 50 steps, to 0.8
  (each new mechanism is wider than the last: the case that switched online updates
  off).

Usage::

    python benchmarks/bench_online_schedule.py --steps 10000
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import sampledprv as sp

try:
    from _machine import cpu_model
except ImportError:   # run from elsewhere
    from benchmarks._machine import cpu_model


def sigma_of(schedule: str, k: int) -> float:
    if schedule == "cycling":
        return 1.0 + 0.1 * ((k // 50) % 7)
    return 1.2 - 0.002 * (k // 50)


def run(schedule: str, steps: int) -> None:
    q = 0.01 if schedule == "cycling" else 0.001
    acc = sp.Accountant(eps_error=0.01, delta_error=1e-10, horizon=steps)
    new, same = [], []
    t_all = time.perf_counter()
    for k in range(steps):
        t = time.perf_counter()
        acc.compose(sp.PoissonSubsampled(sp.Gaussian(sigma_of(schedule, k)), q=q))
        iv = acc.epsilon(1e-5)
        (new if k % 50 == 0 else same).append(time.perf_counter() - t)
    total = time.perf_counter() - t_all
    print(f"{schedule}: {steps:,} steps in {total:.1f} s = {1e3 * total / steps:.2f} ms/step; "
          f"steps with a new sigma: median {1e3 * statistics.median(new):.1f} ms "
          f"({len(new)}), others: median {1e3 * statistics.median(same):.3f} ms; "
          f"final epsilon(1e-5) in [{iv.lower:.4f}, {iv.upper:.4f}]")
    print("  " + "\n  ".join(line for line in acc.describe().splitlines()
                             if "online" in line or line.startswith("  -"))[:2000])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=10_000)
    ap.add_argument("--schedule", choices=["cycling", "decreasing", "both"], default="both")
    args = ap.parse_args()
    print(f"CPU: {cpu_model()}; load average {os.getloadavg()[0]:.2f}")
    for schedule in (["cycling", "decreasing"] if args.schedule == "both" else [args.schedule]):
        run(schedule, args.steps)


if __name__ == "__main__":
    main()
