"""Quick accuracy/time comparison with prv-accountant and dp-accounting beyond DP-SGD.

Settings that both peers (or one of them) support, epsilon at the given delta, all in one
process (each tool called once untimed first, then timed):

* ``laplace``: 100 x Laplace(b=10) (pure 0.1-DP per step), delta=1e-6;
* ``hetero``: 1000 x Poisson-subsampled Gaussian (sigma=1, q=0.01) + 10 x Laplace(b=20),
  delta=1e-5 (heterogeneous composition);
* ``sublap``: 1000 x Poisson-subsampled Laplace (b=2, q=0.01), delta=1e-5
  (dp-accounting only: prv-accountant has no subsampled Laplace PRV).

sampledprv: ``Accountant(eps_error=0.01, delta_error=1e-10)``; prv-accountant:
``PRVAccountant(eps_error=0.01, delta_error=delta/1000)``; dp-accounting:
``PLDAccountant()`` defaults (one pessimistic number, no lower bound).

Usage::

    python benchmarks/bench_compare_quick.py [--markdown]
"""

from __future__ import annotations

import argparse
import os
import time

import sampledprv as sp
from sampledprv.mechanisms.laws import clear_law_cache


def ours(setting):
    acc = sp.Accountant(eps_error=0.01, delta_error=1e-10)
    for m, c in setting["ours"]:
        acc.compose(m, c)
    iv = acc.epsilon(delta=setting["delta"])
    return iv.lower, iv.estimate, iv.upper


def prv(setting):
    if setting.get("prv") is None:
        return None
    from prv_accountant import PRVAccountant
    prvs, counts = zip(*setting["prv"]())
    acc = PRVAccountant(prvs=list(prvs), max_self_compositions=list(counts), eps_error=0.01,
                        delta_error=setting["delta"] / 1000)
    lo, est, up = acc.compute_epsilon(delta=setting["delta"], num_self_compositions=list(counts))
    return lo, est, up


def dpa(setting):
    from dp_accounting import dp_event as ev
    from dp_accounting.pld import PLDAccountant
    acc = PLDAccountant()
    acc.compose(ev.ComposedDpEvent([ev.SelfComposedDpEvent(e, c) for e, c in setting["dpa"]()]))
    e = acc.get_epsilon(setting["delta"])
    return None, e, e


def settings():
    from prv_accountant import privacy_random_variables as pr
    from dp_accounting import dp_event as ev
    sg = sp.PoissonSubsampled(sp.Gaussian(1.0), 0.01)
    return {
        "laplace": {"delta": 1e-6, "ours": [(sp.Laplace(10.0), 100)],
                    "prv": lambda: [(pr.LaplaceMechanism(0.1), 100)],
                    "dpa": lambda: [(ev.LaplaceDpEvent(10.0), 100)],
                    "what": "100 x Laplace(b=10), delta=1e-6"},
        "hetero": {"delta": 1e-5, "ours": [(sg, 1000), (sp.Laplace(20.0), 10)],
                   "prv": lambda: [(pr.PoissonSubsampledGaussianMechanism(
                       noise_multiplier=1.0, sampling_probability=0.01), 1000),
                       (pr.LaplaceMechanism(0.05), 10)],
                   "dpa": lambda: [(ev.PoissonSampledDpEvent(0.01, ev.GaussianDpEvent(1.0)), 1000),
                                   (ev.LaplaceDpEvent(20.0), 10)],
                   "what": "1000 x subsampled Gaussian (sigma=1, q=0.01) + 10 x Laplace(b=20), delta=1e-5"},
        "sublap": {"delta": 1e-5, "ours": [(sp.PoissonSubsampled(sp.Laplace(2.0), 0.01), 1000)],
                   "prv": None,
                   "dpa": lambda: [(ev.PoissonSampledDpEvent(0.01, ev.LaplaceDpEvent(2.0)), 1000)],
                   "what": "1000 x subsampled Laplace (b=2, q=0.01), delta=1e-5"},
    }


def timed(f, s):
    f(s)                        # untimed warm-up (imports, caches)
    clear_law_cache()   # time a cold build: no laws shared from earlier calls
    t = time.perf_counter()
    r = f(s)
    return r, time.perf_counter() - t


def fmt(x):
    return "-" if x is None else f"{x:.4f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    print(f"# load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; "
          "ratios are peer time / ours")
    rows = []
    for name, s in settings().items():
        (o, to) = timed(ours, s)
        rows.append((name, "ours", o, to, None, "-"))
        for tool, f in (("prv", prv), ("dpa", dpa)):
            if tool == "prv" and s.get("prv") is None:
                continue
            try:
                r, t = timed(f, s)
            except Exception as exc:  # noqa: BLE001 - a peer failing is a result
                print(f"{name} {tool}: error: {exc}")
                continue
            inside = "yes" if o[0] <= r[1] <= o[2] else "NO"
            rows.append((name, tool, r, t, t / to, inside))
        print(f"{name}: {s['what']}")
    head = ["setting", "tool", "lower", "estimate", "upper", "time s", "time/ours",
            "peer est in ours"]
    if args.markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
    for name, tool, r, t, ratio, inside in rows:
        cells = [name, tool, fmt(r[0]), fmt(r[1]), fmt(r[2]), f"{t:.3f}",
                 "" if ratio is None else f"{ratio:.1f}x", inside]
        print(("| " + " | ".join(cells) + " |") if args.markdown else "  ".join(cells))


if __name__ == "__main__":
    main()
