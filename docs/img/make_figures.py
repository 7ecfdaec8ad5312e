"""Regenerate the figures of the docs: python docs/img/make_figures.py (about a minute)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import sampledprv as sp  # noqa: E402
from sampledprv import plotting  # noqa: E402

OUT = Path(__file__).resolve().parent


def save(fig, name: str) -> None:
    fig.savefig(OUT / name, dpi=110, bbox_inches="tight")
    plt.close(fig)
    print("wrote", OUT / name)


def main() -> None:
    # 1. analytic DP-SGD curve with its deterministic band
    acc = sp.Accountant().compose(sp.PoissonSubsampled(sp.Gaussian(sigma=1.0), q=0.01), 1000)
    curve = plotting.privacy_curve(acc, [i * 0.1 for i in range(41)])
    ax = plotting.plot_privacy_curve(
        curve, delta=1e-5, title="DP-SGD: 1000 x subsampled Gaussian (sigma=1, q=0.01)")
    save(ax.figure, "curve_analytic.png")

    # 2. sampled curve and 3. loss histogram with envelopes (same histograms)
    mech = sp.PoissonSubsampled(sp.GeneralizedGaussian.from_noise_multiplier(1.5, 1.0), 0.1)
    sacc = sp.SampledAccountant(n_samples=10**6, alpha=1e-6, seed=0, progress=False)
    sacc.compose(mech, 10)
    ax = plotting.plot_privacy_curve(
        sacc, [i * 0.05 for i in range(41)], delta=1e-3,
        title="10 x subsampled GG (beta=1.5, sigma=1, q=0.1), sampled: n=1e6, alpha=1e-6")
    save(ax.figure, "curve_sampled.png")
    axes = plotting.plot_loss_histogram(
        sacc, title="subsampled GG (beta=1.5, sigma=1, q=0.1): remove direction, n=1e6")
    save(axes[0].figure, "loss_envelopes.png")

    # 4. GG tail weight against beta at a fixed privacy level
    table = sp.calibrated_tail_weights([1.0, 1.25, 1.5, 2.0, 2.5, 3.0, 4.0], [2.0, 4.0, 8.0],
                                       epsilon=2.0, delta=1e-5, count=1)
    print(table.format())
    ax = sp.plot_tail_weights(table)
    save(ax.figure, "gg_tail_weights.png")


if __name__ == "__main__":
    main()
