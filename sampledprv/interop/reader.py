r"""Reading dp-accounting's ``DpEvent`` trees: :func:`from_dp_event`.

dp-accounting (``pip install 'sampledprv[dp-accounting]'``) is never imported to *read*
an event: events are matched by class name (walking the class's MRO), so events of
newer dp-accounting versions (``EpsilonDeltaDpEvent``, ``DiscreteGaussianDpEvent``,
``ExponentialMechanismDpEvent``, ``PermuteAndFlipDpEvent``) work with any install, and
any object whose class has the right name and fields is accepted.  The walk is a
dispatch table, :data:`_HANDLERS` (event class name -> one small function), plus the
additive leaves of :data:`sampledprv.interop.leaf_events.LEAF_SPECS`: a new event kind is
one entry in either.

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

What it returns is a :class:`~sampledprv.interop.composition.DpEventComposition`
(:mod:`sampledprv.interop.composition`).
"""

from __future__ import annotations

import math
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from ..mechanisms import (FixedSizeSubsampled, Gaussian, Mechanism, NeighbouringRelation,
                          PoissonSubsampled)
from ..mechanisms._mixtures import MixtureOfGaussians
from ..mechanisms.laws import privacy_loss
from ..mechanisms.relations import resolve_bounds
from .composition import DpEventComposition, RdpPart
from .leaf_events import (LEAF_SPECS, _name, _noise, _positive_count, _refuse,
                          _sampled_zcdp_part, _truncated, _zcdp_part)
from .neighbouring import _relation
from .repeat_select import repeat_and_select_rdp

__all__ = ["from_dp_event", "SUPPORTED_EVENTS"]


# ---- the walk's state ---------------------------------------------------------------------------
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

    def settled(self, spec: Any, event: Any) -> bool:
        """True when ``spec`` needs no accounting: ``None`` (no privacy cost, nothing
        recorded) or ``"nonprivate"`` (``event`` recorded as non-private)."""
        if spec is None:
            return True
        if spec == "nonprivate":
            self.non_private.append(_name(event))
            return True
        return False


def _check_supported(spec: Mechanism, relation: NeighbouringRelation, event: Any) -> None:
    try:
        for r in resolve_bounds(spec, relation):
            privacy_loss(r, "remove")
    except (TypeError, ValueError) as exc:
        raise _refuse(event, f"under the neighbouring relation {relation.value!r} its "
                      f"sampledprv spec {spec!r} is refused: {exc}") from None


def _kind(event: Any) -> Optional[str]:
    """The first class name in ``event``'s MRO that is supported or refused, else None."""
    for n in (c.__name__ for c in type(event).__mro__):
        if n in SUPPORTED_EVENTS or n in _REFUSED:
            return n
    return None


# ---- the event run on a sample ------------------------------------------------------------------
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
    if kind in LEAF_SPECS:
        spec, note = LEAF_SPECS[kind](event, relation)
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


# ---- one handler per event kind: handler(event, count, walk), count >= 1 -------------------------
def _no_op(event: Any, count: int, w: _Walk) -> None:
    w.mapping.append(f"{_name(event)} -> nothing (no privacy cost)")


def _non_private(event: Any, count: int, w: _Walk) -> None:
    w.non_private.append(_name(event))


def _self_composed(event: Any, count: int, w: _Walk) -> None:
    _walk(event.event, count * _positive_count(event, event.count, "count"), w)


def _composed(event: Any, count: int, w: _Walk) -> None:
    for e in event.events:
        _walk(e, count, w)


def _zcdp(event: Any, count: int, w: _Walk) -> None:
    rho, xi = float(event.rho), float(event.xi)
    if not (rho >= 0 and xi >= 0):
        raise ValueError(f"ZCDpEvent needs rho >= 0 and xi >= 0, got rho={rho!r}, xi={xi!r}")
    if rho == 0 and xi == 0:
        return
    w.rdp.append(_zcdp_part(rho, xi, event, f"ZCDp(rho={rho:g}, xi={xi:g})").times(count))
    w.mapping.append(f"ZCDpEvent x{count} -> Renyi curve xi + rho*alpha (Renyi DP only)")


def _repeat_select(event: Any, count: int, w: _Walk) -> None:
    part = _repeat_and_select(event, w.relation)
    if part is None:
        w.non_private.append(_name(event))
        return
    w.rdp.append(part.times(count))
    w.mapping.append(f"RepeatAndSelectDpEvent x{count} -> Papernot-Steinke Renyi bound "
                     "of the inner event (Renyi DP only)")


def _tree_aggregation(event: Any, count: int, w: _Walk) -> None:
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


def _poisson_sampled(event: Any, count: int, w: _Walk) -> None:
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
    if w.settled(inner, event):
        return
    w.add(inner if q == 1.0 else PoissonSubsampled(inner, q), count, event, note)


def _sampled_without_replacement(event: Any, count: int, w: _Walk) -> None:
    n = _positive_count(event, event.source_dataset_size, "source_dataset_size")
    m = _positive_count(event, event.sample_size, "sample_size")
    if m == 0:
        return
    if m > n:
        raise ValueError(f"SampledWithoutReplacementDpEvent.sample_size ({m}) exceeds "
                         f"source_dataset_size ({n})")
    inner, note = _inner_spec(event.event, event, w.relation)
    if w.settled(inner, event):
        return
    if w.relation is NeighbouringRelation.ADD_REMOVE:
        raise _refuse(event, "a fixed sample size is defined for datasets of one size, so "
                      "it is accounted under REPLACE_ONE only (neighbouring='replace_one'), "
                      "as dp-accounting does")
    w.add(FixedSizeSubsampled(inner, m, n), count, event,
          "certified interval: upper end from the symmetric dominating pair (Dong, Roth, "
          "Su Thm 4.2), lower end attained")


def _mixture_of_gaussians(event: Any, count: int, w: _Walk) -> None:
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


def _truncated_subsampled(event: Any, count: int, w: _Walk) -> None:
    spec = _truncated(event, w.relation)
    if w.settled(spec, event):
        return
    w.add(spec, count, event, "PLD of dp-accounting's tagged mixture (arXiv:2508.15089, "
          "Sec. 4.3); certified given that paper's bound")


def _additive_leaf(event: Any, count: int, w: _Walk) -> None:
    """Every :data:`~sampledprv.interop.leaf_events.LEAF_SPECS` kind."""
    spec, note = LEAF_SPECS[_kind(event)](event, w.relation)
    if spec is None:
        w.mapping.append(f"{_name(event)} -> nothing (no privacy cost)")
    elif spec == "nonprivate":
        w.non_private.append(_name(event))
    elif isinstance(spec, RdpPart):
        w.rdp.append(spec.times(count))
        w.mapping.append(f"{_name(event)} x{count} -> {spec.label} ({note})")
    else:
        w.add(spec, count, event, note)


#: event class name -> handler; a new event kind is one entry here (or in LEAF_SPECS)
_HANDLERS: Dict[str, Callable[[Any, int, _Walk], None]] = {
    "NoOpDpEvent": _no_op,
    "NonPrivateDpEvent": _non_private,
    "SelfComposedDpEvent": _self_composed,
    "ComposedDpEvent": _composed,
    "ZCDpEvent": _zcdp,
    "RepeatAndSelectDpEvent": _repeat_select,
    "SingleEpochTreeAggregationDpEvent": _tree_aggregation,
    "PoissonSampledDpEvent": _poisson_sampled,
    "SampledWithoutReplacementDpEvent": _sampled_without_replacement,
    "MixtureOfGaussiansDpEvent": _mixture_of_gaussians,
    "TruncatedSubsampledGaussianDpEvent": _truncated_subsampled,
    **{kind: _additive_leaf for kind in LEAF_SPECS},
}

#: event class names :func:`from_dp_event` accounts
SUPPORTED_EVENTS = frozenset(_HANDLERS)

#: event class names refused, with the reason
_REFUSED = {
    "UnsupportedDpEvent": "it stands for an operation without any privacy description",
    "SampledWithReplacementDpEvent": (
        "a record can occur several times in a batch drawn with replacement, and sampledprv "
        "has no certified PLD or Renyi bound for that sampler (dp-accounting has none "
        "either); use PoissonSampledDpEvent or SampledWithoutReplacementDpEvent if that is "
        "what the pipeline does"),
}


def _walk(event: Any, count: int, w: _Walk) -> None:
    """Account ``count`` runs of ``event`` into ``w`` through :data:`_HANDLERS`."""
    kind = _kind(event)
    if kind is None:
        raise ValueError(
            f"from_dp_event: unknown event type {_name(event)} ({event!r}); supported: "
            + ", ".join(sorted(SUPPORTED_EVENTS)))
    if kind in _REFUSED:
        raise _refuse(event, _REFUSED[kind])
    if count == 0:
        _no_op(event, count, w)
        return
    _HANDLERS[kind](event, count, w)
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

