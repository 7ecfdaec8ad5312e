r"""The result of :func:`sampledprv.from_dp_event`: :class:`DpEventComposition`.

What :func:`sampledprv.from_dp_event` returns
---------------------------------------------
A :class:`DpEventComposition`: the ``(spec, count)`` pairs that have a certified
privacy-loss law (for :class:`sampledprv.Accountant`), the parts that only Renyi DP can
account (:class:`RdpPart`: zCDP, Poisson-subsampled zCDP, the multivariate discrete
Gaussian), and whether a ``NonPrivateDpEvent`` occurred.  Nothing is merged across the
two kinds silently:

* only PLD parts: :meth:`DpEventComposition.epsilon` is the analytic accountant's
  certified interval (:meth:`DpEventComposition.accountant` gives that accountant, to
  compose more steps into it);
* some Renyi parts: the upper end is the smaller of two certified bounds -- the whole
  composition by Renyi DP (when every PLD spec has a Renyi bound), and the
  ``(epsilon_1 + epsilon_2, delta_1 + delta_2)`` composition of the PLD part's certified
  upper end with the Renyi part's bound, minimised over a grid of splits
  :math:`\delta_1 + \delta_2 = \delta`.  The lower end is the PLD part's lower end (a
  composition is never more private than one of its parts), 0 without PLD parts;
* a ``NonPrivateDpEvent``: the upper end is infinite.

Each leaf event's mapping, and how tight it is, is listed in :attr:`DpEventComposition.mapping`
and in the table of the how-to "Coming from dp-accounting / Opacus".
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, Iterator, Optional, Tuple

import numpy as np

from ..analytic.accountant import Accountant
from ..core.interval import DETERMINISTIC, Interval
from ..core.validation import in_interval, nonnegative
from ..mechanisms import Mechanism, NeighbouringRelation
from ..mechanisms.relations import resolve_bounds
from ..rdp import DEFAULT_ORDERS, RdpAccountant, renyi_divergence

__all__ = ["DpEventComposition", "RdpPart"]

@dataclass(frozen=True)
class RdpPart:
    """A part that only Renyi DP accounts: ``count`` runs of a mechanism with Renyi bounds
    ``curve(order, direction)`` (``direction`` ``"remove"`` / ``"add"``, certified upper
    bounds in nats).  ``event`` is the dp-accounting event it came from (for
    :func:`to_dp_event`)."""

    label: str
    curve: Callable[[float, str], float]
    count: int = 1
    event: Any = None

    def times(self, count: int) -> "RdpPart":
        return RdpPart(self.label, self.curve, self.count * count, self.event)


@dataclass(frozen=True)
class DpEventComposition:
    """What :func:`sampledprv.from_dp_event` returns (module docstring).

    Attributes
    ----------
    neighbouring : NeighbouringRelation
        The relation every spec was mapped for.
    mechanisms : tuple of (Mechanism, int)
        Specs with a certified privacy-loss law and their counts (iterate the object to
        get them; ``sp.Accountant(neighbouring=...).compose(m, c)`` accounts them).
    rdp_parts : tuple of RdpPart
        Parts accounted by Renyi DP only.
    non_private : tuple of str
        The non-private events met (empty: the composition is private).
    mapping : tuple of str
        One line per leaf event: what it became and how tight that is.
    """

    neighbouring: NeighbouringRelation
    mechanisms: Tuple[Tuple[Mechanism, int], ...] = ()
    rdp_parts: Tuple[RdpPart, ...] = ()
    non_private: Tuple[str, ...] = ()
    mapping: Tuple[str, ...] = ()
    _cache: Dict[Any, Any] = field(default_factory=dict, compare=False, repr=False)

    def __iter__(self) -> Iterator[Tuple[Mechanism, int]]:
        return iter(self.mechanisms)

    @property
    def is_private(self) -> bool:
        return not self.non_private

    @property
    def pld_only(self) -> bool:
        """True when every part has a certified privacy-loss law (no Renyi parts)."""
        return not self.rdp_parts

    def accountant(self, eps_error: float = 0.01, delta_error: float = 1e-10,
                   **kwargs: Any):
        """A fresh :class:`sampledprv.Accountant` (``neighbouring`` set) with the PLD
        parts composed; refuses when Renyi-only or non-private parts exist (they are not
        in it: use :meth:`epsilon`)."""
        if self.non_private:
            raise ValueError(f"the composition contains {', '.join(self.non_private)}: it is "
                             "not differentially private (epsilon is infinite)")
        if self.rdp_parts:
            raise ValueError("the composition has parts that only Renyi DP accounts ("
                             + ", ".join(p.label for p in self.rdp_parts) + "); "
                             "DpEventComposition.epsilon() combines them with the PLD "
                             "part, an Accountant alone would leave them out")
        acc = Accountant(eps_error, delta_error, neighbouring=self.neighbouring, **kwargs)
        for m, c in self.mechanisms:
            acc.compose(m, c)
        return acc

    def rdp_accountant(self, orders: Optional[Iterable[float]] = None):
        """A :class:`sampledprv.rdp.RdpAccountant` with everything composed (the PLD specs
        through :func:`sampledprv.rdp.renyi_divergence` of their worst-case pair under
        :attr:`neighbouring`); raises :class:`ValueError` naming a spec without a Renyi
        bound."""
        acc = RdpAccountant(DEFAULT_ORDERS if orders is None else orders)
        for m, c in self.mechanisms:
            spec = resolve_bounds(m, self.neighbouring)[0]
            rem = [renyi_divergence(spec, a, "remove") for a in acc.orders]
            add = rem if spec.symmetric else [renyi_divergence(spec, a, "add")
                                                for a in acc.orders]
            acc.compose_rdp(rem, add, c)
        self._compose_rdp_parts(acc)
        return acc

    def _compose_rdp_parts(self, acc: Any) -> None:
        for part in self.rdp_parts:
            acc.compose_rdp([part.curve(a, "remove") for a in acc.orders],
                            [part.curve(a, "add") for a in acc.orders], part.count)

    # ---- queries ----------------------------------------------------------------------
    def epsilon(self, delta: float, *, eps_error: float = 0.01,
                delta_error: Optional[float] = None) -> Interval:
        """Certified interval for ``epsilon(delta)`` of the whole composition (module
        docstring).  ``delta_error`` defaults to ``min(1e-10, delta * 1e-5)``."""
        delta = in_interval("delta", delta, 0.0, 1.0, low_open=True, high_open=True,
                            hint="e.g. epsilon(1e-5)")
        de = min(1e-10, delta * 1e-5) if delta_error is None else delta_error
        pld = self._pld(eps_error, de)
        if self.non_private:
            low = pld.epsilon(delta).lower if pld is not None else 0.0
            return Interval(low, math.inf, math.inf, DETERMINISTIC, 1.0,
                            "non-private event in the composition: " + ", ".join(
                                self.non_private))
        if pld is None and not self.rdp_parts:
            return Interval(0.0, 0.0, 0.0, DETERMINISTIC, 1.0, "nothing composed (no-op events)")
        if not self.rdp_parts:
            return pld.epsilon(delta)
        return self._mixed_epsilon(pld, delta)

    def _pld(self, eps_error: float, delta_error: float):
        if not self.mechanisms:
            return None
        key = ("pld", eps_error, delta_error)
        if key not in self._cache:
            acc = Accountant(eps_error, delta_error, neighbouring=self.neighbouring)
            for m, c in self.mechanisms:
                acc.compose(m, c)
            self._cache[key] = acc
        return self._cache[key]

    def _rdp_only(self):
        if "rdp_parts" not in self._cache:
            acc = RdpAccountant()
            self._compose_rdp_parts(acc)
            self._cache["rdp_parts"] = acc
        return self._cache["rdp_parts"]

    def _mixed_epsilon(self, pld: Any, delta: float) -> Interval:
        rdp = self._rdp_only()
        candidates: Dict[str, float] = {}
        if pld is None:
            candidates["Renyi DP"] = rdp.epsilon(delta)
        else:
            try:
                candidates["Renyi DP of the whole composition"] = \
                    self.rdp_accountant().epsilon(delta)
            except ValueError:
                pass  # some PLD spec has no Renyi bound: the split bound alone
            best = math.inf
            for f in np.concatenate([np.geomspace(1e-3, 0.5, 12), 1.0 - np.geomspace(1e-3, 0.5, 12)[:-1]]):
                d1 = float(f) * delta
                try:
                    e1 = pld.epsilon(d1).upper
                except ValueError:
                    continue        # below the PLD accountant's resolution at this split
                best = min(best, e1 + rdp.epsilon(delta - d1))
            candidates["PLD part + Renyi part, (eps1 + eps2, delta1 + delta2) over delta splits"] = best
        how, upper = min(candidates.items(), key=lambda kv: kv[1])
        lower = min(pld.epsilon(delta).lower, upper) if pld is not None else 0.0
        return Interval(lower, upper, upper, DETERMINISTIC, 1.0,
                        f"upper end: {how}; lower end: "
                        + ("the PLD part's certified lower end" if pld is not None else "0")
                        + "; the estimate is the upper end",
                        {"candidates": candidates})

    def delta(self, epsilon: float, *, eps_error: float = 0.01,
              delta_error: float = 1e-12) -> Interval:
        """Certified interval for ``delta(epsilon)``; with Renyi parts the upper end is the
        whole composition's Renyi bound (refused when a PLD spec has none)."""
        epsilon = nonnegative("epsilon", epsilon)
        pld = self._pld(eps_error, delta_error)
        if self.non_private:
            return Interval(pld.delta(epsilon).lower if pld is not None else 0.0, 1.0, 1.0,
                            DETERMINISTIC, 1.0, "non-private event in the composition")
        if pld is None and not self.rdp_parts:
            return Interval(0.0, 0.0, 0.0, DETERMINISTIC, 1.0, "nothing composed")
        if not self.rdp_parts:
            return pld.delta(epsilon)
        up = (self.rdp_accountant() if pld is not None else self._rdp_only()).delta(epsilon)
        low = min(pld.delta(epsilon).lower, up) if pld is not None else 0.0
        return Interval(low, up, up, DETERMINISTIC, 1.0, "upper end: Renyi DP of the whole "
                        "composition; lower end: the PLD part's")

    def __repr__(self) -> str:
        parts = [f"{m!r} x{c}" for m, c in self.mechanisms]
        parts += [f"{p.label} x{p.count} (Renyi)" for p in self.rdp_parts]
        parts += list(self.non_private)
        return (f"DpEventComposition(neighbouring={self.neighbouring.value!r}; "
                + ("; ".join(parts) or "empty") + ")")
