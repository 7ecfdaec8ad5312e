"""beta-DP-SGD on scikit-learn's bundled digits (nothing is downloaded).

For each beta the GG noise scale is calibrated so that the whole training run is certified
(epsilon, delta)-DP over the whole ell_beta ball in d dimensions (d = the model's 2410
parameters; one PoissonSubsampled(GeneralizedGaussianVector(beta, scale, d), q) per step,
accounted by sampledprv.VectorGGAccountant: Renyi upper bound, exact-PLD lower bound on
concrete sensitivity vectors; exact PLD at beta = 2), then a small MLP is trained with
per-sample gradients from torch.func, ell_beta clipping and GG noise.

    python examples/beta_dpsgd_digits.py            # full run (several minutes on 2 cores)
    python examples/beta_dpsgd_digits.py --quick    # one to two minutes on a quiet 2-core machine

Prints, per beta: calibrated scale (and noise multiplier scale/sqrt 2), the certified
interval [lower, upper] of the epsilon actually spent, and test accuracy.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
import torch
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from torch.func import functional_call, grad, vmap

import sampledprv as sp
from sampledprv.gg.dpsgd_accounting import calibrate_scale, make_accountant, step_spec
from sampledprv.torch import BetaDPSGD, poisson_sample_mask


def make_model(seed: int) -> torch.nn.Module:
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.Tanh(), torch.nn.Linear(32, 10))


def train(beta: float, scale: float, data, *, steps: int, q: float, clip: float, lr: float,
          seed: int, device: str) -> float:
    xtr, ytr, xte, yte = data
    model = make_model(seed).to(device)
    params = dict(model.named_parameters())

    def loss_one(p, x, y):
        out = functional_call(model, p, (x[None],))
        return torch.nn.functional.cross_entropy(out, y[None])

    per_sample = vmap(grad(loss_one), in_dims=(None, 0, 0))
    gen = torch.Generator(device=device).manual_seed(seed)
    opt = BetaDPSGD(model.parameters(), lr=lr, momentum=0.9, beta=beta, scale=scale,
                    max_grad_norm=clip, expected_batch_size=q * len(xtr), generator=gen)
    for _ in range(steps):
        mask = poisson_sample_mask(len(xtr), q, generator=gen, device=device)
        detached = {k: v.detach() for k, v in params.items()}
        opt.step(per_sample(detached, xtr[mask], ytr[mask]))
    with torch.no_grad():
        return (model(xte).argmax(1) == yte).float().mean().item()


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="short run for CI (4 epochs; one to two minutes on 2 cores)")
    ap.add_argument("--epsilon", type=float, default=2.0)
    ap.add_argument("--delta", type=float, default=1e-5)
    ap.add_argument("--betas", type=float, nargs="+", default=[1.5, 2.0, 3.0])
    ap.add_argument("--epochs", type=float, default=None)
    ap.add_argument("--batch", type=int, default=128, help="expected batch size L = q N")
    ap.add_argument("--clip", type=float, default=1.0, help="clip norm C in the ell_beta norm")
    ap.add_argument("--lr", type=float, default=0.5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = ap.parse_args(argv)
    epochs = args.epochs if args.epochs is not None else (4 if args.quick else 10)

    x, y = load_digits(return_X_y=True)
    xtr, xte, ytr, yte = train_test_split(x / 16.0, y, test_size=0.25, random_state=0, stratify=y)
    to = lambda a, dt: torch.as_tensor(a, dtype=dt, device=args.device)  # noqa: E731
    data = (to(xtr, torch.float32), to(ytr, torch.long), to(xte, torch.float32), to(yte, torch.long))
    n = len(xtr)
    q = args.batch / n
    steps = int(round(epochs / q))
    print(f"digits: {n} train / {len(xte)} test, q = {q:.4f}, {steps} steps ({epochs:g} epochs), "
          f"target ({args.epsilon:g}, {args.delta:g})-DP, C = {args.clip:g}, device {args.device}")
    print(f"{'beta':>5} {'scale':>8} {'sigma':>7} {'eps spent [lower, upper]':>26} "
          f"{'test acc':>9} {'time':>6}")
    d = sum(p.numel() for p in make_model(args.seed).parameters())
    for beta in args.betas:
        t0 = time.perf_counter()
        cal = calibrate_scale(beta, epsilon=args.epsilon, delta=args.delta, steps=steps,
                              sample_rate=q, dimension=d)
        acc_ = make_accountant("vector", beta)
        spent = (acc_.compose(step_spec(beta, cal.x, q, dimension=d), count=steps)
                 .epsilon(delta=args.delta))
        acc = train(beta, cal.x, data, steps=steps, q=q, clip=args.clip, lr=args.lr,
                    seed=args.seed, device=args.device)
        print(f"{beta:5.2f} {cal.x:8.4f} {cal.x / math.sqrt(2):7.4f} "
              f"   [{spent.lower:.4f}, {spent.upper:.4f}]      {acc:9.4f} "
              f"{time.perf_counter() - t0:5.1f}s")
    print(f"eps spent: certified interval over the whole ell_beta ball in d = {d} dimensions "
          "(upper: Renyi DP; lower: the largest certified PLD epsilon over concrete sensitivity "
          "vectors spread evenly over 1, 4, 16, ... coordinates, which can exceed the one-hot "
          "vector's, the GG paper's number); exact PLD at beta = 2.")


if __name__ == "__main__":
    main()
