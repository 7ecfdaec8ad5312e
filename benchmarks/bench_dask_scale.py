"""Sharded sampling on a 2-worker Dask LocalCluster: efficiency and a long composition.

1. Efficiency: draws/s of one histogram sampled by the in-process kernel (all Numba
   threads) vs the same histogram sharded on a LocalCluster of ``--workers`` single-
   thread worker processes on the same cores (warmed up first).  Target >= 90%.
2. Gaussian mu = 1/sqrt(1000) per step, k = 1000, ``--n`` draws (default 2e10) on the
   cluster: certified epsilon(1e-5) (exact 4.3772 for total mu = 1), its width, the
   planner's predicted width for the same n (simulated counts), wall time, peak RSS of
   the client and of the workers (flat in n: shards are merged as they arrive).

    python benchmarks/bench_dask_scale.py [--n 2e10] [--eff-n 2e9] [--workers 2]
"""

from __future__ import annotations

import argparse
import logging
import math
import os
import platform
import resource
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402
from scipy.stats import norm  # noqa: E402

import sampledprv as sp  # noqa: E402
from sampledprv.sampled.histograms.window import choose_window  # noqa: E402
from sampledprv.sampled.certification.prediction import predict_width  # noqa: E402
from sampledprv.sampled.histograms.sharding import HistogramJob, run_jobs  # noqa: E402


from _machine import cpu_model  # noqa: E402  (benchmarks/ is on sys.path)


def gaussian_eps(mu: float, delta: float) -> float:
    """Exact epsilon(delta) of the Gaussian mechanism with GDP parameter mu."""
    def d(e):
        return norm.cdf(-e / mu + mu / 2) - math.exp(e) * norm.cdf(-e / mu - mu / 2)
    lo, hi = 0.0, 100.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if d(mid) > delta else (lo, mid)
    return hi


def _peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=float, default=2e10, help="draws per histogram, part 2")
    ap.add_argument("--eff-n", type=float, default=2e9, help="draws, part 1")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--delta", type=float, default=1e-5, help="delta of part 2")
    ap.add_argument("--repeats", type=int, default=3, help="alternating runs, part 1")
    ap.add_argument("--sims", type=int, default=2, help="planner simulations, part 2")
    ap.add_argument("--skip-long", action="store_true", help="only part 1")
    a = ap.parse_args()
    from distributed import Client, LocalCluster

    print(f"CPU: {cpu_model()}, {os.cpu_count()} logical cores; {a.workers} Dask workers "
          f"x 1 thread; load average {os.getloadavg()[0]:.1f} at start")
    # silence_logs: a worker whose heartbeat races the scheduler's shutdown logs a
    # traceback at ERROR level (seen under load); task errors still reach the client
    cluster = LocalCluster(n_workers=a.workers, threads_per_worker=1, processes=True,
                           dashboard_address=None, silence_logs=logging.CRITICAL)
    client = Client(cluster)

    # ---- 1. efficiency -------------------------------------------------------------------
    k = 1000
    mech = sp.Gaussian(math.sqrt(k))          # mu = 1/sqrt(1000) per step
    n1 = int(a.eff_n)
    lo, h, nb = choose_window(mech, "remove", n1, 2**17, np.random.default_rng(0))
    job = HistogramJob(mech, "remove", n1, lo, h, nb, np.random.SeedSequence(1))
    warm = HistogramJob(mech, "remove", 2**22, lo, h, nb, np.random.SeedSequence(2),
                        shard_size=2**20)
    run_jobs([warm]), run_jobs([warm], client)          # compile / load kernels everywhere
    ratios, t_ins, t_dks = [], [], []
    for _ in range(a.repeats):     # alternate, so that load from others hits both alike
        t0 = time.perf_counter()
        ref = run_jobs([job], progress=False)[0]
        t_ins.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        dk = run_jobs([job], client, progress=False)[0]
        t_dks.append(time.perf_counter() - t0)
        assert np.array_equal(ref.counts, dk.counts), "Dask and in-process histograms differ"
        ratios.append(t_ins[-1] / t_dks[-1])
    t_in, t_dk = float(np.median(t_ins)), float(np.median(t_dks))
    print(f"\n[1] n = {n1:.3g}, {job.n_shards} shards of {job.shard_size:,}, {a.repeats} "
          f"alternating runs: in-process {n1 / t_in:.3e} draws/s, Dask {n1 / t_dk:.3e} "
          f"draws/s (medians); efficiency Dask/in-process: median {np.median(ratios):.1%} "
          f"(runs: {', '.join(f'{r:.0%}' for r in ratios)}); identical counts")
    if a.skip_long:
        client.close()
        cluster.close()
        return

    # ---- 2. the long composition ---------------------------------------------------------
    n = int(a.n)
    delta = a.delta
    exact = gaussian_eps(1.0, delta)
    t0 = time.perf_counter()
    pred = predict_width(mech, k, delta, n, alpha=1e-9, sims=a.sims, workers=a.workers)
    t_pred = time.perf_counter() - t0
    print(f"\n[2] planner ({t_pred:.0f} s): {pred}")
    t0 = time.perf_counter()
    acc = sp.SampledAccountant(n, alpha=1e-9, seed=7, executor=client)
    acc.compose(mech, k)
    acc.empirical(mech)
    t_sample = time.perf_counter() - t0
    iv = acc.epsilon(delta=delta)
    t_all = time.perf_counter() - t0
    worker_rss = client.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0)
    print(f"    n = {n:.3g} draws (one histogram: the Gaussian PRV is symmetric), bins "
          f"{iv.details.get('bins')}, mesh width {iv.details['mesh_width']:.3g}")
    print(f"    certified epsilon({delta:g}) = [{iv.lower:.4f}, {iv.upper:.4f}] (exact "
          f"{exact:.4f}, contained: {iv.lower <= exact <= iv.upper}), width {iv.width:.4f}")
    print(f"    predicted width {pred.width:.4f}: realised/predicted = "
          f"{iv.width / pred.width:.3f}")
    print(f"    sampling {t_sample:.0f} s ({n / t_sample:.3e} draws/s; predicted "
          f"{pred.seconds_on(a.workers):.0f} s), total {t_all:.0f} s")
    print(f"    peak RSS: client {_peak_rss_mib():.0f} MiB, workers "
          + ", ".join(f"{v:.0f}" for v in worker_rss.values()) + " MiB")
    client.close()
    cluster.close()


if __name__ == "__main__":
    main()
