"""Audit a small DP-SGD run (Opacus) against its certified trade-off curve.

A logistic-regression model is trained on scikit-learn's bundled digits (nothing is
downloaded) with the project's Opacus integration (``GGPrivacyEngine(beta=2)``: Opacus'
own DP-SGD, Poisson sampling, flat clipping, Gaussian noise).  ``m`` canaries -- digits
with a random wrong label -- are each inserted into the training set independently with
probability 1/2 (a one-run audit, Steinke, Nasr and Jagielski 2023).  After training, a
canary's score is minus its loss (members are fitted, so their loss is lower).

The run is accounted by ``sampledprv.Accountant`` (``steps`` Poisson-subsampled Gaussian
steps at the noise multiplier used), and ``sp.audit(..., mode="one-run")`` turns the
scores into an empirical epsilon lower bound and a verdict against the certified
trade-off curve.  ``--under-noised`` trains with a quarter of the noise while accounting
the stated noise multiplier (a simulated bug; more canaries and steps make it visible).

    python examples/audit_dpsgd.py --quick      # < 1 minute
    python examples/audit_dpsgd.py              # more canaries, longer training
    python examples/audit_dpsgd.py --plot audit.png
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import torch
from sklearn.datasets import load_digits

import sampledprv as sp
from sampledprv.torch.opacus_integration import GGPrivacyEngine


def make_data(canaries: int, seed: int):
    """Digits (scaled to [0, 1]) and ``canaries`` digits with a random wrong label, each
    included with probability 1/2."""
    x, y = load_digits(return_X_y=True)
    x = (x / 16.0).astype(np.float32)
    rng = np.random.default_rng(seed)
    idx = rng.permutation(len(y))
    can_idx, base_idx = idx[:canaries], idx[canaries:]
    can_x = x[can_idx]
    can_y = (y[can_idx] + rng.integers(1, 10, size=canaries)) % 10      # a wrong label
    member = rng.random(canaries) < 0.5
    train_x = np.concatenate([x[base_idx], can_x[member]])
    train_y = np.concatenate([y[base_idx], can_y[member]])
    return (torch.tensor(train_x), torch.tensor(train_y)), (torch.tensor(can_x),
                                                            torch.tensor(can_y)), member


def train(train_set, *, noise_multiplier: float, batch: int, epochs: int, lr: float,
          clip: float, seed: int):
    torch.manual_seed(seed)
    model = torch.nn.Linear(64, 10)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(*train_set),
                                         batch_size=batch, shuffle=True)
    engine = GGPrivacyEngine(beta=2.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")       # Opacus' notes about secure RNG etc.
        model, optimizer, loader = engine.make_private(
            module=model, optimizer=optimizer, data_loader=loader,
            noise_multiplier=noise_multiplier, max_grad_norm=clip, poisson_sampling=True)
    steps = 0
    for _ in range(epochs):
        for xb, yb in loader:
            if len(yb) == 0:
                continue
            optimizer.zero_grad()
            torch.nn.functional.cross_entropy(model(xb), yb).backward()
            optimizer.step()
            steps += 1
    return model, steps, 1.0 / len(loader)


def main(argv=None) -> sp.AuditResult:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small run (< 1 minute)")
    ap.add_argument("--noise", type=float, default=1.0, help="accounted noise multiplier")
    ap.add_argument("--under-noised", action="store_true",
                    help="train with noise/4 while accounting --noise (a simulated bug)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--plot", metavar="FILE.png", help="plot the audit on the certified band")
    args = ap.parse_args(argv)
    canaries, epochs = (400, 4) if args.quick else (800, 12)
    batch, lr, clip, delta = 64, 2.0, 1.0, 1e-5

    t0 = time.perf_counter()
    train_set, (can_x, can_y), member = make_data(canaries, args.seed)
    used = args.noise / 4.0 if args.under_noised else args.noise
    model, steps, q = train(train_set, noise_multiplier=used, batch=batch, epochs=epochs,
                            lr=lr, clip=clip, seed=args.seed)
    with torch.no_grad():
        loss = torch.nn.functional.cross_entropy(model(can_x), can_y, reduction="none")
    scores = -loss.numpy().astype(np.float64)          # higher = more likely a member

    acc = sp.Accountant().compose(sp.PoissonSubsampled(sp.Gaussian(args.noise), q), steps)
    curve = acc.tradeoff_curve()
    result = sp.audit(scores[member], scores[~member], acc, delta=delta, mode="one-run",
                      curve=curve)
    print(f"trained {steps} DP-SGD steps (q = {q:.4f}, noise multiplier {used:g}, accounted "
          f"{args.noise:g}) with {member.sum()} of {canaries} canaries inserted")
    print(f"certified epsilon({delta:g}) = {acc.epsilon(delta)}")
    print(f"certified mu-GDP: {acc.gdp_mu()}")
    for t in result.details["tests"]:
        print(f"  {t['guesses']:4d} guesses, {t['correct']:4d} correct: epsilon >= "
              f"{t['epsilon_lower']:.3f}" + ("  (f-DP test rejects the certified curve)"
                                             if t["fdp_rejects"] else ""))
    print(result)
    print(f"({time.perf_counter() - t0:.1f} s)")
    if args.plot:
        import matplotlib
        matplotlib.use("Agg")
        from sampledprv.plotting import plot_tradeoff
        ax = plot_tradeoff(curve, result)
        ax.figure.savefig(args.plot, dpi=120, bbox_inches="tight")
        print(f"wrote {args.plot}")
    return result


if __name__ == "__main__":
    main()
