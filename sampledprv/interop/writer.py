"""Writing dp-accounting's ``DpEvent`` trees: :func:`to_dp_event`.

The inverse of :func:`sampledprv.from_dp_event` for the specs that have a dp-accounting
counterpart, to check sampledprv's numbers with dp-accounting's accountants.  This is
the one place that imports ``dp_accounting`` (``pip install
'sampledprv[dp-accounting]'``).  Parameters follow the reader's sensitivity convention
(:mod:`sampledprv.interop.reader`): a noise parameter is relative to the per-record
bound, e.g. ``Gaussian(sigma, sensitivity)`` becomes
``GaussianDpEvent(noise_multiplier=sigma / sensitivity)``.
"""

from __future__ import annotations

import math
from typing import Any, List, Tuple

from ..core.validation import positive_int
from ..mechanisms import (ApproxDP, DiscreteGaussian, DiscreteLaplace, FixedSizeSubsampled,
                          KaryRandomizedResponse, Laplace, Mechanism, PoissonSubsampled, PureDP,
                          RandomizedResponse)
from ..mechanisms._mixtures import MixtureOfGaussians, TaggedMixture
from ..mechanisms.substitution import _as_gaussian
from .composition import DpEventComposition

__all__ = ["to_dp_event"]


def _dpa():
    """``dp_accounting.dp_event``, or an ``ImportError`` that names the extra to install."""
    try:
        from dp_accounting import dp_event
    except ImportError as exc:
        raise ImportError("to_dp_event needs dp-accounting: pip install "
                          "'sampledprv[dp-accounting]'") from exc
    return dp_event


def _event_class(module: Any, name: str, spec: Any) -> Any:
    """The event class ``name`` of ``module``; ``ValueError`` when the installed
    dp-accounting is too old to have it."""
    cls = getattr(module, name, None)
    if cls is None:
        raise ValueError(f"to_dp_event: {type(spec).__name__} ({spec!r}) maps to {name}, which "
                         "the installed dp-accounting does not have (newer than 0.6.0)")
    return cls


def _spec_event(spec: Mechanism, de: Any) -> Any:
    """The dp-accounting event of one spec (noise relative to the per-record bound);
    ``ValueError`` naming the spec when it has no counterpart."""
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
    """``TruncatedSubsampledGaussianDpEvent`` back from the label of the tagged mixture
    the reader built for it."""
    label = spec.label
    if not label.startswith("TruncatedSubsampledGaussian("):
        raise ValueError(f"to_dp_event: {spec!r} has no dp-accounting counterpart")
    fields = dict(kv.split("=") for kv in label[len("TruncatedSubsampledGaussian("):-1]
                  .split(", "))
    return de.TruncatedSubsampledGaussianDpEvent(
        dataset_size=int(fields["n"]), sampling_probability=float(fields["q"]),
        truncated_batch_size=int(fields["B"]), noise_multiplier=float(fields["z"]))
