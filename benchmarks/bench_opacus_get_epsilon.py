"""Benchmark: time per ``get_epsilon`` call of Opacus accountants after every step.

A DP-SGD loop (sigma 0.8, q 4e-3, delta 1e-5) calls ``accountant.step(...)`` then
``accountant.get_epsilon(delta)`` after each of ``--steps`` steps, as
``PrivacyEngine.get_epsilon`` would.  Rows: Opacus' ``"sampledprv"`` (this package; online
``horizon`` path, certified upper end), Opacus' own ``"rdp"`` (every call), and Opacus'
``"prv"`` (too slow to call every step: timed at ``--prv-every`` steps only).  The first
call of each accountant is reported apart (it plans the grid).  Ratios are against
``"sampledprv"`` in the same process.

The balls-and-bins row is ``"sampledprv"`` for a ``BallsAndBinsBatchSampler`` loader of
``T = 1/q`` steps per epoch (``SampledPrvOpacusAccountant(steps=AllocationSteps(T))``,
``--bnb-samples`` draws per histogram): its first call samples the epoch's histograms
(and compiles the kernels: seconds), a call at a new epoch count composes the cached
histograms anew (the ``max`` column; ``epoch calls`` counts them), every other call is a
cached look-up.

Usage::

    python benchmarks/bench_opacus_get_epsilon.py --steps 2000
    python benchmarks/bench_opacus_get_epsilon.py --steps 2000 --bnb-samples 1e6
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from _machine import cpu_model  # noqa: E402  (benchmarks/ is on sys.path)

SIGMA, Q, DELTA = 0.8, 4e-3, 1e-5


def run(name: str, steps: int, every: int = 1, acc=None) -> tuple[float, list[float], float]:
    import sampledprv.torch  # noqa: F401 - registers "sampledprv"
    from opacus.accountants import create_accountant
    acc = create_accountant(name) if acc is None else acc
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
    ap.add_argument("--bnb-samples", type=float, default=1e6,
                    help="draws per histogram of the balls-and-bins row (0: no such row)")
    args = ap.parse_args()
    print(f"CPU: {cpu_model()}; load average {os.getloadavg()[0]:.2f}")
    rows = [("sampledprv", *run("sampledprv", args.steps)),
            ("rdp", *run("rdp", args.steps)),
            (f"prv (every {args.prv_every} steps)", *run("prv", args.steps, args.prv_every))]
    epoch_calls = {}
    if args.bnb_samples:
        from sampledprv.torch.opacus_accountant import (AllocationSteps,
                                                        SampledPrvOpacusAccountant)
        t = round(1 / Q)
        model = AllocationSteps(t, n_samples=int(args.bnb_samples))
        name = f"sampledprv balls-and-bins T={t}"
        rows.append((name, *run("", args.steps, acc=SampledPrvOpacusAccountant(steps=model))))
        epoch_calls[name] = max(0, args.steps // t - 1)   # new epoch counts after the first call
    base = statistics.median(rows[0][2])
    print(f"{'accountant':34s} {'first ms':>10s} {'median ms':>10s} {'p90 ms':>8s} "
          f"{'max ms':>9s} {'ratio':>7s} {'epsilon':>9s} {'CPU median/p90 ms':>18s}")
    for name, first, times, eps, cpu in rows:
        med = statistics.median(times)
        p90 = sorted(times)[int(0.9 * (len(times) - 1))]
        print(f"{name:34s} {1e3 * first:10.2f} {1e3 * med:10.3f} {1e3 * p90:8.3f} "
              f"{1e3 * max(times):9.2f} {med / base:7.1f} {eps:9.4f} "
              f"{1e3 * statistics.median(cpu):8.3f}/"
              f"{1e3 * sorted(cpu)[int(0.9 * (len(cpu) - 1))]:.3f}")
    for name, n in epoch_calls.items():
        times = next(r[2] for r in rows if r[0] == name)
        print(f"{name}: {n} calls at a new epoch count (each composes the cached histograms "
              "anew: the max column); the other calls are cached look-ups")
        if n:
            worst = max(times)
            print(f"  slowest call at a new epoch count: {worst:.2f} s (target < 1 s: "
                  f"{'met' if worst < 1.0 else 'NOT met'})")
    print("wall times include preemption on a loaded machine; the CPU column is the calling "
          "thread's CPU time (FFT threads excluded)")


if __name__ == "__main__":
    main()
