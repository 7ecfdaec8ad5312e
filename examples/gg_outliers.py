"""Outlier (tail) weight of equally private Generalized Gaussian mechanisms (GG paper, App. B.5).

For each beta, calibrate the GG scale to a fixed certified guarantee, then print and plot
P(|noise| > tau) for a few tail cutoffs tau (units of the sensitivity).  Two settings as in
the paper's Figure 5: one GG release at (1.5, 1e-5)-DP, and the sampled GG (q = 0.01)
composed 100 times at the same guarantee.

    python examples/gg_outliers.py --quick [--out tails.png]
"""

from __future__ import annotations

import argparse

import numpy as np

import sampledprv as sp


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--epsilon", type=float, default=1.5)
    ap.add_argument("--delta", type=float, default=1e-5)
    ap.add_argument("--thresholds", type=float, nargs="+", default=[1.0, 2.0, 4.0])
    ap.add_argument("--out", default=None, help="save the figure here (needs matplotlib)")
    args = ap.parse_args(argv)
    betas = np.array([1.0, 1.5, 2.0, 2.5, 3.0]) if args.quick else np.linspace(1.0, 4.0, 13)
    settings = [("GG, 1 release", 1, 1.0), ("SGG q=0.01, 100 steps", 100, 0.01)]
    tables = []
    for name, count, q in settings:
        table = sp.calibrated_tail_weights(betas, args.thresholds, epsilon=args.epsilon,
                                           delta=args.delta, count=count, q=q)
        tables.append(table)
        print(f"== {name}, certified ({args.epsilon:g}, {args.delta:g})-DP")
        print(table.format())
        print("lightest tail at tau = " + ", ".join(
            f"{t:g}: beta={b:g}" for t, b in zip(table.thresholds, table.best_beta())))
    if args.out:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, axes = plt.subplots(1, 2, figsize=(11, 4))
        for ax, table in zip(axes, tables):
            sp.plot_tail_weights(table, ax=ax)
        fig.tight_layout()
        fig.savefig(args.out, dpi=120)
        print(f"figure written to {args.out}")


if __name__ == "__main__":
    main()
