"""jax_privacy's experimental Monte Carlo estimate of a fixed-bin DP-BandMF run (a peer).

Run with a Python that has ``jax_privacy`` (``pip install jax-privacy``); it does not
import sampledprv.  It draws ``--n`` privacy losses of jax_privacy's dominating pair in
each direction (``get_privacy_loss_sample`` with ``BallsInBinsSampling``, positive and
negative samples), estimates ``delta(eps)`` on a grid with
``delta_from_epsilon_and_samples`` (the plain Monte Carlo mean, no confidence bound) and
prints, as one JSON line, the smallest grid epsilon whose estimated delta is at most the
target in both directions: jax_privacy's **uncertified estimate**, used only as a
reference number by ``bench_matrix_mechanism.py --jax-privacy-python PATH``.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from jax_privacy import batch_selection
from jax_privacy.experimental.monte_carlo import delta_calculation, sample_generation


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sigma", type=float, required=True)
    ap.add_argument("--steps", type=int, required=True)
    ap.add_argument("--bins", type=int, required=True)
    ap.add_argument("--c-col", required=True, help="comma-separated, already normalised")
    ap.add_argument("--delta", type=float, required=True)
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    c_col = np.array([float(x) for x in args.c_col.split(",")])
    strategy = batch_selection.BallsInBinsSampling(iterations=args.steps,
                                                   cycle_length=args.bins)
    t0 = time.perf_counter()
    losses = {}
    for i, positive in enumerate((True, False)):
        loss, _ = sample_generation.get_privacy_loss_sample(
            strategy, args.sigma, c_col, seed=args.seed + i, positive_sample=positive,
            num_samples=args.n)
        losses["remove" if positive else "add"] = np.asarray(loss, dtype=np.float64)
    grid = np.linspace(0.0, 20.0, 4001)
    eps = {}
    for d, x in losses.items():
        deltas = np.array([delta_calculation.delta_from_epsilon_and_samples(e, x)
                           for e in grid])
        ok = np.flatnonzero(deltas <= args.delta)
        eps[d] = float(grid[ok[0]]) if ok.size else float("inf")
    print(json.dumps({"epsilon": max(eps.values()), "per_direction": eps, "n": args.n,
                      "seconds": time.perf_counter() - t0}))


if __name__ == "__main__":
    main()
