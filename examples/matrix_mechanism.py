"""Epsilon against epochs for DP-SGD and banded matrix factorization (DP-BandMF).

Writes ``docs/img/matrix_mechanism.png`` (the figure of
``docs/howto/matrix-mechanism.md``) and prints the numbers.  Setting: noise ``sigma`` in
clip-norm units, ``b`` steps per epoch, ``delta``:

* DP-SGD with Poisson sampling at rate ``1/b`` (analytic accountant): certified upper end;
* DP-SGD with fixed-bin balls-in-bins (``c_col = [1]``, jax_privacy's
  ``BallsInBinsSampling``): sampled accountant, certified interval;
* DP-BandMF with a 4-band ``c_col`` normalised to unit norm, same sampler: certified
  interval;
* DP-SGD with the bin redrawn every epoch (``EpochBin``, ``c_col = [1]``: balls-and-bins
  epochs, composed): certified interval;
* no amplification: the Gaussian mechanism with sensitivity ``max_j ||m_j|| = sqrt(E)``
  (each record's ``E`` participations, columns of one bin disjoint), exact.

Usage: ``python examples/matrix_mechanism.py [--quick]`` (``--quick``: fewer epochs and
samples, for a smoke test; the figure is not written).
"""

from __future__ import annotations

import argparse
import math
import pathlib
import time

import numpy as np

import sampledprv as sp

ROOT = pathlib.Path(__file__).resolve().parents[1]
BANDS4 = tuple(np.array([1.0, 0.5, 0.25, 0.125]) / np.linalg.norm([1.0, 0.5, 0.25, 0.125]))


def curves(sigma: float, b: int, epochs: list, delta: float, n_samples: int) -> dict:
    out: dict = {"poisson": [], "fixed_bin": [], "bandmf": [], "epoch_bin": [],
                 "no_amplification": []}
    for e in epochs:
        n = e * b
        out["poisson"].append(sp.Accountant().compose(
            sp.PoissonSubsampled(sp.Gaussian(sigma), q=1.0 / b), n).epsilon(delta))
        for key, c in (("fixed_bin", (1.0,)), ("bandmf", BANDS4)):
            spec = sp.MatrixMechanism(sigma, n, sp.FixedBin(b), c_col=c)
            acc = sp.SampledAccountant(n_samples, seed=0, progress=False).compose(spec)
            out[key].append(acc.epsilon(delta))
        spec = sp.MatrixMechanism(sigma, n, sp.EpochBin(b), c_col=(1.0,))
        out["epoch_bin"].append(sp.SampledAccountant(n_samples, seed=0, progress=False)
                                .compose(spec).epsilon(delta))
        out["no_amplification"].append(sp.Accountant().compose(
            sp.Gaussian(sigma / math.sqrt(e))).epsilon(delta))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    sigma, b, delta = 3.0, 10, 1e-5
    epochs = [1, 2] if args.quick else [1, 2, 4, 7, 10, 15, 20]
    n_samples = 100_000 if args.quick else 1_000_000
    t0 = time.time()
    res = curves(sigma, b, epochs, delta, n_samples)
    print(f"sigma={sigma}, {b} steps per epoch, delta={delta:g} ({time.time() - t0:.0f} s)")
    for i, e in enumerate(epochs):
        row = "  ".join(f"{k}={res[k][i].upper:.3f}" if k in ("poisson", "no_amplification")
                        else f"{k}=[{res[k][i].lower:.3f}, {res[k][i].upper:.3f}]"
                        for k in res)
        print(f"E={e:3d}  {row}")
    if args.quick:
        return
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 4.2))
    ax.plot(epochs, [iv.upper for iv in res["poisson"]], "o-", label="DP-SGD, Poisson (q = 1/b)")
    for key, label in (("fixed_bin", "DP-SGD, fixed bin (c_col = [1])"),
                       ("bandmf", "BandMF, fixed bin, 4 bands"),
                       ("epoch_bin", "DP-SGD, bin redrawn every epoch (c_col = [1])")):
        lo = [iv.lower for iv in res[key]]
        hi = [iv.upper for iv in res[key]]
        line, = ax.plot(epochs, hi, "s-", label=label + " (certified upper end)")
        ax.fill_between(epochs, lo, hi, color=line.get_color(), alpha=0.3)
    ax.plot(epochs, [iv.upper for iv in res["no_amplification"]], "k--",
            label="no amplification (Gaussian, sensitivity sqrt(E))")
    ax.set_xlabel("epochs E (b = 10 steps each)")
    ax.set_ylabel(f"epsilon (delta = {delta:g})")
    ax.set_title(f"sigma = {sigma}")
    ax.legend(fontsize=8)
    fig.tight_layout()
    path = ROOT / "docs" / "img" / "matrix_mechanism.png"
    fig.savefig(path, dpi=110)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
