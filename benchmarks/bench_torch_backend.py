"""Torch sampling backend vs the Numba kernel: privacy-loss histograms per second.

Same process, same histogram window, same n: the Numba kernel on all CPU cores and the
torch backend on a device (cuda if available, else cpu).  Prints the device names and
the ratio torch rate / Numba rate per mechanism.  Standalone: needs numpy, scipy, numba
and torch (the repository root is put on sys.path, no install needed).

    python benchmarks/bench_torch_backend.py [--n 100000000] [--device cuda] [--repeats 3]
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numba  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

import sampledprv as sp  # noqa: E402
from sampledprv.sampled.histograms.window import choose_window  # noqa: E402
from sampledprv.sampled.histograms.kernels import loss_histogram  # noqa: E402
from sampledprv.sampled.histograms.torch_histogram import torch_loss_histogram  # noqa: E402


from _machine import cpu_model  # noqa: E402  (benchmarks/ is on sys.path)


def _sync(dev: str) -> None:
    if dev.startswith("cuda"):
        torch.cuda.synchronize()


def best_time(fn, repeats: int, dev: str = "cpu") -> float:
    fn()  # warm-up (compilation, CUDA context, allocator)
    ts = []
    for _ in range(repeats):
        _sync(dev)
        t0 = time.perf_counter()
        fn()
        _sync(dev)
        ts.append(time.perf_counter() - t0)
    return min(ts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=None, help="draws per histogram")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--bins", type=int, default=2**15)
    ap.add_argument("--long-n", type=float, default=0.0,
                    help="also run Gaussian mu=1/sqrt(1000) x 1000 at delta=1e-5 with this "
                         "many draws on the torch backend (e.g. 2e10), with the planner's "
                         "predicted width")
    ap.add_argument("--skip-rates", action="store_true")
    a = ap.parse_args()
    dev = a.device
    n = a.n or (2**28 if dev.startswith("cuda") else 2**24)
    print(f"CPU: {cpu_model()} ({os.cpu_count()} logical cores, Numba threads "
          f"{numba.get_num_threads()}, threading layer set on first use)")
    print(f"torch {torch.__version__}; device {dev}: "
          + (torch.cuda.get_device_name(0) if dev.startswith("cuda") else "CPU"))
    print(f"n = {n:,} draws per histogram, bins = {a.bins}, best of {a.repeats}\n")
    specs = [("Gaussian mu=1", sp.Gaussian(1.0)),
             ("Laplace b=1", sp.Laplace(1.0)),
             ("GG beta=1.5", sp.GeneralizedGaussian(beta=1.5, scale=1.5)),
             ("subsampled Gaussian q=0.01", sp.PoissonSubsampled(sp.Gaussian(1.0), q=0.01)),
             ("subsampled GG beta=1.5 q=0.01",
              sp.PoissonSubsampled(sp.GeneralizedGaussian(beta=1.5, scale=1.5), q=0.01))]
    if a.long_n:
        long_run(int(a.long_n), dev)
    if a.skip_rates:
        return
    print(f"{'mechanism (add direction)':32s} {'numba draws/s':>14s} {'torch draws/s':>14s} "
          f"{'torch/numba':>11s}")
    for name, mech in specs:
        lo, h, nb = choose_window(mech, "add", n, a.bins, np.random.default_rng(0))
        t_nb = best_time(lambda: loss_histogram(mech, direction="add", n=n, lo=lo, h=h,
                                                bins=nb, seed=1, progress=False), a.repeats)
        t_t = best_time(lambda: torch_loss_histogram(mech, "add", n=n, lo=lo, h=h, bins=nb,
                                                     seed=1, device=dev), a.repeats, dev)
        print(f"{name:32s} {n / t_nb:14.3e} {n / t_t:14.3e} {t_nb / t_t:11.2f}")
    print(f"\nNumba threading layer: {numba.threading_layer()}")


def long_run(n: int, dev: str) -> None:
    """k = 1000 Gaussian steps of mu = 1/sqrt(1000), certified epsilon(1e-5), on ``dev``."""
    import resource

    from sampledprv.sampled.certification.prediction import predict_width
    k, delta, exact = 1000, 1e-5, 4.3772
    mech = sp.Gaussian(math.sqrt(k))
    t0 = time.perf_counter()
    acc = sp.SampledAccountant(n, alpha=1e-9, seed=7, backend="torch", device=dev,
                               shard_size=2**30, progress=False)
    acc.compose(mech, k)
    acc.empirical(mech)
    t_s = time.perf_counter() - t0
    iv = acc.epsilon(delta=delta)
    t_all = time.perf_counter() - t0
    t1 = time.perf_counter()
    pred = predict_width(mech, k, delta, n, alpha=1e-9, sims=2, rate=(n / t_s, n / t_s))
    print(f"[long] n = {n:.3g} on {dev}: certified epsilon(1e-5) = [{iv.lower:.4f}, "
          f"{iv.upper:.4f}] (exact {exact}, contained: {iv.lower <= exact <= iv.upper}), "
          f"width {iv.width:.4f}; bins {iv.details.get('bins')}, mesh width "
          f"{iv.details['mesh_width']:.3g}")
    print(f"[long] sampling {t_s:.1f} s ({n / t_s:.3e} draws/s), total {t_all:.1f} s; "
          f"peak host RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    print(f"[long] planner: predicted width {pred.width:.4f} (realised/predicted "
          f"{iv.width / pred.width:.3f}; {time.perf_counter() - t1:.0f} s to predict)\n")


if __name__ == "__main__":
    main()
