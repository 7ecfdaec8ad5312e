r"""The seed method of :class:`~.accountant.SampledAccountant` (``certify="seed"``).

The GG paper's SampledComposePRV (Algorithms 5-6, Theorem 6; :mod:`.seed_method`):
each histogram is sampled twice on a grid ``[-L, L]`` of mesh ``h`` (half the draws
each), the composed curve is bracketed with the paper's ``tau`` and ``eta``, and the
mass beyond ``L`` is bounded by the envelope method's tails at ``alpha / 2``.
:class:`SeedMethod` answers the accountant's queries.
"""

from __future__ import annotations

import numpy as np

from ..histograms.empirical import EmpiricalPRV
from .envelope_strategy import method_text, pick
from .seed_method import (SEED_METHOD, seed_default_params, seed_delta, seed_direction,
                          seed_epsilon, seed_grid, seed_half, seed_window)

__all__ = ["SeedMethod", "seed_bounds"]


def seed_bounds(acc, delta_ref: float) -> tuple[dict, dict]:
    comp = acc.composition
    if any(isinstance(m, EmpiricalPRV) for m, _ in comp):
        raise ValueError("certify='seed' samples on its own [-L, L] grid and cannot use "
                         "precomputed EmpiricalPRV histograms; use certify='envelope'")
    dirs = acc._bank.directions()
    k = sum(c for _, c in comp)
    keys = list(acc._bank.entries)
    used = sorted({acc._bank.hist_key(kk, acc._bank.entries[kk][0], d) for d in dirs for kk in keys},
                  key=repr)
    settings = acc._settings          # SampledSettings (.settings)
    if "L" in settings.seed_params and "h" in settings.seed_params:   # size known: check first
        seed_grid(float(settings.seed_params["L"]), float(settings.seed_params["h"]),
                  settings.max_grid)
    # alpha: half to the fine envelopes (bounding P[|sum Y| >= L - t]), half to the
    # Clopper-Pearson bounds on P[|Y_i| >= L] (one test per histogram)
    env_b, _ = acc._envelope_bounds(None, alpha=acc.alpha / 2)
    # the window and the default parameters from the smaller direction (conservative)
    n_half = min(acc.n_for(d) for d in dirs) // 2
    L = settings.seed_params.get("L")
    if L is None:
        top = max(float(np.max(np.abs(b.up.values))) for b in env_b.values())
        L = seed_window(lambda x: max(b.tail_bound(x) for b in env_b.values()), top,
                        k=k, n=n_half, delta=delta_ref)
    p = seed_default_params(k=k, n=n_half, L=float(L), delta=delta_ref)
    p.update({kk: vv for kk, vv in settings.seed_params.items() if kk != "L"})
    h = float(p["h"])
    m = seed_grid(float(p["L"]), h, settings.max_grid)   # before any histogram is allocated
    L_eff = (m + 0.5) * h
    fine = max(1, min(64, int(2**22 // (2 * m + 1))))
    jobs, sks = [], []
    for hk in used:
        kk, d = hk
        sk = (hk, "seed", h, m)
        if sk not in acc._bank.hists:
            mech = acc._bank.entries[kk][0]
            ch = acc._bank.children(kk)
            j = 4 if d == "remove" else 6
            n_d = acc.n_for(d) // 2
            jobs += [acc._bank.job(kk, mech, d, f"seed1-m{m}-h{h!r}", n_d, -L_eff, h,
                               2 * m + 1, ch[j]),
                     acc._bank.job(kk, mech, d, f"seed2-m{m}-h{h!r}", n_d, -L_eff, h / fine,
                               (2 * m + 1) * fine, ch[j + 1])]
            sks.append(sk)
    if jobs:
        res = acc._bank.run(jobs)
        for i, sk in enumerate(sks):
            acc._bank.hists[sk] = (res[2 * i], res[2 * i + 1])  # type: ignore[assignment]
    a_h = acc.alpha / 2 / len(used)
    halves = {hk: seed_half(*acc._bank.hists[(hk, "seed", h, m)], L_eff, h, fine, a_h)
              for hk in used}
    n_eff = min(x[2] for x in halves.values())
    out = {d: seed_direction([(halves[acc._bank.hist_key(kk, acc._bank.entries[kk][0], d)],
                               acc._bank.entries[kk][1]) for kk in keys],
                             m=m, n=n_eff, L=L_eff, h=h, s=p["s"], t=p["t"], fine=fine,
                             tail_sum=env_b[d].tail_bound(L_eff - p["t"]))
           for d in dirs}
    det = {"n_samples": acc.n_samples, "alpha": acc.alpha, "n_per_half": n_eff,
           "L": L_eff, "h": h, "s": p["s"], "t": p["t"], "directions": dirs,
           "tau": max(o[1] for o in out.values()), "eta": max(o[2] for o in out.values()),
           "eta_terms": {d: out[d][3] for d in dirs}, "compositions": k}
    return out, det


class SeedMethod:
    """``certify="seed"`` (module docstring).  Stateless: the accountant holds the
    histograms."""

    name = "seed"

    def epsilon(self, acc, delta: float, direction: object):
        res, det = seed_bounds(acc, delta)
        trip = [seed_epsilon(y, tau, eta, delta)
                for y, tau, eta, _ in pick(res, direction).values()]
        lo, est, up = (max(0.0, *(x[i] for x in trip)) for i in range(3))
        return acc._interval(lo, est, up, method_text(acc, SEED_METHOD), det)

    def delta(self, acc, epsilon: float, direction: object):
        res, det = seed_bounds(acc, float(acc._settings.seed_params.get("delta_ref", 1e-6)))
        trip = [seed_delta(y, tau, eta, epsilon)
                for y, tau, eta, _ in pick(res, direction).values()]
        lo, est, up = (max(0.0, *(x[i] for x in trip)) for i in range(3))
        return acc._interval(lo, est, min(up, 1.0), method_text(acc, SEED_METHOD), det)
