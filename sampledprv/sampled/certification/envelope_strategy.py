r"""The envelope method of :class:`~.accountant.SampledAccountant` (``certify="envelope"``).

Each mechanism's privacy-loss histogram in each direction gives Clopper-Pearson
stochastic-dominance envelopes (:mod:`.envelopes`; a conditional statistic where the
spec has one, :mod:`.conditional`), at a per-histogram failure probability
``alpha / H`` (union bound over the ``H`` histograms).  Their FFT composition
(:func:`~.envelopes.compose_bounds`; two levels when one grid is too large,
:mod:`.twolevel`) brackets the composed curve; where other certified bounds exist
(:mod:`.alternatives`) the best of each end wins.  :class:`EnvelopeMethod` answers the
accountant's queries; :func:`bounds_of_state` builds the composed envelopes of its
current state (cached by the accountant).
"""

from __future__ import annotations

from typing import Optional

from ...engine.compose import GridTooLargeError
from ...mechanisms.base import Direction, as_direction
from ...core.progress import Progress
from ..histograms.histogram import coarsen
from .alternatives import best_of
from .envelopes import compose_bounds, composition_steps, envelope
from .identity_envelopes import JOIN_TEXT, join_report, joined_state
from .twolevel import compose_bounds_two_level

__all__ = ["EnvelopeMethod", "bounds_of_state", "method_text", "pick", "ENVELOPES",
           "TAIL_FLOOR"]

#: Mass of the Chernoff tail left at +inf, summed over the composition (negligible
#: against the composition's aliasing and round-off budget).
TAIL_FLOOR = 1e-16
ENVELOPES = ("stochastic-dominance envelopes, Clopper-Pearson union bound, exact FFT "
             "composition")


def pick(per_direction: dict, direction: object) -> dict:
    """Both directions (``None``) or one (a symmetric composition has one, the same in
    both directions)."""
    if direction is None:
        return per_direction
    d = as_direction(direction).value
    return {d: per_direction[d] if d in per_direction
            else per_direction[Direction.REMOVE.value]}


def bounds_of_state(acc, dirs: object, used: set,
                              alpha: Optional[float]) -> tuple[dict, dict]:
    acc._bank.sample_envelope_hists([(k, m, d) for d in dirs
                                 for k, (m, _) in acc._bank.entries.items()])
    hists = {d: [(acc._bank.envelope_hist(k, m, d), c, acc._bank.tail(k, m, d))
                 for k, (m, c) in acc._bank.entries.items()] for d in dirs}
    # conditional samplers (.conditional): histogram of a statistic, own mesh
    conds = {d: [acc._bank.conditional(m, d) for m, _ in acc._bank.entries.values()]
             for d in dirs}
    floor = TAIL_FLOOR / sum(c for _, c in acc.composition)
    a_h = (acc.alpha if alpha is None else alpha) / len(used)
    h_q = max(hh.h if cd is None else cd.mesh(hh, acc._bank.bins_now())
              for d in dirs for (hh, _, _), cd in zip(hists[d], conds[d]))
    two = {}
    while True:
        envs = {}
        for d in dirs:
            comps = []
            for (hh, c, tb), cd in zip(hists[d], conds[d]):
                if cd is not None:
                    comps.append((cd.envelope(hh, a_h, tail=tb, floor=floor, h=h_q,
                                             progress=acc.progress), c))
                    continue
                f = int(round(h_q / hh.h))
                if abs(f * hh.h - h_q) > 1e-9 * h_q:
                    raise ValueError("histogram meshes must be power-of-two multiples "
                                     f"of each other, got {hh.h} and {h_q}")
                comps.append((envelope(coarsen(hh, f), a_h, tail=tb, floor=floor,
                                       progress=acc.progress), c))
            envs[d] = comps
        try:
            bar = Progress(acc.progress, sum(composition_steps(len(envs[d]))
                                              for d in dirs),
                           "composing (FFT)", unit="transform")
            try:
                out = {d: compose_bounds(envs[d], max_size=acc.max_grid, bar=bar)
                       for d in dirs}
            finally:
                bar.close()
            break
        except GridTooLargeError as err:
            out = two_level(acc, envs)   # coarse level only; fine mesh kept
            if out is not None:
                two = next(iter(out.values())).details
                break
            if all(h_q >= hh.h * hh.counts.size for d in dirs for hh, _, _ in hists[d]):
                # every histogram is one bin already: a coarser mesh cannot help
                raise ValueError(
                    f"max_grid={acc.max_grid:,} is too small for this composition: even "
                    f"with every histogram merged into one bin the FFT needs "
                    f"{err.needed:,} points; raise max_grid") from None
            h_q *= 2.0
    if getattr(acc, "join_directions", False):      # .identity_envelopes
        out = joined_state([m for m, _ in acc._bank.entries.values()], envs, out,
                           two.get("two_level_factor", 0), acc.max_grid)
    k = sum(c for _, c in acc.composition)
    width = k * h_q
    if two:   # each regridded variable adds at most one coarse mesh of rounding
        width += two["coarse_events"] * two["two_level_factor"] * h_q
    det = {"n_samples": acc.n_samples, "alpha": acc.alpha, "histograms": len(used),
           "mesh": h_q, "mesh_width": width, "directions": dirs,
           "compositions": k, "bins": acc._bank.bins_now(),
           "tail_bounds": {f"{m!r} ({d})": (tb.source if tb is not None else None)
                           for d in dirs for (m, _), (_, _, tb)
                           in zip(acc.composition, hists[d])}}
    if two:
        det.update(two_level_factor=two["two_level_factor"],
                   coarse_events=two["coarse_events"])
    return out, det


def method_text(acc, base: str) -> str:
    """``base`` plus the tail information the query used, in words."""
    srcs = {tb.source for (key, (m, _)) in acc._bank.entries.items() for d in acc._bank.directions()
            for tb in [acc._bank.tail(key, m, d)] if tb is not None}
    if not srcs:
        return base
    premise = any(not s.startswith("proven ") for s in srcs)   # proven: a theorem
    return (base + "; unseen tail bounded by Chernoff's inequality from "
            + " / ".join(sorted(srcs))
            + (" (conditional on these bounds)" if premise else ""))


def two_level(acc, envs: dict) -> Optional[dict]:
    """Two-level composition (:mod:`.twolevel`) at the smallest coarse factor that
    fits ``max_grid``; ``None`` if none up to 64 does."""
    for factor in (2, 4, 8, 16, 32, 64):
        try:
            return {d: compose_bounds_two_level(c, factor, max_size=acc.max_grid)
                    for d, c in envs.items()}
        except GridTooLargeError:
            continue
    return None


class EnvelopeMethod:
    """``certify="envelope"``: the queries read the composed envelopes (module
    docstring).  Stateless: the accountant holds the histograms and the cache."""

    name = "envelope"

    def epsilon(self, acc, delta: float, direction: object):
        """Certified bracket on epsilon(delta) (the accountant validated ``delta``)."""
        alt = acc._alternatives()
        bounds, det = acc._envelope_bounds(delta, None if alt is None else alt.alpha_each)
        bounds = pick(bounds, direction)
        trip = [b.epsilon(delta) for b in bounds.values()]
        lo, est, up = (max(t[i] for t in trip) for i in range(3))
        det["per_direction"] = {d: b.epsilon(delta) for d, b in bounds.items()}
        det.update(next(iter(bounds.values())).details)
        return best_of("epsilon", delta, direction, alt,
                       acc._interval(lo, est, up, _text(acc, bounds, "epsilon", delta, det),
                                     det))

    def delta(self, acc, epsilon: float, direction: object):
        """Certified bracket on delta(epsilon) (the accountant validated ``epsilon``)."""
        alt = acc._alternatives()
        bounds, det = acc._envelope_bounds(None, None if alt is None else alt.alpha_each)
        bounds = pick(bounds, direction)
        trip = [b.delta(epsilon) for b in bounds.values()]
        det["per_direction"] = {d: b.delta(epsilon) for d, b in bounds.items()}
        lo, est, up = (max(t[i] for t in trip) for i in range(3))
        det.update(next(iter(bounds.values())).details)
        return best_of("delta", epsilon, direction, alt,
                       acc._interval(lo, est, up, _text(acc, bounds, "delta", epsilon, det),
                                     det))


def _text(acc, bounds: dict, kind: str, x: float, det: dict) -> str:
    """The method in words; with ``join_directions=True`` the ends the join or the meet
    set are named (:mod:`.identity_envelopes`) and both brackets kept in ``details``."""
    text = method_text(acc, ENVELOPES)
    rep = join_report(bounds, kind, x)
    if rep is None:
        return text
    det["identity_join"] = rep
    ends = [e for e in ("lower", "upper") if rep[e]]
    return text + (f"; {' and '.join(ends)} end{'s' if len(ends) > 1 else ''}: {JOIN_TEXT}"
                   if ends else "")
