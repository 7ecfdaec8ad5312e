r"""dp-accounting's ``DpEvent`` trees in and out: :func:`from_dp_event`, :func:`to_dp_event`.

dp-accounting (``pip install 'sampledprv[dp-accounting]'``) is never imported to *read*
an event: events are matched by class name (walking the class's MRO), so events of
newer dp-accounting versions (``EpsilonDeltaDpEvent``, ``DiscreteGaussianDpEvent``,
``ExponentialMechanismDpEvent``, ``PermuteAndFlipDpEvent``) work with any install, and
any object whose class has the right name and fields is accepted.  :func:`to_dp_event`
imports ``dp_accounting`` to build events.

Sensitivity convention (the REPLACE_ONE pitfall, google/differential-privacy#378)
---------------------------------------------------------------------------------
A dp-accounting ``GaussianDpEvent(noise_multiplier=z)`` adds :math:`N(0, s^2)` to a sum of
records with norms :math:`\|v_i\| \le C` and ``z = s / C``.  It becomes
``Gaussian(sigma=z, sensitivity=1)``: units of ``C``, with ``sensitivity`` the per-record
(add/remove) bound as everywhere in sampledprv.  ``neighbouring="replace_one"`` (or
dp-accounting's ``NeighboringRelation.REPLACE_ONE``) is our substitution relation, under
which a sum moves by up to :math:`2C` (``+C`` replaced by ``-C``): the accountants use
sensitivity ``2`` there, exactly as dp-accounting's PLD accountant does
(``AdjacencyType.REPLACE``).  dp-accounting's RDP accountant instead feeds ``z`` to
formulas normalised by the L2 sensitivity of the sum, so under REPLACE_ONE its Renyi
bounds are those of sensitivity ``C`` -- four times too small.  The same holds for the
noise of every additive event (Laplace, discrete Laplace, discrete Gaussian, tree
aggregation, and sampled events): its parameter is relative to the per-record bound.
``REPLACE_SPECIAL`` (a record replaced by a neutral one) is accounted as add/remove:
for additive noise the two pairs coincide, and for randomized response the
changed-value pair dominates the pair with the uniform "special" output (the uniform
law is the average of the outputs on all values; joint convexity).

What :func:`from_dp_event` returns
----------------------------------
A :class:`DpEventComposition`: the ``(spec, count)`` pairs that have a certified
privacy-loss law (for :class:`sampledprv.Accountant`), the parts that only Renyi DP can
account (zCDP, Poisson-subsampled zCDP, the multivariate discrete Gaussian), and whether
a ``NonPrivateDpEvent`` occurred.  Nothing is merged across the two kinds silently:

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
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Tuple

import numpy as np

from ..analytic.accountant import Accountant
from ..core.interval import DETERMINISTIC, Interval
from ..core.validation import in_interval, nonnegative, positive_int
from ..mechanisms import (ApproxDP, DiscreteGaussian, DiscreteLaplace, FixedSizeSubsampled,
                          Gaussian, KaryRandomizedResponse, Laplace, Mechanism,
                          NeighbouringRelation, PoissonSubsampled, PureDP, RandomizedResponse)
from ..mechanisms.base import as_relation
from ..mechanisms.laws import privacy_loss
from ..mechanisms._mixtures import MixtureOfGaussians, TaggedMixture
from ..mechanisms.relations import resolve_bounds, resolve_relation
from ..mechanisms.substitution import GaussianMixturePair, _as_gaussian
from ..rdp import DEFAULT_ORDERS, RdpAccountant, renyi_divergence
from ..rdp.subsampled import (chord_bound, integer_order, subsampled_fractional_bound,
                              subsampled_general_bound, subsampled_remove_bound)
from .repeat_select import repeat_and_select_rdp

__all__ = ["from_dp_event", "to_dp_event", "DpEventComposition", "RdpPart", "SUPPORTED_EVENTS"]


# ---- the neighbouring relation ----------------------------------------------------------------
_DPA_RELATIONS = {"ADD_OR_REMOVE_ONE": NeighbouringRelation.ADD_REMOVE,
                  "REPLACE_ONE": NeighbouringRelation.SUBSTITUTE,
                  "REPLACE_SPECIAL": NeighbouringRelation.ADD_REMOVE}


def _relation(value: object) -> NeighbouringRelation:
    """Our relation from ours, its strings, or dp-accounting's ``NeighboringRelation``."""
    name = getattr(value, "name", None)
    if type(value).__name__ == "NeighboringRelation" and name in _DPA_RELATIONS:
        return _DPA_RELATIONS[name]
    if isinstance(value, str) and value.strip().upper() in _DPA_RELATIONS:
        return _DPA_RELATIONS[value.strip().upper()]
    try:
        return as_relation(value)
    except ValueError:
        raise ValueError(
            "neighbouring must be 'add_remove', 'replace_one' (= 'substitute'), "
            "'replace_special' (accounted as add/remove), a sampledprv.NeighbouringRelation "
            f"or a dp_accounting.NeighboringRelation, got {value!r}") from None


# ---- the result ---------------------------------------------------------------------------------
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
    """What :func:`from_dp_event` returns (module docstring, "What from_dp_event returns").

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


# ---- reading events -------------------------------------------------------------------------------
class _Walk:
    """Accumulates the parts of a composition while walking an event tree."""

    def __init__(self, relation: NeighbouringRelation) -> None:
        self.relation = relation
        self.mechanisms: Dict[Mechanism, int] = {}
        self.rdp: List[RdpPart] = []
        self.non_private: List[str] = []
        self.mapping: List[str] = []

    def add(self, spec: Mechanism, count: int, event: Any, note: str) -> None:
        _check_supported(spec, self.relation, event)
        self.mechanisms[spec] = self.mechanisms.get(spec, 0) + count
        self.mapping.append(f"{_name(event)} x{count} -> {spec!r} ({note})")


def _name(event: Any) -> str:
    return type(event).__name__


def _names(event: Any) -> Tuple[str, ...]:
    return tuple(c.__name__ for c in type(event).__mro__)


def _kind(event: Any) -> Optional[str]:
    for n in _names(event):
        if n in SUPPORTED_EVENTS or n in _REFUSED:
            return n
    return None


def _refuse(event: Any, why: str) -> ValueError:
    return ValueError(f"{_name(event)} cannot be accounted by sampledprv: {why} (event: "
                      f"{event!r})")


def _check_supported(spec: Mechanism, relation: NeighbouringRelation, event: Any) -> None:
    try:
        for r in resolve_bounds(spec, relation):
            privacy_loss(r, "remove")
    except (TypeError, ValueError) as exc:
        raise _refuse(event, f"under the neighbouring relation {relation.value!r} its "
                      f"sampledprv spec {spec!r} is refused: {exc}") from None


def _positive_count(event: Any, value: Any, name: str) -> int:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 0:
        raise ValueError(f"{_name(event)}.{name} must be an integer >= 0, got {value!r}")
    return int(value)


def _noise(event: Any, value: Any, name: str) -> float:
    x = float(value)
    if not x >= 0.0:
        raise ValueError(f"{_name(event)}.{name} must be >= 0, got {value!r}")
    return x


# additive leaves: event -> spec (None: no-op; "nonprivate"), with the tightness note
def _leaf(event: Any, relation: NeighbouringRelation) -> Tuple[Any, str]:
    kind = _kind(event)
    if kind == "GaussianDpEvent":
        z = _noise(event, event.noise_multiplier, "noise_multiplier")
        if z == 0.0:
            return "nonprivate", ""
        return Gaussian(sigma=z, sensitivity=1.0), "exact PLD"
    if kind == "LaplaceDpEvent":
        b = _noise(event, event.noise_multiplier, "noise_multiplier")
        if b == 0.0:
            return "nonprivate", ""
        return Laplace(scale=b, sensitivity=1.0), "exact PLD"
    if kind == "DiscreteLaplaceDpEvent":
        a = _noise(event, event.noise_parameter, "noise_parameter")
        if a == 0.0:
            return "nonprivate", ""
        return DiscreteLaplace(scale=1.0 / a, sensitivity=event.sensitivity), "exact PLD"
    if kind == "DiscreteGaussianDpEvent":
        s = _noise(event, event.sigma, "sigma")
        sens = float(getattr(event, "sensitivity", 1.0))
        dim = getattr(event, "dimension", None)
        if s == 0.0:
            return "nonprivate", ""
        if dim == 1 and sens.is_integer() and sens > 0:
            return DiscreteGaussian(sigma=s, sensitivity=int(sens)), "exact PLD"
        # multivariate (or unknown dimension): (Delta^2 / 2 sigma^2)-zCDP, Canonne, Kamath
        # and Steinke 2020 (Thm 14); sensitivity doubled under substitution
        d = sens * (2.0 if relation is NeighbouringRelation.SUBSTITUTE else 1.0)
        rho = d * d / (2.0 * s * s)
        return _zcdp_part(rho, 0.0, event, f"DiscreteGaussian(sigma={s:g}, sensitivity={sens:g}, "
                          f"dimension={dim}) as {rho:.6g}-zCDP"), \
            "Renyi DP (zCDP bound of the multivariate discrete Gaussian)"
    if kind == "RandomizedResponseDpEvent":
        p = float(event.noise_parameter)
        k = _positive_count(event, event.num_buckets, "num_buckets")
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"RandomizedResponseDpEvent.noise_parameter must lie in [0, 1], "
                             f"got {p!r}")
        if k <= 1 or p == 1.0:
            return None, ""
        if p == 0.0:
            return "nonprivate", ""
        eps = math.log1p(k * (1.0 - p) / p)
        return KaryRandomizedResponse(k=k, epsilon=eps), \
            "exact PLD (the pair of one changed value, under either relation)"
    if kind == "EpsilonDeltaDpEvent":
        eps, dl = float(event.epsilon), float(event.delta)
        if math.isinf(eps) or dl >= 1.0:
            return "nonprivate", ""
        spec = ApproxDP(eps, dl) if dl > 0 else PureDP(eps)
        return spec, "worst case of any (epsilon, delta)-DP mechanism (tight for the guarantee)"
    if kind in ("ExponentialMechanismDpEvent", "PermuteAndFlipDpEvent"):
        eps = float(event.epsilon)
        if math.isinf(eps):
            return "nonprivate", ""
        return PureDP(eps), ("worst case of any epsilon-DP mechanism (randomized response); "
                             "tight for the guarantee, not for the mechanism")
    raise KeyError(kind)


def _zcdp_curve(rho: float, xi: float) -> Callable[[float, str], float]:
    return lambda a, d: xi + rho * a


def _zcdp_part(rho: float, xi: float, event: Any, label: str) -> RdpPart:
    return RdpPart(label, _zcdp_curve(rho, xi), 1, event)


def _sampled_zcdp_part(q: float, rho: float, xi: float, event: Any) -> RdpPart:
    """Poisson-subsampled (xi, rho)-zCDP under add/remove: the binomial expansion (remove)
    and Zhu & Wang 2019 Thm 6 (add), from the base bound ``xi + rho k`` which holds in both
    directions (:mod:`sampledprv.rdp.subsampled`); at other orders the smaller of the next
    integer's bound and the chord between the neighbouring integers (and, remove
    direction, the bound for orders in (1, 2))."""
    base = lambda k: xi + rho * k  # noqa: E731

    def curve(a: float, d: str) -> float:
        alpha = integer_order(a)
        whole = (lambda k: subsampled_remove_bound(k, q, base)) if d == "remove" else \
            (lambda k: subsampled_general_bound(k, q, base))
        best = whole(alpha)
        if a == alpha:
            return best
        if a > 2.0:
            best = min(best, chord_bound(a, whole))
        elif d == "remove" and q < 1.0:
            best = min(best, subsampled_fractional_bound(a, q, base(a)))
        return best
    return RdpPart(f"PoissonSampled(q={q:g}, ZCDp(rho={rho:g}, xi={xi:g}))", curve, 1, event)


def _merged_gaussian(event: Any) -> Optional[float]:
    """The noise multiplier of a (self-)composition of Gaussians, ``(sum z_i^-2)^-1/2``
    (adaptive Gaussian compositions on one sample are exactly one Gaussian); ``None`` if
    the tree holds anything else."""
    total = 0.0

    def walk(e: Any, c: int) -> bool:
        nonlocal total
        k = _kind(e)
        if k == "GaussianDpEvent":
            z = float(e.noise_multiplier)
            total += math.inf if z == 0 else c / (z * z)
            return True
        if k == "SelfComposedDpEvent":
            return walk(e.event, c * int(e.count))
        if k == "ComposedDpEvent":
            return all(walk(x, c) for x in e.events)
        if k == "NoOpDpEvent":
            return True
        return False
    if not walk(event, 1):
        return None
    return 0.0 if math.isinf(total) else (math.inf if total == 0 else 1.0 / math.sqrt(total))


def _inner_spec(event: Any, outer: Any, relation: NeighbouringRelation) -> Tuple[Any, str]:
    """The spec of the event run on a sample (a leaf, or a composition of Gaussians)."""
    kind = _kind(event)
    if kind in ("ComposedDpEvent", "SelfComposedDpEvent", "GaussianDpEvent", "NoOpDpEvent"):
        z = _merged_gaussian(event)
        if z is not None:
            if z == 0.0:
                return "nonprivate", ""
            if math.isinf(z):
                return None, ""
            return Gaussian(sigma=z, sensitivity=1.0), "exact PLD"
    if kind in ("ComposedDpEvent", "SelfComposedDpEvent"):
        raise _refuse(outer, "its inner event is a composition of other events than "
                      "GaussianDpEvent; sampledprv accounts a sampled event whose inner event is "
                      "one mechanism (or Gaussians, which compose into one)")
    if kind in _ADDITIVE_LEAVES:
        spec, note = _leaf(event, relation)
        if isinstance(spec, RdpPart):
            raise _refuse(outer, f"its inner {_name(event)} is accounted by Renyi DP only "
                          "(no certified subsampled bound for it here)")
        return spec, note
    if kind == "NonPrivateDpEvent":
        return "nonprivate", ""
    raise _refuse(outer, f"its inner event {_name(event)} is not supported inside a sampled "
                  "event (supported: Gaussian, Laplace, DiscreteLaplace, DiscreteGaussian, "
                  "RandomizedResponse, EpsilonDelta, ExponentialMechanism, PermuteAndFlip, "
                  "compositions of Gaussians, and ZCDp inside PoissonSampled)")


def _walk(event: Any, count: int, w: _Walk) -> None:
    kind = _kind(event)
    if kind is None:
        raise ValueError(
            f"from_dp_event: unknown event type {_name(event)} ({event!r}); supported: "
            + ", ".join(sorted(SUPPORTED_EVENTS)))
    if kind in _REFUSED:
        raise _refuse(event, _REFUSED[kind])
    if count == 0 or kind == "NoOpDpEvent":
        w.mapping.append(f"{_name(event)} -> nothing (no privacy cost)")
        return
    if kind == "NonPrivateDpEvent":
        w.non_private.append(_name(event))
        return
    if kind == "SelfComposedDpEvent":
        _walk(event.event, count * _positive_count(event, event.count, "count"), w)
        return
    if kind == "ComposedDpEvent":
        for e in event.events:
            _walk(e, count, w)
        return
    if kind == "ZCDpEvent":
        rho, xi = float(event.rho), float(event.xi)
        if not (rho >= 0 and xi >= 0):
            raise ValueError(f"ZCDpEvent needs rho >= 0 and xi >= 0, got rho={rho!r}, xi={xi!r}")
        if rho == 0 and xi == 0:
            return
        w.rdp.append(_zcdp_part(rho, xi, event, f"ZCDp(rho={rho:g}, xi={xi:g})").times(count))
        w.mapping.append(f"ZCDpEvent x{count} -> Renyi curve xi + rho*alpha (Renyi DP only)")
        return
    if kind == "RepeatAndSelectDpEvent":
        part = _repeat_and_select(event, w.relation)
        if part is None:
            w.non_private.append(_name(event))
            return
        w.rdp.append(part.times(count))
        w.mapping.append(f"RepeatAndSelectDpEvent x{count} -> Papernot-Steinke Renyi bound "
                         "of the inner event (Renyi DP only)")
        return
    if kind == "SingleEpochTreeAggregationDpEvent":
        z = _noise(event, event.noise_multiplier, "noise_multiplier")
        steps = event.step_counts
        steps = [steps] if np.isscalar(steps) else list(steps)
        if not steps:
            raise ValueError("SingleEpochTreeAggregationDpEvent.step_counts must be a non-empty "
                             f"list or a scalar, got {event.step_counts!r}")
        depth = math.ceil(math.log2(max(_positive_count(event, s, "step_counts")
                                        for s in steps) + 1))
        if depth == 0:
            return
        if z == 0.0:
            w.non_private.append(_name(event))
            return
        # every record is in one leaf, so in at most `depth` nodes, each with sensitivity C:
        # the released node sums are one Gaussian mechanism of L2 sensitivity sqrt(depth) C
        w.add(Gaussian(sigma=z, sensitivity=math.sqrt(depth)), count, event,
              f"exact PLD: {depth} tree levels are one Gaussian of sensitivity sqrt({depth})")
        return
    if kind == "PoissonSampledDpEvent":
        q = float(event.sampling_probability)
        if not 0.0 <= q <= 1.0:
            raise ValueError(f"PoissonSampledDpEvent.sampling_probability must lie in [0, 1], "
                             f"got {q!r}")
        if q == 0.0:
            return
        if _kind(event.event) == "ZCDpEvent":
            if w.relation is not NeighbouringRelation.ADD_REMOVE:
                raise _refuse(event, "Poisson subsampling of a zCDP guarantee is bounded here "
                              "under add/remove only (the substitution pair of a black-box "
                              "mechanism has no certified Renyi bound in sampledprv)")
            rho, xi = float(event.event.rho), float(event.event.xi)
            w.rdp.append(_sampled_zcdp_part(q, rho, xi, event).times(count))
            w.mapping.append(f"PoissonSampledDpEvent(ZCDp) x{count} -> subsampled Renyi "
                             "bound (Renyi DP only)")
            return
        inner, note = _inner_spec(event.event, event, w.relation)
        if inner is None:
            return
        if inner == "nonprivate":
            w.non_private.append(_name(event))
            return
        spec = inner if q == 1.0 else PoissonSubsampled(inner, q)
        w.add(spec, count, event, note)
        return
    if kind == "SampledWithoutReplacementDpEvent":
        n = _positive_count(event, event.source_dataset_size, "source_dataset_size")
        m = _positive_count(event, event.sample_size, "sample_size")
        if m == 0:
            return
        if m > n:
            raise ValueError(f"SampledWithoutReplacementDpEvent.sample_size ({m}) exceeds "
                             f"source_dataset_size ({n})")
        inner, note = _inner_spec(event.event, event, w.relation)
        if inner is None:
            return
        if inner == "nonprivate":
            w.non_private.append(_name(event))
            return
        if w.relation is NeighbouringRelation.ADD_REMOVE:
            raise _refuse(event, "a fixed sample size is defined for datasets of one size, so "
                          "it is accounted under REPLACE_ONE only (neighbouring='replace_one'), "
                          "as dp-accounting does")
        w.add(FixedSizeSubsampled(inner, m, n), count, event,
              "certified interval: upper end from the symmetric dominating pair (Dong, Roth, "
              "Su Thm 4.2), lower end attained")
        return
    if kind == "MixtureOfGaussiansDpEvent":
        s = _noise(event, event.standard_deviation, "standard_deviation")
        sens = [float(c) for c in event.sensitivities]
        if all(c == 0.0 for c in sens):
            return
        if s == 0.0:
            w.non_private.append(_name(event))
            return
        if w.relation is not NeighbouringRelation.ADD_REMOVE:
            raise _refuse(event, "the mixture pair describes one added or removed record; "
                          "account it under add/remove (as dp-accounting's PLD accountant does)")
        w.add(MixtureOfGaussians(s, tuple(sens), tuple(float(p) for p in event.sampling_probs)),
              count, event, "exact PLD of the stated pair")
        return
    if kind == "TruncatedSubsampledGaussianDpEvent":
        spec = _truncated(event, w.relation)
        if spec is None:
            return
        if spec == "nonprivate":
            w.non_private.append(_name(event))
            return
        w.add(spec, count, event, "PLD of dp-accounting's tagged mixture (arXiv:2508.15089, "
              "Sec. 4.3); certified given that paper's bound")
        return
    # additive leaves
    spec, note = _leaf(event, w.relation)
    if spec is None:
        w.mapping.append(f"{_name(event)} -> nothing (no privacy cost)")
    elif spec == "nonprivate":
        w.non_private.append(_name(event))
    elif isinstance(spec, RdpPart):
        w.rdp.append(spec.times(count))
        w.mapping.append(f"{_name(event)} x{count} -> {spec.label} ({note})")
    else:
        w.add(spec, count, event, note)


def _repeat_and_select(event: Any, relation: NeighbouringRelation) -> Optional[RdpPart]:
    """Papernot and Steinke (2022) from the inner event's whole Renyi curve (the larger of
    the two directions at every order), :mod:`sampledprv.interop.repeat_select`."""
    inner = from_dp_event(event.event, relation)
    if inner.non_private:
        return None
    try:
        acc = inner.rdp_accountant()
    except ValueError as exc:
        raise _refuse(event, f"its inner event has no Renyi bound in sampledprv ({exc})") \
            from None
    orders = np.array(acc.orders)
    rdp = np.maximum(*acc.rdp.values())
    out = repeat_and_select_rdp(orders, rdp, float(event.mean), float(event.shape))

    def curve(a: float, d: str) -> float:
        i = int(np.searchsorted(orders, a - 1e-12))
        return float(out[i]) if i < orders.size else math.inf
    return RdpPart(f"RepeatAndSelect(mean={float(event.mean):g}, shape={float(event.shape):g})",
                   curve, 1, event)


def _truncated(event: Any, relation: NeighbouringRelation) -> Any:
    """dp-accounting's pair for truncated Poisson sampling: with the probability ``t`` that
    the other records alone fill the batch, a substitution-like pair of shift 2 at the
    conditional rate; otherwise the Poisson-subsampled Gaussian."""
    from scipy import stats

    n = _positive_count(event, event.dataset_size, "dataset_size")
    q = float(event.sampling_probability)
    b = _positive_count(event, event.truncated_batch_size, "truncated_batch_size")
    z = _noise(event, event.noise_multiplier, "noise_multiplier")
    if not 0.0 <= q <= 1.0:
        raise ValueError("TruncatedSubsampledGaussianDpEvent.sampling_probability must lie in "
                         f"[0, 1], got {q!r}")
    if q == 0.0 or b == 0 or n == 0:
        return None
    if z == 0.0:
        return "nonprivate"
    base = resolve_relation(PoissonSubsampled(Gaussian(z), q) if q < 1.0 else Gaussian(z),
                            relation)
    t = float(stats.binom.sf(b - 1, n - 1, q))
    if t == 0.0:
        return base
    q2 = float(stats.binom.sf(b, n, q)) * b / t / n
    q2 = min(max(q2, 1e-300), 1.0)
    return TaggedMixture((1.0 - t, t), (base, GaussianMixturePair(2.0 / z, q2)), relation,
                         label=f"TruncatedSubsampledGaussian(n={n}, q={q!r}, B={b}, z={z!r})")


_ADDITIVE_LEAVES = ("GaussianDpEvent", "LaplaceDpEvent", "DiscreteLaplaceDpEvent",
                    "DiscreteGaussianDpEvent", "RandomizedResponseDpEvent", "EpsilonDeltaDpEvent",
                    "ExponentialMechanismDpEvent", "PermuteAndFlipDpEvent")

#: event class names :func:`from_dp_event` accounts
SUPPORTED_EVENTS = frozenset(_ADDITIVE_LEAVES + (
    "NoOpDpEvent", "NonPrivateDpEvent", "ComposedDpEvent", "SelfComposedDpEvent",
    "ZCDpEvent", "PoissonSampledDpEvent", "SampledWithoutReplacementDpEvent",
    "SingleEpochTreeAggregationDpEvent", "MixtureOfGaussiansDpEvent",
    "TruncatedSubsampledGaussianDpEvent", "RepeatAndSelectDpEvent"))

#: event class names refused, with the reason
_REFUSED = {
    "UnsupportedDpEvent": "it stands for an operation without any privacy description",
    "SampledWithReplacementDpEvent": (
        "a record can occur several times in a batch drawn with replacement, and sampledprv "
        "has no certified PLD or Renyi bound for that sampler (dp-accounting has none "
        "either); use PoissonSampledDpEvent or SampledWithoutReplacementDpEvent if that is "
        "what the pipeline does"),
}


def from_dp_event(event: Any, neighbouring: object = "add_remove") -> DpEventComposition:
    r"""The sampledprv composition of a dp-accounting ``DpEvent`` tree.

    Parameters
    ----------
    event : dp_accounting.DpEvent
        Any event tree (matched by class name, so dp-accounting need not be importable
        here and events newer than the installed version are read too).
    neighbouring : str, NeighbouringRelation or dp_accounting.NeighboringRelation
        ``"add_remove"`` (dp-accounting's ``ADD_OR_REMOVE_ONE``, the default),
        ``"replace_one"`` / ``"substitute"`` (``REPLACE_ONE``), or ``"replace_special"``
        (accounted as add/remove).  Noise parameters are relative to the per-record bound
        ``C``; under ``REPLACE_ONE`` a sum moves by up to ``2C`` and the accountants use
        that (module docstring: dp-accounting's RDP accountant does not).

    Returns
    -------
    DpEventComposition
        The PLD parts (iterate it for ``(spec, count)`` pairs; ``.accountant()`` composes
        them into a :class:`sampledprv.Accountant`), the Renyi-only parts and the
        non-private events; ``.epsilon(delta)`` accounts all of them honestly.

    Raises
    ------
    ValueError
        For an unknown event (naming its class), ``UnsupportedDpEvent``,
        ``SampledWithReplacementDpEvent`` and ``RepeatAndSelectDpEvent`` (naming the event
        and why), and events the relation cannot certify.

    Examples
    --------
    >>> import sampledprv as sp
    >>> from dp_accounting import dp_event as de   # doctest: +SKIP
    >>> e = de.SelfComposedDpEvent(de.PoissonSampledDpEvent(0.01, de.GaussianDpEvent(1.0)), 1000)
    >>> sp.from_dp_event(e).epsilon(1e-5)         # doctest: +SKIP
    """
    w = _Walk(_relation(neighbouring))
    _walk(event, 1, w)
    return DpEventComposition(w.relation, tuple(w.mechanisms.items()), tuple(w.rdp),
                              tuple(w.non_private), tuple(w.mapping))


# ---- writing events ---------------------------------------------------------------------------
def _dpa():
    try:
        from dp_accounting import dp_event
    except ImportError as exc:
        raise ImportError("to_dp_event needs dp-accounting: pip install "
                          "'sampledprv[dp-accounting]'") from exc
    return dp_event


def _event_class(module: Any, name: str, spec: Any) -> Any:
    cls = getattr(module, name, None)
    if cls is None:
        raise ValueError(f"to_dp_event: {type(spec).__name__} ({spec!r}) maps to {name}, which "
                         "the installed dp-accounting does not have (newer than 0.6.0)")
    return cls


def _spec_event(spec: Mechanism, de: Any) -> Any:
    g = _as_gaussian(spec)
    if g is not None:
        return de.GaussianDpEvent(noise_multiplier=g.sigma / g.sensitivity)
    if isinstance(spec, Laplace):
        return de.LaplaceDpEvent(noise_multiplier=spec.scale / spec.sensitivity)
    if isinstance(spec, DiscreteLaplace):
        return de.DiscreteLaplaceDpEvent(noise_parameter=1.0 / spec.scale,
                                         sensitivity=int(spec.sensitivity))
    if isinstance(spec, DiscreteGaussian):
        cls = _event_class(de, "DiscreteGaussianDpEvent", spec)
        return cls(sigma=spec.sigma, sensitivity=float(spec.sensitivity), dimension=1)
    if isinstance(spec, KaryRandomizedResponse):
        return de.RandomizedResponseDpEvent(
            noise_parameter=spec.k / (math.exp(spec.epsilon) + spec.k - 1), num_buckets=spec.k)
    if isinstance(spec, RandomizedResponse) and spec.p >= 0.5:
        return de.RandomizedResponseDpEvent(noise_parameter=2.0 * (1.0 - spec.p), num_buckets=2)
    if isinstance(spec, PureDP) or (isinstance(spec, ApproxDP) and spec.delta == 0):
        cls = _event_class(de, "EpsilonDeltaDpEvent", spec)
        return cls(epsilon=spec.epsilon, delta=0.0)
    if isinstance(spec, ApproxDP):
        cls = _event_class(de, "EpsilonDeltaDpEvent", spec)
        return cls(epsilon=spec.epsilon, delta=spec.delta)
    if isinstance(spec, PoissonSubsampled):
        return de.PoissonSampledDpEvent(sampling_probability=spec.q,
                                        event=_spec_event(spec.mechanism, de))
    if isinstance(spec, FixedSizeSubsampled):
        return de.SampledWithoutReplacementDpEvent(
            source_dataset_size=spec.dataset_size, sample_size=spec.batch_size,
            event=_spec_event(spec.mechanism, de))
    if isinstance(spec, MixtureOfGaussians):
        return de.MixtureOfGaussiansDpEvent(standard_deviation=spec.sigma,
                                            sensitivities=list(spec.sensitivities),
                                            sampling_probs=list(spec.probs))
    if isinstance(spec, TaggedMixture) and spec.label.startswith("TruncatedSubsampledGaussian"):
        raise ValueError(f"to_dp_event: {spec!r} is a resolved pair; pass the "
                         "DpEventComposition it came from (its events are kept)")
    raise ValueError(f"to_dp_event: {type(spec).__name__} ({spec!r}) has no dp-accounting "
                     "counterpart; supported: Gaussian, Laplace, DiscreteLaplace, "
                     "DiscreteGaussian, KaryRandomizedResponse, RandomizedResponse (p >= 1/2), "
                     "PureDP, ApproxDP, PoissonSubsampled and FixedSizeSubsampled of these, "
                     "MixtureOfGaussians")


def to_dp_event(composition: Any) -> Any:
    """A dp-accounting ``DpEvent`` describing ``composition``, to check our numbers with
    dp-accounting's accountants.

    Parameters
    ----------
    composition : DpEventComposition, Accountant, Mechanism or iterable
        What :func:`from_dp_event` returned (its Renyi-only parts and non-private events
        are written back as the events they came from), an accountant with a
        ``composition`` attribute, one spec, or ``(spec, count)`` pairs / specs.

    Returns
    -------
    dp_accounting.DpEvent
        One event, ``SelfComposedDpEvent`` for a count above 1, ``ComposedDpEvent`` for
        several parts.  The neighbouring relation is not part of an event: give the
        dp-accounting accountant the same relation.

    Raises
    ------
    ValueError
        Naming the first spec without a dp-accounting counterpart.
    """
    de = _dpa()
    extra: List[Any] = []
    if isinstance(composition, DpEventComposition):
        pairs = list(composition.mechanisms)
        for part in composition.rdp_parts:
            if part.event is None:
                raise ValueError(f"to_dp_event: Renyi part {part.label} has no event")
            extra.append(part.event if part.count == 1 else
                         de.SelfComposedDpEvent(event=part.event, count=part.count))
        extra += [de.NonPrivateDpEvent() for _ in composition.non_private]
        tagged = [(m, c) for m, c in pairs if type(m).__name__ == "TaggedMixture"]
        for m, c in tagged:
            pairs.remove((m, c))
            ev = _tagged_event(m, de)
            extra.append(ev if c == 1 else de.SelfComposedDpEvent(event=ev, count=c))
    elif isinstance(composition, Mechanism):
        pairs = [(composition, 1)]
    elif hasattr(composition, "composition"):
        pairs = list(composition.composition)
    else:
        pairs = _given_pairs(composition)
    events = []
    for m, c in pairs:
        if not isinstance(m, Mechanism):
            raise ValueError(f"to_dp_event: expected sampledprv mechanism specs, got {m!r}")
        c = _count(m, c)
        ev = _spec_event(m, de)
        events.append(ev if c == 1 else de.SelfComposedDpEvent(event=ev, count=c))
    events += extra
    if not events:
        return de.NoOpDpEvent()
    return events[0] if len(events) == 1 else de.ComposedDpEvent(events=events)


_WHAT = ("a DpEventComposition, an accountant, one mechanism spec (e.g. sp.Gaussian(1.0)) "
         "or an iterable of specs and (spec, count) pairs")


def _given_pairs(composition: Any) -> List[Tuple[Any, Any]]:
    """``(spec, count)`` pairs of an iterable given to :func:`to_dp_event`; anything else
    is refused with a :class:`ValueError` that says what is accepted."""
    if composition is None or isinstance(composition, (str, bytes)) or \
            not hasattr(composition, "__iter__"):
        hint = ""
        if hasattr(composition, "logp") or hasattr(composition, "sample_remove"):
            hint = ("; a LogDensityPair or PrivacyLossSampler is known only through its "
                    "samples and has no dp-accounting event")
        raise ValueError(f"to_dp_event: composition must be {_WHAT}, got "
                         f"{type(composition).__name__} {composition!r:.80}{hint}")
    pairs = []
    for x in composition:
        if isinstance(x, Mechanism):
            pairs.append((x, 1))
            continue
        try:
            m, c = x
        except (TypeError, ValueError):
            raise ValueError(f"to_dp_event: each item must be a mechanism spec or a (spec, "
                             f"count) pair, got {x!r:.80}") from None
        pairs.append((m, c))
    return pairs


def _count(spec: Any, count: Any) -> int:
    """A composition count as a positive int (``ValueError`` for ``-1``, ``0``, ``2.5``)."""
    try:
        return positive_int("count", count)
    except ValueError as err:
        raise ValueError(f"to_dp_event: the count of {spec!r}: {err}; a composition count "
                         "is a number of runs") from None


def _tagged_event(spec: Any, de: Any) -> Any:
    label = spec.label
    if not label.startswith("TruncatedSubsampledGaussian("):
        raise ValueError(f"to_dp_event: {spec!r} has no dp-accounting counterpart")
    fields = dict(kv.split("=") for kv in label[len("TruncatedSubsampledGaussian("):-1]
                  .split(", "))
    return de.TruncatedSubsampledGaussianDpEvent(
        dataset_size=int(fields["n"]), sampling_probability=float(fields["q"]),
        truncated_batch_size=int(fields["B"]), noise_multiplier=float(fields["z"]))
