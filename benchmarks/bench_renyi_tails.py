"""Renyi tail bounds in the sampled accountant: widths and coverage.

Widths (default).  Gaussian privacy losses, total mu = 1 (exact epsilon(1e-5) = 4.3772),
alpha = 1e-9, 2^15 bins, epsilon at delta = 1e-5; for each case the certified interval
with the Renyi tail bound and, on the same histograms, without it
(``tail_bounds=False``), plus the sample floor that applies without it:

* k = 100, mu = 0.1, n = 1e7: a ``LogDensityPair`` with ``renyi=lambda a, d: a mu^2/2``
  (both directions sampled) and the built-in ``Gaussian(sigma=10)`` (its own bound);
* k = 1000, mu = 1/sqrt(1000), n = 1e8: the built-in Gaussian (target width <= 0.15).

Coverage (``--coverage``).  300 seeds at alpha = 0.05 with n = 2000 per histogram and 64
bins (far below the sample floor, so every upper bound rests on the tail bound), k = 5,
epsilon at delta = 1e-3, end to end through the accountant, for: a Gaussian
``LogDensityPair`` with its closed-form bound, a Laplace ``LogDensityPair`` with
``loss_range`` only, the built-in Poisson-subsampled Generalized Gaussian (its own bound)
and a custom GG(beta = 1.5) ``LogDensityPair`` with a Renyi table computed by quadrature.
Misses are compared with Binomial(300, 0.05).

Usage::

    python benchmarks/bench_renyi_tails.py              # widths (about a minute)
    python benchmarks/bench_renyi_tails.py --coverage   # 4 x 300 seeds (a few minutes)
    python benchmarks/bench_renyi_tails.py --smoke      # both at tiny sizes (seconds)
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import subprocess
import sys
import time
import warnings

import numpy as np
from scipy import stats

import sampledprv as sp
from sampledprv.analytic.accountant import Accountant
from sampledprv.sampled import SampledAccountant, min_samples

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))


from _machine import cpu_model  # noqa: E402  (benchmarks/ is on sys.path)


def widths(n_cap: int | None = None) -> None:
    """The width table; ``n_cap`` (the smoke run) caps every case's draws."""
    from test_sampled_renyi import gauss_pair, gauss_renyi

    exact = Accountant(eps_error=1e-4).compose(sp.Gaussian(1.0), 1).epsilon(1e-5)
    print(f"exact epsilon(1e-5) of the composition: {exact.estimate:.4f}")
    cases = [("LogDensityPair + renyi", 100, 0.1, 10 ** 7, "pair"),
             ("built-in Gaussian(sigma=10)", 100, 0.1, 10 ** 7, "builtin"),
             ("built-in Gaussian(sigma=sqrt(1000))", 1000, 1 / math.sqrt(1000), 10 ** 8,
              "builtin")]
    for label, k, mu, n, kind in cases:
        n = n if n_cap is None else min(n, n_cap)
        mech = gauss_pair(mu, renyi=gauss_renyi(mu)) if kind == "pair" else \
            sp.Gaussian(1.0 / mu)
        hists = 2 if kind == "pair" else 1
        floor = min_samples(k, 1e-5, alpha=1e-9, bins=2 ** 15, histograms=hists)
        t = time.perf_counter()
        acc = SampledAccountant(n, alpha=1e-9, seed=1, progress=False).compose(mech, k)
        iv = acc.epsilon(1e-5)
        dt = time.perf_counter() - t
        plain = SampledAccountant(n, alpha=1e-9, seed=1, progress=False, tail_bounds=False)
        plain._bank.hists = acc._bank.hists                          # the same histograms
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ivp = plain.compose(mech, k).epsilon(1e-5)
        ok = iv.lower <= exact.estimate <= iv.upper
        print(f"{label}, k={k}, n={n:.0e}: with tail [{iv.lower:.4f}, {iv.upper:.4f}] "
              f"width {iv.width:.4f} ({'contains' if ok else 'MISSES'} the truth, {dt:.1f} s); "
              f"without [{ivp.lower:.4f}, {ivp.upper:.4f}]; floor without n >= {floor:.3g} "
              f"({floor / n:.0f}x the n used)")
        print(f"    method: {iv.method}")


def coverage(seeds: int) -> None:
    from test_sampled_renyi import (gauss_pair, gauss_renyi, gg_pair, gg_renyi_table,
                                    laplace_pair)

    alpha, k, n, delta = 0.05, 5, 2000, 1e-3
    cases = [("Gaussian pair + closed-form renyi", gauss_pair(1.0, renyi=gauss_renyi(1.0)),
              sp.Gaussian(1.0)),
             ("Laplace pair + loss_range", laplace_pair(1.0, loss_range=(-1.0, 1.0)),
              sp.Laplace(1.0)),
             ("built-in subsampled GG(1.5, 2), q=0.2",
              sp.PoissonSubsampled(sp.GeneralizedGaussian(1.5, 2.0), 0.2),
              sp.PoissonSubsampled(sp.GeneralizedGaussian(1.5, 2.0), 0.2)),
             ("custom GG(1.5, 2) pair + quadrature renyi table",
              gg_pair(1.5, 2.0, renyi=gg_renyi_table(1.5, 2.0)),
              sp.GeneralizedGaussian(1.5, 2.0))]
    print(f"coverage: {seeds} seeds, alpha={alpha}, n={n}, 64 bins, k={k}, "
          f"epsilon({delta:g}); floor without tails n >= "
          f"{min_samples(k, delta, alpha=alpha, bins=64):,}")
    for label, mech, spec in cases:
        truth = Accountant(eps_error=1e-4).compose(spec, k).epsilon(delta)
        misses = finite = 0
        t = time.perf_counter()
        widths_ = []
        for s in range(seeds):
            acc = SampledAccountant(n, alpha=alpha, seed=1000 + s, bins=64, progress=False)
            iv = acc.compose(mech, k).epsilon(delta)
            finite += math.isfinite(iv.upper)
            misses += iv.upper < truth.lower or iv.lower > truth.upper
            widths_.append(iv.width)
        p = stats.binomtest(misses, seeds, alpha, alternative="greater").pvalue
        print(f"  {label}: misses {misses}/{seeds} (binomial p-value {p:.3g}), finite "
              f"{finite}/{seeds}, median width {np.median(widths_):.3f} around "
              f"{truth.estimate:.3f} ({time.perf_counter() - t:.0f} s)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--coverage", action="store_true", help="run the 300-seed coverage")
    ap.add_argument("--seeds", type=int, default=300)
    ap.add_argument("--smoke", action="store_true",
                    help="both parts at tiny sizes (2e4 draws, 3 seeds): a crash test, "
                         "not figures")
    args = ap.parse_args()
    print(f"CPU: {cpu_model()}, {os.cpu_count()} logical cores")
    if args.smoke:
        widths(n_cap=20_000)
        coverage(3)
    elif args.coverage:
        coverage(args.seeds)
    else:
        widths()


if __name__ == "__main__":
    main()
