"""Benchmark: group privacy of DP-SGD (``sp.Group``) against dp-accounting's
mixture-of-Gaussians PLD.

DP-SGD: Poisson-subsampled Gaussian, ``sigma = 2``, ``q = 0.01``, 1000 steps; groups of
1, 2, 4 and 16 records; epsilon at ``delta = 1e-5``.  ``ours``: ``sp.Accountant()``
(eps_error 0.01, delta_error 1e-10) composing ``sp.Group(mechanism, size).spec`` (the
exact mixture of Gaussians with Binomial(size, q) weights), cold (law cache cleared).
The peer: dp-accounting's ``PLDAccountant(value_discretization_interval=1e-4)`` with a
``MixtureOfGaussiansDpEvent`` of the same shifts and weights, whose epsilon is pessimistic
by at most ``1000 * 1e-4`` (each step's loss rounded up by at most the interval).  One run
each, in this process, one after the other; the load of the machine is printed.

    python benchmarks/bench_group.py
"""

from __future__ import annotations

import os
import sys
import time
from importlib.metadata import version

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _machine import cpu_model  # noqa: E402

import sampledprv as sp  # noqa: E402
from sampledprv.mechanisms.laws import clear_law_cache  # noqa: E402

SIGMA, Q, STEPS, DELTA = 2.0, 0.01, 1000, 1e-5


def main() -> None:
    import argparse

    import dp_accounting
    from dp_accounting.pld import pld_privacy_accountant

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1,2,4,16", help="group sizes")
    ap.add_argument("--steps", type=int, default=STEPS, help="DP-SGD steps")
    args = ap.parse_args()
    steps = args.steps

    print(f"# {cpu_model()}, load {os.getloadavg()[0]:.2f}; dp-accounting "
          f"{version('dp-accounting')}")
    print("size | ours [lower, upper] | ours s | dp-accounting eps | dp-acc s | in 1%")
    for size in (int(x) for x in args.sizes.split(",")):
        g = sp.Group(sp.PoissonSubsampled(sp.Gaussian(SIGMA), Q), size=size)
        clear_law_cache()
        t = time.perf_counter()
        iv = sp.Accountant().compose(g.spec, steps).epsilon(DELTA)
        t_ours = time.perf_counter() - t
        shifts = [0.0, 1.0] if size == 1 else list(g.spec.sensitivities)
        probs = [1 - Q, Q] if size == 1 else list(g.spec.probs)
        t = time.perf_counter()
        acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
        acc.compose(dp_accounting.dp_event.MixtureOfGaussiansDpEvent(SIGMA, shifts, probs),
                    steps)
        ref = acc.get_epsilon(DELTA)
        t_ref = time.perf_counter() - t
        ok = abs(iv.lower - ref) <= 0.01 * ref and abs(iv.upper - ref) <= 0.01 * ref
        print(f"{size:4d} | [{iv.lower:.5f}, {iv.upper:.5f}] | {t_ours:6.2f} | {ref:.5f} | "
              f"{t_ref:6.2f} | {ok}")


if __name__ == "__main__":
    main()
