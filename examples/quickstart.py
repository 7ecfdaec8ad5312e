"""sampledprv quickstart: certified epsilon for DP-SGD, a heterogeneous composition, a
Generalized Gaussian calibration, and a custom mechanism accounted from its log-densities.

Run: python examples/quickstart.py [--quick]
"""

from __future__ import annotations

import argparse

import numpy as np
from scipy import special

import sampledprv as sp


def main(quick: bool = False) -> None:
    # 1. DP-SGD: Poisson-subsampled Gaussian, 1000 steps; deterministic certified interval
    acc = sp.Accountant(eps_error=0.01, delta_error=1e-10)
    acc.compose(sp.PoissonSubsampled(sp.Gaussian(sigma=1.0), q=0.01), count=1000)
    print("DP-SGD (sigma=1, q=0.01, 1000 steps): epsilon(1e-5) =", acc.epsilon(delta=1e-5))

    # 2. Laplace releases are added: compose again (heterogeneous is fine). This is the
    #    README's five-minute tour: the same 1000 steps + 10 releases, the same numbers
    acc.compose(sp.Laplace(scale=20.0), count=10)
    print("... + 10 Laplace releases (README tour): epsilon(1e-5) =", acc.epsilon(delta=1e-5))
    print("                                          delta(2.0)     =", acc.delta(epsilon=2.0))

    # 3. Generalized Gaussian: which scale gives (2, 1e-5) after 1000 steps, for beta=1.5?
    cal = sp.calibrate(lambda s: sp.PoissonSubsampled(sp.GeneralizedGaussian(beta=1.5, scale=s),
                                                      q=0.01),
                       count=1000, epsilon=2.0, delta=1e-5)
    print(f"GG beta=1.5 calibrated to (2, 1e-5): scale = {cal.x:.4f}, "
          f"certified epsilon = {cal.interval}")

    # 4. a custom mechanism with no closed-form PRV: Laplace(b) + Gaussian(s) noise added
    #    together, given only by its log-density (exact, via log_ndtr) and samplers;
    #    certified by sampling with probability >= 1 - alpha
    b, s = 1.0, 1.0

    def log_noise(x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        return (-np.log(2 * b) + s * s / (2 * b * b)
                + np.logaddexp(-x / b + special.log_ndtr(x / s - s / b),
                               x / b + special.log_ndtr(-x / s - s / b)))

    pair = sp.LogDensityPair(
        logp=log_noise, logq=lambda w: log_noise(w - 1.0),
        sample_p=lambda rng, n: rng.laplace(0, b, n) + rng.normal(0, s, n),
        sample_q=lambda rng, n: 1.0 + rng.laplace(0, b, n) + rng.normal(0, s, n))
    n = 4 * 10**5 if quick else 4 * 10**6
    sacc = sp.SampledAccountant(n_samples=n, alpha=1e-6, seed=0, progress=False)
    sacc.compose(pair, count=10)
    print(f"Laplace+Gaussian noise, 10 runs, n={n:.0e} samples: epsilon(1e-3) =",
          sacc.epsilon(delta=1e-3))


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--quick", action="store_true", help="fewer samples (CI)")
    main(p.parse_args().quick)
