"""Certified tails: width, time and the bound that set each end.

Cases (whole process on this machine, alpha = 1e-6, one epoch), each with the figures
measured on main before the certified-tails work ("before"):

1. ``RandomAllocation(2.0, 100, selected=10)``, epsilon(1e-6) and epsilon(1e-5).
   Before: n = 2e6: [2.228, 3.748] and [2.028, 2.545]; Poisson (q = k/T) 2.6751.
   Target: upper <= 2.45 at 1e-6 and width <= 0.08 at 1e-5, n <= 2e6, <= 60 s.
2. ``RandomAllocation(0.55, 391, 5)``, epsilon(1.25e-5).  Before: n = 8e6:
   [6.59, 7.31] (width 0.72); the deterministic reduction 7.3368.  Target: width
   <= 0.30 with n <= 4e6.
3. The README's custom Gaussian ``LogDensityPair`` (``N(1, sigma^2)`` against
   ``N(0, sigma^2)``, exact Renyi divergences supplied), ``k = 1e4`` steps of
   ``mu = 0.01`` (total ``mu = 1``), epsilon(1e-5), ``join_directions=True``.  Before:
   n = 1e8: width 0.23.  Target: width <= 0.15 at n = 1e8.  Prints the envelopes'
   bracket and the joined one (the two directions joined by the change of measure,
   ``sampled/certification/identity_envelopes.py``) and the exact value.

For every end the interval's ``details["candidates"]`` lists each source's value per
direction (own sampled envelopes, block reduction, RDP conversion, tilted draws); the
"own" row is what the accountant alone gave before (now at alpha/3).  The tilted draws
are ``n // 10`` on top of ``n`` plain draws of the remove direction.  Each case runs
in a fresh process (``--case N`` runs one), so the times include imports and
compilation; times under load are not comparable (the load is printed).

Usage::

    python benchmarks/bench_tails.py
    python benchmarks/bench_tails.py --case 1 --n 1e6
"""

from __future__ import annotations

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _machine import run_cases  # noqa: E402

DEFAULT_N = {1: 2_000_000, 2: 4_000_000, 3: 10_000_000}
CASES = {1: ((2.0, 100, 10), (1e-6, 1e-5)), 2: ((0.55, 391, 5), (1.25e-5,))}
BEFORE = {(1, 1e-6): "[2.228, 3.748] at n = 2e6", (1, 1e-5): "[2.028, 2.545] at n = 2e6",
          (2, 1.25e-5): "[6.59, 7.31] at n = 8e6"}



def run(case: int, n: int) -> None:
    import sampledprv as sp
    (sigma, steps, k), deltas = CASES[case]
    t0, c0 = time.time(), time.process_time()
    acc = sp.SampledAccountant(n, alpha=1e-6, seed=1, progress=False)
    acc.compose(sp.RandomAllocation(sigma, steps, k), count=1)
    print(f"case {case}  RandomAllocation({sigma}, {steps}, {k}), one epoch, n={n:,}")
    for d in deltas:
        iv = acc.epsilon(d)
        wall = time.time() - t0
        print(f"  epsilon({d:g})  [{iv.lower:.4f}, {iv.upper:.4f}] width "
              f"{iv.upper - iv.lower:.4f}  ({wall:.1f} s wall so far)")
        print(f"    before     {BEFORE[(case, d)]}")
        print(f"    upper end  {iv.details['upper_end']}")
        print(f"    lower end  {iv.details['lower_end']}")
        for direction, c in iv.details["candidates"].items():
            ups = ", ".join(f"{name.split(' (')[0]} {v:.4f}" for name, v in c["upper"].items())
            lows = ", ".join(f"{name.split(' (')[0]} {v:.4f}" for name, v in c["lower"].items())
            print(f"    {direction:6s} upper: {ups}")
            print(f"    {direction:6s} lower: {lows}")
    print(f"  time       {time.time() - t0:.1f} s wall, {time.process_time() - c0:.1f} s CPU")


def run_custom_gaussian(n: int, k: int = 10_000, delta: float = 1e-5) -> None:
    import math
    import sampledprv as sp
    mu = 1.0 / math.sqrt(k)
    sigma = 1.0 / mu
    pair = sp.LogDensityPair(
        logp=lambda w: -0.5 * ((w - 1.0) / sigma) ** 2,
        logq=lambda w: -0.5 * (w / sigma) ** 2,
        sample_p=lambda r, m: 1.0 + sigma * r.standard_normal(m),
        sample_q=lambda r, m: sigma * r.standard_normal(m), name="custom gaussian",
        renyi=lambda a, d: a * mu ** 2 / 2)
    t0, c0 = time.time(), time.process_time()
    acc = sp.SampledAccountant(n, alpha=1e-6, seed=1, progress=False, join_directions=True)
    acc.compose(pair, k)
    iv = acc.epsilon(delta)
    wall = time.time() - t0
    exact = sp.Accountant(eps_error=1e-4).compose(sp.Gaussian(sigma), k).epsilon(delta)
    rep = iv.details["identity_join"]
    (lo_b, up_b), (lo_j, up_j) = rep["envelopes"], rep["joined"]
    print(f"case 3  custom Gaussian LogDensityPair, k={k:,}, mu={mu:g} per step, n={n:,}")
    print(f"  epsilon({delta:g})  exact {exact.estimate:.4f}")
    print(f"    envelopes  [{lo_b:.4f}, {up_b:.4f}] width {up_b - lo_b:.4f}")
    print(f"    joined     [{lo_j:.4f}, {up_j:.4f}] width {up_j - lo_j:.4f}")
    print(f"    interval   [{iv.lower:.4f}, {iv.upper:.4f}] width {iv.upper - iv.lower:.4f}"
          f"  (join set: {'upper ' if rep['upper'] else ''}{'lower' if rep['lower'] else ''})")
    print("    before     width 0.23 at n = 1e8 (envelopes alone)")
    print(f"  time       {wall:.1f} s wall, {time.process_time() - c0:.1f} s CPU")


def main() -> None:
    cases = {c: (lambda n, c=c: run(c, n)) for c in (1, 2)}
    cases[3] = run_custom_gaussian
    run_cases(__file__, cases, DEFAULT_N, (1, 2, 3), __doc__)

if __name__ == "__main__":
    main()
