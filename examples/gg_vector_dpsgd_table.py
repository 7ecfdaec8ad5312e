"""Certified epsilon of beta-DP-SGD over the whole ell_beta ball, by beta and dimension.

DP-SGD setting: Poisson rate q = 0.01, 1000 steps (10 epochs), GG noise scale
s = sqrt(2) * 1.0 (noise multiplier 1: exactly Gaussian DP-SGD with sigma = 1 at beta = 2),
clip norm 1, delta = 1e-5. For each beta and d, prints the certified interval of
sampledprv.VectorGGAccountant (upper: Renyi DP over the ell_beta ball; lower: the best
certified PLD lower bound over sensitivity vectors spread evenly over m coordinates; m = 1,
the one-hot vector, is the GG paper's number) and writes a plot.

    python examples/gg_vector_dpsgd_table.py [--out docs/img/gg_vector_dpsgd.png]
"""

from __future__ import annotations

import argparse
import math
import time

import sampledprv as sp

BETAS = (1.0, 1.5, 2.0, 2.5, 3.0)
DIMS = (1, 1000, 1_000_000)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="docs/img/gg_vector_dpsgd.png")
    ap.add_argument("--q", type=float, default=0.01)
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--sigma", type=float, default=1.0)
    ap.add_argument("--delta", type=float, default=1e-5)
    args = ap.parse_args(argv)
    scale = math.sqrt(2.0) * args.sigma
    print(f"q = {args.q}, {args.steps} steps, scale = {scale:.4f} (sigma {args.sigma}), "
          f"delta = {args.delta}")
    print(f"{'beta':>5} {'d':>9} {'lower':>8} {'upper':>9} {'one-hot':>8} {'best m':>7} "
          f"{'time':>6}")
    results = {}
    for beta in BETAS:
        for d in DIMS:
            t0 = time.perf_counter()
            spec = sp.PoissonSubsampled(sp.GeneralizedGaussianVector(beta, scale, d), args.q)
            iv = sp.VectorGGAccountant().compose(spec, args.steps).epsilon(args.delta)
            results[beta, d] = iv
            lows = iv.details.get("lower_by_spread", {1: iv.lower})
            best = max(lows, key=lows.get)
            print(f"{beta:5.2f} {d:9d} {iv.lower:8.4f} {iv.upper:9.4f} {lows[1]:8.4f} "
                  f"{best:7d} {time.perf_counter() - t0:5.1f}s", flush=True)
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 4.2))
    width = 0.25
    for j, d in enumerate(DIMS):
        xs = [i + (j - 1) * width for i in range(len(BETAS))]
        ups = [results[b, d].upper for b in BETAS]
        lows = [results[b, d].lower for b in BETAS]
        ax.bar(xs, ups, width * 0.9, label=f"upper, d = {d:,}", alpha=0.8)
        ax.scatter(xs, lows, color="black", marker="_", s=200, zorder=3,
                   label="lower (best spread vector)" if j == 0 else None)
    ax.set_xticks(range(len(BETAS)))
    ax.set_xticklabels([f"beta = {b:g}" for b in BETAS])
    ax.set_yscale("log")
    ax.set_ylabel(f"certified epsilon at delta = {args.delta:g}")
    ax.set_title(f"beta-DP-SGD, q = {args.q}, {args.steps} steps, scale = sqrt(2)*{args.sigma:g}")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(args.out, dpi=120)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
