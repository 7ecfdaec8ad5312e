"""Benchmark: time per ``get_epsilon`` call of Opacus accountants after every step.

A DP-SGD loop (sigma 0.8, q 4e-3, delta 1e-5) calls ``accountant.step(...)`` then
``accountant.get_epsilon(delta)`` after each of ``--steps`` steps, as
``PrivacyEngine.get_epsilon`` would.  Rows: Opacus' ``"sampledprv"`` (this package; online
``horizon`` path, certified upper end), Opacus' own ``"rdp"`` (every call), and Opacus'
``"prv"`` (too slow to call every step: timed at ``--prv-every`` steps only).  The first
call of each accountant is reported apart (it plans the grid).  Ratios are against
``"sampledprv"`` in the same process.

Usage::

    python benchmarks/bench_opacus_get_epsilon.py --steps 2000
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from _machine import cpu_model  # noqa: E402  (benchmarks/ is on sys.path)

SIGMA, Q, DELTA = 0.8, 4e-3, 1e-5


def run(name: str, steps: int, every: int = 1) -> tuple[float, list[float], float]:
    import sampledprv.torch  # noqa: F401 - registers "sampledprv"
    from opacus.accountants import create_accountant
    acc = create_accountant(name)
    first, times, last, cpu = None, [], 0.0, []
    for k in range(1, steps + 1):
        acc.step(noise_multiplier=SIGMA, sample_rate=Q)
        if k % every and k != 1:
            continue
        t0, c0 = time.perf_counter(), time.thread_time()
        last = acc.get_epsilon(DELTA)
        dt = time.perf_counter() - t0
        cpu.append(time.thread_time() - c0)
        if first is None:
            first = dt
        else:
            times.append(dt)
    return first, times, last, cpu[1:]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--prv-every", type=int, default=500)
    args = ap.parse_args()
    print(f"CPU: {cpu_model()}; load average {os.getloadavg()[0]:.2f}")
    rows = [("sampledprv", *run("sampledprv", args.steps)),
            ("rdp", *run("rdp", args.steps)),
            (f"prv (every {args.prv_every} steps)", *run("prv", args.steps, args.prv_every))]
    base = statistics.median(rows[0][2])
    print(f"{'accountant':28s} {'first ms':>9s} {'median ms':>10s} {'p90 ms':>8s} "
          f"{'ratio':>7s} {'epsilon':>9s} {'CPU median/p90 ms':>18s}")
    for name, first, times, eps, cpu in rows:
        med = statistics.median(times)
        p90 = sorted(times)[int(0.9 * (len(times) - 1))]
        print(f"{name:28s} {1e3 * first:9.2f} {1e3 * med:10.3f} {1e3 * p90:8.3f} "
              f"{med / base:7.1f} {eps:9.4f} {1e3 * statistics.median(cpu):8.3f}/"
              f"{1e3 * sorted(cpu)[int(0.9 * (len(cpu) - 1))]:.3f}")
    print("wall times include preemption on a loaded machine; the CPU column is the calling "
          "thread's CPU time (FFT threads excluded)")


if __name__ == "__main__":
    main()
