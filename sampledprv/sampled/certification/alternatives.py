r"""Every valid bound, and the smallest wins.

The sampled accountant's interval for a composition comes from the envelopes of its
own histograms.  When a composed spec also has *dominating compositions* (a hook
``dominating_compositions()`` returning ``((name, ((spec, count), ...)), ...)``: pairs
that dominate the spec's pair in both directions, for every :math:`\varepsilon` and
every Renyi order, by a theorem; e.g. ``k``-of-``T`` random allocation and its block
reduction, :mod:`sampledprv.rdp.allocation_reduction`), the accountant certifies

* its own envelopes at failure probability ``alpha / 2``;
* the composition with each such spec replaced by its dominating composition, sampled
  by an inner accountant at ``alpha / 2`` (its upper end is an upper end for the
  original composition; its lower end is not a lower end, and is not used);
* the RDP-to-:math:`(\varepsilon, \delta)` conversion of the specs' proven Renyi bounds
  (:func:`sampledprv.rdp.conversion.epsilon_from_rdp`; deterministic, no ``alpha``),
  where every composed spec has one.

* for a composition of one spec with a hook ``tilted_law(order, count)`` (random
  allocation with Gaussian steps, the fixed-bin matrix mechanism): two-sided bounds on
  the remove direction from draws of the tilted law :math:`P_a` (:mod:`.tilted`), at
  ``alpha / 3`` (then every sampled bound gets ``alpha / 3``; ``alpha / 2`` each when
  the spec has no dominating composition, so no reduction is sampled), the add
  direction taken from the own envelopes.  The order
  is the one that minimises the RDP conversion at the query (the Chernoff-optimal
  order), capped by what the law can store; ``max(n_remove // 10, 1000)`` draws (``n_remove`` the remove direction's ``n_samples``).

By the union bound all hold together with probability at least ``1 - alpha``, so the
interval ``[max of the lower ends, min of the upper ends]`` does; its ``method`` names
the bound that set each end.  Poisson subsampling at rate ``k/T`` is *not* among them:
no theorem says that it dominates random allocation at every :math:`\varepsilon`
(design notes, "Certified tails: every valid bound").
"""

from __future__ import annotations

import math
from typing import Any, Callable, List, Optional, Tuple

import numpy as np

from ...core.interval import Interval
from ...mechanisms.base import as_direction
from ...rdp.accountant import RdpAccountant
from ...rdp.divergence import renyi_divergence
from ..draws.hooks import find_hook
from .tilted import tilted_delta, tilted_epsilon

__all__ = ["has_alternatives", "alternatives_for", "Alternatives", "best_of"]

_RDP_NAME = ("RDP conversion of the proven Renyi bounds (Canonne-Kamath-Steinke Prop. 12; "
             "exact occupancy moments where affordable, block reduction beyond)")
_RDP_NAME_PLAIN = "RDP conversion of the proven Renyi bounds (Canonne-Kamath-Steinke Prop. 12)"


def _hooks(mech: Any, conditional: bool = True) -> tuple:
    fn = find_hook(mech, "dominating_compositions")
    return tuple(fn(conditional=conditional)) if fn is not None else ()


def _order2_law(entries: list) -> Optional[Any]:
    """The tilted law at order 2 when the composition is one spec with a tilted law
    (``tilted_law`` hook), else ``None``."""
    if len(entries) != 1:
        return None
    only, count = entries[0]
    fn = find_hook(only, "tilted_law")
    return None if fn is None else fn(2, count)


def has_alternatives(entries: dict) -> bool:
    """Whether a composed spec of the bank's ``entries`` has a dominating composition,
    or the composition is one spec with a tilted law."""
    return any(_hooks(m) for m, _ in entries.values()) or \
        _order2_law(list(entries.values())) is not None


def alternatives_for(outer: Any,
                     make_inner: Callable[[float], Any]) -> Optional["Alternatives"]:
    """:class:`Alternatives` of ``outer``'s composition, or ``None`` when it has none
    (:func:`has_alternatives`); the order-2 tilted law is built once, for both."""
    entries = list(outer._bank.entries.values())
    law2 = _order2_law(entries)
    if law2 is None and not any(_hooks(m) for m, _ in entries):
        return None
    return Alternatives(outer, make_inner, law2)


class Alternatives:
    """The other certified bounds of one accountant state (built lazily, cached by the
    accountant until its next ``compose``).

    Parameters
    ----------
    outer : SampledAccountant
        The accountant whose composition is bounded.
    make_inner : callable
        ``make_inner(alpha) -> SampledAccountant`` with the outer settings (same seed).
    """

    def __init__(self, outer: Any, make_inner: Callable[[float], Any],
                 law2: Optional[Any] = None) -> None:
        bank = outer._bank
        self._entries = [(m, c) for m, c in bank.entries.values()]
        if law2 is None:
            law2 = _order2_law(self._entries)
        tilt = law2 is not None
        self._tilt_spec = self._entries[0][0] if tilt else None
        #: tilted laws built but not drawn yet, by order (the order-2 one decided ``tilt``)
        self._built: dict = {2: law2} if tilt else {}
        replaced: List[Tuple[Any, int, Any, Any]] = []
        names: List[str] = []
        for key, (m, c) in bank.entries.items():
            renyi, loss_range = bank.side.get(key, (None, None))
            # with tilted draws for the remove direction, the blocks' remove direction
            # is sampled plainly (the conditional envelope costs seconds and would not win)
            hooks = _hooks(m, conditional=not tilt)
            if hooks:
                name, blocks = hooks[0]
                names.append(name)
                replaced.extend((spec, count * c, None, None) for spec, count in blocks)
            else:
                replaced.append((m, c, renyi, loss_range))
        #: the sampled bounds sharing alpha: own envelopes, reduction (if any), tilted
        self.n_sampled = 1 + bool(names) + (self._tilt_spec is not None)
        self.alpha_each = outer.alpha / float(self.n_sampled)
        self.reduction_name = "; ".join(names)
        self._replaced = replaced
        self._make_inner = make_inner
        self._n_tilted = max(outer.n_for("remove") // 10, 1000)
        self._seed = int(bank.seed_value)
        self._inner: Optional[Any] = None
        self._rdp: Optional[Any] = None
        self._rdp_ok: Optional[bool] = None
        self._tilted_laws: dict = {}

    def reduction(self) -> Any:
        """The inner accountant of the dominating composition."""
        if self._inner is None:
            inner = self._make_inner(self.alpha_each)
            for spec, count, renyi, loss_range in self._replaced:
                inner.compose(spec, count, renyi=renyi, loss_range=loss_range)
            self._inner = inner
        return self._inner

    def rdp(self) -> Optional[Any]:
        """An RDP accountant of the composition on the integer orders 2..64, or ``None``
        when a spec has no proven Renyi bound (user inputs)."""
        if self._rdp_ok is None:
            acc = RdpAccountant(orders=[float(a) for a in range(2, 65)])
            try:
                for m, c in self._entries:
                    acc.compose(m, c)
                self._rdp, self._rdp_ok = acc, True
            except (TypeError, ValueError, NotImplementedError):
                self._rdp_ok = False
        return self._rdp

    def _rdp_value(self, query: str, x: float) -> float:
        acc = self.rdp()
        if acc is None:
            return math.inf
        try:   # the maximum over both directions: an upper end for either one
            return float(getattr(acc, query)(x))
        except (TypeError, ValueError):
            return math.inf

    # ---- tilted sampling of the remove direction ---------------------------------------
    def _order(self, query: str, x: float) -> Optional[int]:
        """The integer order minimising the remove direction's RDP conversion at the
        query, lowered until the spec can build its tilted law."""
        spec, count = self._entries[0]
        orders = np.arange(2.0, 65.0)
        rdp = np.array([count * renyi_divergence(spec, float(o), "remove") for o in orders])
        with np.errstate(invalid="ignore", over="ignore"):
            if query == "epsilon":
                score = rdp + np.log1p(-1.0 / orders) \
                    - (math.log(x) + np.log(orders)) / (orders - 1.0)
            else:
                score = (orders - 1.0) * (rdp - x) + (orders - 1.0) * np.log1p(-1.0 / orders) \
                    - np.log(orders)
        score = np.where(np.isfinite(score), score, np.inf)
        a = int(orders[int(np.argmin(score))])
        while a >= 2:
            if a in self._tilted_laws:
                return a
            law = self._built.pop(a) if a in self._built else \
                find_hook(spec, "tilted_law")(a, count)
            if law is not None:
                rng = np.random.default_rng([self._seed, 33, a])
                self._tilted_laws[a] = (law, law.draw(rng, self._n_tilted))
                return a
            a -= 1
        return None

    def _tilted(self, query: str, x: float) -> dict:
        """``{"remove": (lower, estimate, upper, how)}`` from draws of the tilted law
        :math:`P_a` at ``alpha_each`` (empty when the spec has none).  (The add
        direction has no tilted law with a known normaliser: it takes its bounds from
        the other sources.)"""
        if self._tilt_spec is None:
            return {}
        laws = {}
        a = self._order(query, x)
        if a is not None:
            laws["remove"] = self._tilted_laws[a]
        out = {}
        top = self._rdp_value("epsilon", x) if query == "epsilon" else math.inf
        for d, (law, draws) in laws.items():
            if query == "delta":
                lo, est, up = tilted_delta(law, draws, x, self.alpha_each)
            elif math.isfinite(top):
                grid = np.linspace(0.0, top, 801)[1:]      # fixed before the draws are read
                lo, est, up = tilted_epsilon(law, draws, x, grid, self.alpha_each)
            else:
                continue
            out[d] = (lo, est, up, f"{law.name}, {draws[0].size:,} draws, empirical "
                      "Bernstein" + (", grid of 800 epsilons" if query == "epsilon" else ""))
        return out

    def combine(self, query: str, x: float, direction: Any, own: Interval,
                own_name: str) -> Interval:
        """``own`` (the outer envelopes' interval, certified at :attr:`alpha_each`)
        tightened by the other bounds, direction by direction: in each direction the
        smallest upper end and the largest lower end; the interval's ends are the
        maxima over the directions asked.  The ``method`` names the winners."""
        dname = None if direction is None else as_direction(direction).value
        dirs = ("remove", "add") if dname is None else (dname,)
        red = getattr(self.reduction(), query)(x, direction) if self.reduction_name \
            else None
        own_pd = own.details.get("per_direction", {})
        red_pd = red.details.get("per_direction", {}) if red is not None else {}
        rdp = self._rdp_value(query, x)
        tilt = self._tilted(query, x)
        ups, lows, cands = {}, {}, {}
        for d in dirs:
            cand_up = [(own_pd.get(d, (own.lower, own.estimate, own.upper))[2], own_name,
                        own.method),
                       (rdp, _RDP_NAME if red is not None else _RDP_NAME_PLAIN,
                        "deterministic")]
            if red is not None:
                cand_up.insert(1, (red_pd.get(d, (0, 0, red.upper))[2],
                                   self.reduction_name, red.method))
            cand_low = [(own_pd.get(d, (own.lower,))[0], own_name, own.method)]
            if d in tilt:
                lo, _, up, how = tilt[d]
                cand_up.append((up, "tilted sampling", how))
                cand_low.append((lo, "tilted sampling", how))
            if query == "delta":
                cand_up = [(min(u, 1.0), n, m) for u, n, m in cand_up]
            cands[d] = {"upper": {n: float(u) for u, n, _ in cand_up},
                        "lower": {n: float(u) for u, n, _ in cand_low}}
            ups[d] = min(cand_up, key=lambda t: t[0])
            lows[d] = max(cand_low, key=lambda t: t[0])
        d_up = max(ups, key=lambda d: ups[d][0])
        d_low = max(lows, key=lambda d: lows[d][0])
        up, up_name, up_method = ups[d_up]
        low, low_name, low_method = lows[d_low]
        lower = min(low, up)
        est = min(max(own.estimate, lower), up)
        k = self.n_sampled
        method = (f"upper end: {up_name}, {d_up} direction ({up_method}); lower end: "
                  f"{low_name}, {d_low} direction ({low_method}); the {k} sampled bounds "
                  f"each at alpha/{k}, union bound")
        details = {**own.details,
                   "upper_bounds": {d: ups[d][:2] for d in dirs},
                   "lower_bounds": {d: lows[d][:2] for d in dirs},
                   "candidates": cands, "upper_end": up_name, "lower_end": low_name}
        return Interval(float(lower), float(est), float(up), own.certification,
                        own.confidence, method, details)


def best_of(query: str, x: float, direction: Any, alt: Optional[Alternatives],
            own: Interval) -> Interval:
    """``own`` when there are no other bounds, else the best of all
    (:meth:`Alternatives.combine`)."""
    if alt is None:
        return own
    return alt.combine(query, x, direction, own, "the composition's own sampled envelopes")
