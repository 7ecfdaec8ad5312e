"""Benchmark: certified trade-off curve of DP-SGD at three false-positive rates.

DP-SGD: Poisson-subsampled Gaussian, ``sigma = 0.8``, ``q = 4e-3``, ``10^4`` steps; FPRs
1e-3, 1e-2, 1e-1.  ``ours``: ``sp.Accountant()`` (eps_error 0.01, delta_error 1e-10) built
and composed, then ``acc.tradeoff([1e-3, 1e-2, 1e-1])`` (two-sided intervals, worst case
over both directions); the time is end to end (build + trade-off) in this process, best of
``--repeat`` runs after one warm-up.

The peer is dp-accounting's ``get_true_positive_rates`` (one-sided, symmetrised over the
two directions).  It is called when the installed dp-accounting has it.  dp-accounting
0.6.0 (installed here) does not, so the script prints the issue's reference number (445 s
"here" in the issue tracker, on another run) **labelled as such**, and a ratio against it that is
not a same-process measurement.

    python benchmarks/bench_tradeoff.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from importlib.metadata import version

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _machine import cpu_model  # noqa: E402

import sampledprv as sp  # noqa: E402
from sampledprv.mechanisms.laws import clear_law_cache  # noqa: E402

FPRS = [1e-3, 1e-2, 1e-1]
SIGMA, Q, STEPS = 0.8, 4e-3, 10_000
ISSUE_REFERENCE = {"seconds": 445.0, "tpr": [0.01099, 0.06188, 0.30507]}


def ours():
    acc = sp.Accountant().compose(sp.PoissonSubsampled(sp.Gaussian(SIGMA), q=Q), STEPS)
    return acc.tradeoff(FPRS)


def peer():
    """dp-accounting's get_true_positive_rates, if this dp-accounting has it."""
    try:
        import dp_accounting
        from dp_accounting.pld import pld_privacy_accountant
    except ImportError:
        return None, "dp-accounting not installed"
    fn = None
    for mod in (dp_accounting, getattr(dp_accounting, "pld", None), pld_privacy_accountant):
        fn = fn or getattr(mod, "get_true_positive_rates", None)
    if fn is None:
        return None, f"dp-accounting {version('dp-accounting')} has no get_true_positive_rates"
    return fn, "available"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print(f"CPU: {cpu_model()}; {os.cpu_count()} logical CPUs; load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    ours_warm = sp.Accountant().compose(sp.PoissonSubsampled(sp.Gaussian(SIGMA), q=Q), 10)
    ours_warm.tradeoff(FPRS)
    best, ivs = float("inf"), None
    for _ in range(args.repeat):
        clear_law_cache()   # time a cold build: no laws shared from earlier calls
        t0 = time.perf_counter()
        ivs = ours()
        best = min(best, time.perf_counter() - t0)
    print(f"\nDP-SGD sigma={SIGMA}, q={Q}, {STEPS:,} steps; best TPR at each FPR (worst case "
          "over directions)")
    print(f"{'fpr':>8} {'lower':>10} {'estimate':>10} {'upper':>10} {'issue ref':>10}")
    for x, iv, ref in zip(FPRS, ivs, ISSUE_REFERENCE["tpr"]):
        print(f"{x:>8g} {iv.lower:>10.5f} {iv.estimate:>10.5f} {iv.upper:>10.5f} {ref:>10.5f}")
    print(f"\nours (build + three FPRs, best of {args.repeat}): {best:.2f} s")
    fn, status = peer()
    if fn is None:
        print(f"peer: {status}; not run.")
        print(f"REFERENCE (reported by the issue tracker, not measured here): dp-accounting "
              f"get_true_positive_rates took {ISSUE_REFERENCE['seconds']:.0f} s for this "
              f"case; ratio reference / ours = {ISSUE_REFERENCE['seconds'] / best:.0f}x "
              "(different run and machine: indicative only)")
    else:
        print("peer: get_true_positive_rates is available but its call signature is not "
              "wired here; time it by hand (the issue measured 445 s)")
    print("note: dp-accounting's values agree with our estimates to their printed digits; at "
          "fpr 1e-3 our certified interval with eps_error 3e-4 is [0.0109881, 0.0109942] "
          "around the estimate 0.0109917 > 0.01099, so an upper end below 0.01099 is most "
          "likely below the true value (design notes, 'Trade-off curves and audits')")


if __name__ == "__main__":
    main()
