"""Epsilon against epochs for the batch samplers of DP-SGD, at one sigma.

Writes ``docs/img/which_batch_sampler.png`` (the figure of
``docs/howto/which-batch-sampler.md``) and prints the numbers.  Setting: Gaussian noise
``sigma`` on sums of contributions clipped to norm 1, ``T`` steps per epoch, one expected
participation per record and epoch, ``delta``:

* Poisson sampling at rate ``1/T`` (analytic accountant, add/remove): certified upper end;
* balls-and-bins (``sp.BallsAndBins``: each record in one uniformly chosen step per
  epoch) and 2-of-2T random allocation (``sp.RandomAllocation(sigma, 2T, selected=2)``:
  each record in 2 of every 2T steps, plotted at even epochs): sampled accountant,
  certified interval (band) and its upper end;
* shuffling (``sp.Shuffled``): the certified lower end (Chua et al.'s attained pair;
  no tight upper end is known), zero-out neighbours;
* deterministic batches (each record in one fixed step per epoch): the Gaussian with
  ``mu = sqrt(E)/sigma``, zero-out neighbours; an upper bound for shuffling.

Curves whose specs this build does not have are skipped with a message (the
balls-and-bins and allocation specs come with their own module); rerun the script once
they are installed.  Usage: ``python examples/which_batch_sampler.py [--quick]``
(``--quick``: fewer epochs and samples, for a smoke test; the figure is not written).
"""

from __future__ import annotations

import argparse
import pathlib
import time

import sampledprv as sp

ROOT = pathlib.Path(__file__).resolve().parents[1]


def poisson(sigma: float, steps: int, epochs: list, delta: float) -> list:
    acc, done, out = sp.Accountant(), 0, []
    for e in epochs:
        acc.compose(sp.PoissonSubsampled(sp.Gaussian(sigma), q=1.0 / steps), (e - done) * steps)
        done = e
        out.append(acc.epsilon(delta))
    return out


def sampled(spec: object, epochs: list, per: int, delta: float, n: int) -> list:
    """Intervals of ``spec`` composed ``e / per`` times (``per`` epochs per spec)."""
    acc, done, out = sp.SampledAccountant(n_samples=n, alpha=1e-6, seed=0), 0, []
    for e in epochs:
        acc.compose(spec, (e - done) // per)
        done = e
        out.append(acc.epsilon(delta))
    return out


def shuffled(sigma: float, steps: int, epochs: list, delta: float) -> list:
    return [sp.ShuffleAccountant(neighbouring="add_remove").compose(
        sp.Shuffled(sigma, steps), e).epsilon(delta) for e in epochs]


def deterministic(sigma: float, epochs: list, delta: float) -> list:
    return [sp.Accountant().compose(sp.Gaussian(sigma), e).epsilon(delta) for e in epochs]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--sigma", type=float, default=1.0)
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--delta", type=float, default=1e-5)
    ap.add_argument("--n-samples", type=int, default=4_000_000)
    args = ap.parse_args()
    sigma, steps, delta = args.sigma, args.steps, args.delta
    epochs = [2, 4] if args.quick else [2, 4, 6, 8, 10, 14, 20]
    n = 100_000 if args.quick else args.n_samples
    curves: dict = {}
    t0 = time.time()
    curves["Poisson, rate 1/T (upper end)"] = (epochs, poisson(sigma, steps, epochs, delta))
    curves["shuffling (certified lower end)"] = (epochs, shuffled(sigma, steps, epochs, delta))
    curves["deterministic batches"] = (epochs, deterministic(sigma, epochs, delta))
    for label, name, make, per in (
            ("balls-and-bins", "BallsAndBins", lambda c: c(sigma, steps), 1),
            ("2-of-2T allocation", "RandomAllocation",
             lambda c: c(sigma, 2 * steps, selected=2), 2)):
        cls = getattr(sp, name, None)
        if cls is None:
            print(f"skipped {label}: sp.{name} is not in this build of sampledprv")
            continue
        es = [e for e in epochs if e % per == 0]
        curves[label] = (es, sampled(make(cls), es, per, delta, n))
    print(f"sigma={sigma:g}, T={steps}, delta={delta:g}; {time.time() - t0:.0f} s")
    for label, (es, ivs) in curves.items():
        print(f"{label}:")
        for e, iv in zip(es, ivs):
            print(f"  {e:3d} epochs: [{iv.lower:.4f}, {iv.upper:.4f}]")
    if args.quick:
        print("certified intervals computed (--quick: figure not written)")
        return
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.0, 4.4))
    styles = {"Poisson, rate 1/T (upper end)": ("C0", "-", "o"),
              "balls-and-bins": ("C1", "-", "s"), "2-of-2T allocation": ("C2", "-", "^"),
              "shuffling (certified lower end)": ("C3", "--", "v"),
              "deterministic batches": ("C7", ":", "x")}
    for label, (es, ivs) in curves.items():
        color, ls, mk = styles[label]
        if label.startswith("shuffling"):
            ys = [iv.lower for iv in ivs]
        else:
            ys = [iv.upper for iv in ivs]
        if label in ("balls-and-bins", "2-of-2T allocation"):
            ax.fill_between(es, [iv.lower for iv in ivs], [iv.upper for iv in ivs],
                            color=color, alpha=0.2, lw=0)
        ax.plot(es, ys, ls=ls, marker=mk, color=color, label=label)
    if "shuffling (certified lower end)" in curves:
        es, ivs = curves["shuffling (certified lower end)"]
        ax.fill_between(es, [iv.lower for iv in ivs], [iv.upper for iv in ivs], color="C3",
                        alpha=0.08, lw=0, label="shuffling lies in this range")
    ax.set_xlabel("epochs")
    ax.set_ylabel(f"epsilon at delta = {delta:g}")
    ax.set_title(f"sigma = {sigma:g}, T = {steps} steps per epoch, clipping norm 1")
    ax.set_yscale("log")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    out = ROOT / "docs" / "img" / "which_batch_sampler.png"
    fig.savefig(out, dpi=120, bbox_inches="tight")
    print(f"wrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
