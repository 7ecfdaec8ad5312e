"""Subsampled user pairs against the built-in specs, and the shuffle lower end against the
reference of Chua et al.

1. Poisson: a ``LogDensityPair`` equal to the Gaussian (sigma = 1), ``PoissonSubsampled(q =
   0.01)``, k = 1000, n = 1e6 per direction, alpha = 1e-6, epsilon(1e-5): the sampled
   interval of the user pair, of the built-in ``PoissonSubsampled(Gaussian(1))`` at the
   same n and seed, and the analytic interval.  Acceptance: the user interval contains the
   analytic value and is at most 1.5 times as wide as the built-in's.
2. Fixed size under substitution: the same with ``FixedSizeSubsampled(., 100, 10000)`` (the
   user pair is the Gaussian with the substitution shift 2C).
3. Shuffling, sigma = 1, T = 100, 10 epochs, delta = 1e-5, zero-out: the certified lower
   end against Chua et al.'s lower-bound code (google-research
   ``dpsgd_batch_sampler_accounting/dpsgd_bounds.py``,
   ``ShuffleAccountant().get_epsilons(1.0, (1e-5,), 100, 10)`` = 9.360069, computed once
   with dp-accounting 0.6.0; not run here).

Usage: ``python benchmarks/bench_subsampled_user_pairs.py [--n 1000000]`` (several minutes
on two cores: the built-in runs compute exact Renyi divergences by quadrature).
"""

from __future__ import annotations

import argparse
import os
import time

import sampledprv as sp
from _machine import cpu_model

CHUA_SHUFFLE_LOWER = 9.360069


def gauss_pair(shift: float) -> sp.LogDensityPair:
    return sp.LogDensityPair(
        logp=lambda w: -0.5 * (w - shift) ** 2, logq=lambda w: -0.5 * w ** 2,
        sample_p=lambda r, n: shift + r.standard_normal(n),
        sample_q=lambda r, n: r.standard_normal(n),
        symmetric=True, renyi=lambda a, d: a * shift ** 2 / 2, name=f"gauss{shift:g}")


def run(label: str, user_spec, builtin_spec, relation: str, n: int, k: int) -> None:
    rows = []
    for name, spec in (("user pair", user_spec), ("built-in", builtin_spec)):
        t = time.time()
        iv = sp.SampledAccountant(n, alpha=1e-6, seed=1, neighbouring=relation).compose(
            spec, k).epsilon(1e-5)
        rows.append((name, iv, time.time() - t))
    exact = sp.Accountant(neighbouring=relation).compose(builtin_spec, k).epsilon(1e-5)
    print(f"\n{label} (k = {k}, n = {n:,} per direction, alpha = 1e-6, epsilon(1e-5))")
    for name, iv, sec in rows:
        print(f"  {name:10s} [{iv.lower:.4f}, {iv.upper:.4f}]  width {iv.width:.4f}  {sec:.0f} s")
    print(f"  analytic   [{exact.lower:.4f}, {exact.upper:.4f}]")
    user, builtin = rows[0][1], rows[1][1]
    inside = user.lower <= exact.lower and exact.upper <= user.upper
    print(f"  width ratio user / built-in: {user.width / builtin.width:.3f} (<= 1.5); "
          f"analytic interval inside the user interval: {inside}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    args = ap.parse_args()
    print(f"CPU: {cpu_model()}; load: {os.getloadavg()[0]:.2f}")
    run("Poisson, q = 0.01", sp.PoissonSubsampled(gauss_pair(1.0), q=0.01),
        sp.PoissonSubsampled(sp.Gaussian(1.0), q=0.01), "add_remove", args.n, 1000)
    run("Fixed size 100 of 10000, substitution",
        sp.FixedSizeSubsampled(gauss_pair(2.0), 100, 10_000),
        sp.FixedSizeSubsampled(sp.Gaussian(1.0), 100, 10_000), "substitute", args.n, 1000)
    t = time.time()
    iv = sp.ShuffleAccountant().compose(sp.Shuffled(1.0, 100), 10).epsilon(1e-5)
    print(f"\nShuffling, sigma = 1, T = 100, 10 epochs, delta = 1e-5, zero-out "
          f"({time.time() - t:.0f} s)")
    print(f"  certified lower end {iv.lower:.5f} vs Chua et al. {CHUA_SHUFFLE_LOWER} "
          f"(ratio {iv.lower / CHUA_SHUFFLE_LOWER:.5f}); deterministic upper end "
          f"{iv.upper:.4f}")


if __name__ == "__main__":
    main()
