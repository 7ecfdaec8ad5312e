r"""Every valid bound, and the smallest wins (issue 33, item 1).

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

By the union bound all hold together with probability at least ``1 - alpha``, so the
interval ``[max of the lower ends, min of the upper ends]`` does; its ``method`` names
the bound that set each end.  Poisson subsampling at rate ``k/T`` is *not* among them:
no theorem says that it dominates random allocation at every :math:`\varepsilon`
(design notes, "Certified tails: every valid bound").
"""

from __future__ import annotations

import math
from typing import Any, Callable, List, Optional, Tuple

from ...core.interval import Interval

__all__ = ["has_alternatives", "Alternatives", "best_of"]

_RDP_NAME = ("RDP conversion of the proven Renyi bounds (Canonne-Kamath-Steinke Prop. 12; "
             "exact occupancy moments where affordable, block reduction beyond)")


def _hooks(mech: Any) -> tuple:
    fn = getattr(mech, "dominating_compositions", None)
    return tuple(fn()) if callable(fn) else ()


def has_alternatives(entries: dict) -> bool:
    """Whether a composed spec of the bank's ``entries`` has a dominating composition."""
    return any(_hooks(m) for m, _ in entries.values())


class Alternatives:
    """The other certified bounds of one accountant state (built lazily, cached by the
    accountant until its next ``compose``).

    Parameters
    ----------
    outer : SampledAccountant
        The accountant whose composition is bounded; its inner accountants are built
        with the same settings, ``alpha / 2`` and the same seed.
    make_inner : callable
        ``make_inner(alpha) -> SampledAccountant`` with the outer settings and no
        alternatives of its own.
    """

    def __init__(self, outer: Any, make_inner: Callable[[float], Any]) -> None:
        self.alpha_each = outer.alpha / 2.0
        bank = outer._bank
        replaced: List[Tuple[Any, int, Any, Any]] = []
        names: List[str] = []
        for key, (m, c) in bank.entries.items():
            renyi, loss_range = bank.side.get(key, (None, None))
            hooks = _hooks(m)
            if hooks:
                name, blocks = hooks[0]
                names.append(name)
                replaced.extend((spec, count * c, None, None) for spec, count in blocks)
            else:
                replaced.append((m, c, renyi, loss_range))
        self.reduction_name = "; ".join(names)
        self._replaced = replaced
        self._make_inner = make_inner
        self._inner: Optional[Any] = None
        self._entries = [(m, c) for m, c in bank.entries.values()]
        self._rdp: Optional[Any] = None
        self._rdp_ok: Optional[bool] = None

    def reduction(self) -> Any:
        """The inner accountant of the dominating composition (``alpha / 2``)."""
        if self._inner is None:
            inner = self._make_inner(self.alpha_each)
            for spec, count, renyi, loss_range in self._replaced:
                inner.compose(spec, count, renyi=renyi, loss_range=loss_range)
            self._inner = inner
        return self._inner

    def rdp(self) -> Optional[Any]:
        """An RDP accountant of the composition, or ``None`` when a spec has no proven
        Renyi bound (user inputs)."""
        if self._rdp_ok is None:
            from ...rdp.accountant import RdpAccountant
            acc = RdpAccountant()
            try:
                for m, c in self._entries:
                    acc.compose(m, c)
                self._rdp, self._rdp_ok = acc, True
            except (TypeError, ValueError, NotImplementedError):
                self._rdp_ok = False
        return self._rdp

    def _rdp_value(self, query: str, x: float, direction: Any) -> float:
        acc = self.rdp()
        if acc is None:
            return math.inf
        try:   # the maximum over both directions: an upper end for either one
            return float(getattr(acc, query)(x))
        except (TypeError, ValueError):
            return math.inf

    def combine(self, query: str, x: float, direction: Any, own: Interval,
                own_name: str) -> Interval:
        """``own`` (the outer envelopes' interval, certified at ``alpha / 2``) tightened
        by the other bounds: the smallest upper end and the largest lower end, the
        ``method`` naming both winners."""
        red = getattr(self.reduction(), query)(x, direction)
        uppers = [(own.upper, own_name, own.method),
                  (red.upper, self.reduction_name, red.method),
                  (self._rdp_value(query, x, direction), _RDP_NAME, "deterministic")]
        if query == "delta":
            uppers = [(min(u, 1.0), n, m) for u, n, m in uppers]
        up, up_name, up_method = min(uppers, key=lambda t: t[0])
        lower = min(own.lower, up)
        est = min(max(own.estimate, lower), up)
        method = (f"upper end: {up_name} ({up_method}); lower end: {own_name} "
                  f"({own.method}); the sampled bounds each at alpha/2, union bound")
        details = {**own.details,
                   "upper_bounds": {n: float(u) for u, n, _ in uppers},
                   "upper_end": up_name, "lower_end": own_name}
        return Interval(float(lower), float(est), float(up), own.certification,
                        own.confidence, method, details)


def best_of(query: str, x: float, direction: Any, alt: Optional[Alternatives],
            own: Interval) -> Interval:
    """``own`` when there are no other bounds, else the best of all (:meth:`Alternatives.combine`)."""
    if alt is None:
        return own
    return alt.combine(query, x, direction, own, "the composition's own sampled envelopes")
