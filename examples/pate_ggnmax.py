"""PATE-style private aggregation with GGNMax: accuracy vs beta at equal privacy.

Synthetic teacher votes: each of `--queries` unlabeled points gets votes from `--teachers`
teachers over `--classes` labels; a teacher votes for the point's true label with a
point-specific probability (consensus), otherwise uniformly at random.  For each beta the
GGNMax scale is calibrated so that answering all queries is certified (epsilon, delta)-DP,
and we report how often the private label equals the noiseless plurality (the paper's
"hardmax" utility), overall and for small runner-up gaps.

Neighbours (`--neighbours`): "vote-change" (default; PATE with disjoint partitions: one
record changes one teacher's vote, so two counts move by one and each answer is accounted
as GeneralizedGaussian(beta, scale) composed twice) or "one-count" (one count changes by
at most 1: the GG paper's Theorem 2 accounting, sampledprv.GGNMax, once per answer).

    python examples/pate_ggnmax.py --quick
"""

from __future__ import annotations

import argparse

import numpy as np

import sampledprv as sp


def synthetic_votes(queries: int, teachers: int, classes: int, rng: np.random.Generator):
    truth = rng.integers(0, classes, queries)
    consensus = rng.beta(2.0, 4.0, queries)  # share of teachers that know the answer
    knows = rng.random((queries, teachers)) < consensus[:, None]
    guess = rng.integers(0, classes, (queries, teachers))
    labels = np.where(knows, truth[:, None], guess)
    votes = np.zeros((queries, classes))
    np.add.at(votes, (np.repeat(np.arange(queries), teachers), labels.ravel()), 1.0)
    return votes


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--epsilon", type=float, default=2.0)
    ap.add_argument("--delta", type=float, default=1e-5)
    ap.add_argument("--queries", type=int, default=None)
    ap.add_argument("--teachers", type=int, default=250)
    ap.add_argument("--classes", type=int, default=10)
    ap.add_argument("--trials", type=int, default=None, help="noise repetitions per query")
    ap.add_argument("--betas", type=float, nargs="+", default=None)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--neighbours", choices=["vote-change", "one-count"], default="vote-change")
    args = ap.parse_args(argv)
    queries = args.queries or (100 if args.quick else 300)
    trials = args.trials or (20 if args.quick else 50)
    betas = args.betas or ([1.0, 1.5, 2.0, 3.0, 4.0] if args.quick else
                           [1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0])
    rng = np.random.default_rng(args.seed)
    votes = synthetic_votes(queries, args.teachers, args.classes, rng)
    top2 = np.sort(votes, axis=1)[:, -2:]
    gap = top2[:, 1] - top2[:, 0]
    clean = votes.argmax(axis=1)
    small = gap <= np.quantile(gap, 0.25)
    print(f"{queries} queries x {args.teachers} teachers x {args.classes} classes; "
          f"target ({args.epsilon:g}, {args.delta:g})-DP over all queries ({args.neighbours} "
          f"neighbours); {trials} trials")
    print(f"median runner-up gap {np.median(gap):.0f} votes; 'hard' = gap <= {np.quantile(gap, 0.25):.0f}")
    print(f"{'beta':>5} {'scale':>9} {'eps upper':>10} {'accuracy':>9} {'hard acc':>9}")
    for beta in betas:
        if args.neighbours == "vote-change":
            make, count = (lambda s: sp.GeneralizedGaussian(beta, s)), 2 * queries
        else:
            make, count = (lambda s: sp.GGNMax(beta, s)), queries
        cal = sp.calibrate(make, count=count, epsilon=args.epsilon, delta=args.delta,
                           bracket=(10.0, 100.0))
        reps = np.repeat(votes[None], trials, axis=0).reshape(-1, args.classes)
        hits = (sp.ggnmax(reps, beta, cal.x, rng=rng) == np.tile(clean, trials)).reshape(trials, -1)
        print(f"{beta:5.2f} {cal.x:9.3f} {cal.interval.upper:10.4f} {hits.mean():9.4f} "
              f"{hits[:, small].mean():9.4f}")
    print("accuracy: agreement with the noiseless plurality vote; eps upper is certified.")


if __name__ == "__main__":
    main()
