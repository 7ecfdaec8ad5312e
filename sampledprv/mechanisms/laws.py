r"""Exact privacy-loss laws of the (unsubsampled) mechanisms, found through the registry.

Each law is the pair ``(under_p, under_q)``: the law of the *same* loss function
:math:`\ell = \log p_0/q_0` under :math:`P_0` and under :math:`Q_0` (the canonical pair
of :mod:`sampledprv.mechanisms.registry`).  The remove direction is ``under_p``; the add
direction is the law of :math:`-\ell` under :math:`Q_0`.  Keeping both laws of one loss
function is what lets :mod:`sampledprv.core.subsampled_law` build the Poisson-subsampled pair
exactly.  The laws themselves live in each mechanism's module.
"""

from __future__ import annotations

import functools

from ..core.law import LossDistribution, LossPair
from ..core.subsampled_law import subsampled_pair
from .base import Direction, as_direction
from .generalized_gaussian_vector import GeneralizedGaussianVector
from .registry import family_of
from .subsampled import PoissonSubsampled

__all__ = ["LossPair", "analytic_pair", "clear_law_cache", "loss_pair", "privacy_loss"]


def analytic_pair(mech: object) -> LossPair:
    """``(law of l under P0, law of l under Q0)`` of a registered spec.

    Raises
    ------
    TypeError
        When ``mech`` is not a registered spec (use the sampled accountant for
        mechanisms without a closed form).
    """
    if isinstance(mech, GeneralizedGaussianVector):
        raise ValueError(
            "GeneralizedGaussianVector has no single privacy-loss law (it depends on how the "
            "sensitivity is spread over the coordinates); account it with "
            "sampledprv.VectorGGAccountant (same compose/epsilon/delta contract)")
    try:
        fam = family_of(mech)
    except TypeError:
        raise TypeError(f"no analytic privacy loss for {type(mech).__name__}; use the sampled "
                        "accountant (sp.SampledAccountant) for mechanisms without a closed "
                        "form") from None
    return fam.loss_pair(mech)


def loss_pair(mechanism: object) -> LossPair:
    """``(law of l under P, law of l under Q)`` for ``l = log p/q`` of the worst-case pair."""
    return _laws(mechanism)[0]


def _build_pair(mechanism: object) -> LossPair:
    if isinstance(mechanism, PoissonSubsampled):
        return subsampled_pair(analytic_pair(mechanism.mechanism), mechanism.q)
    return analytic_pair(mechanism)


def _laws(mechanism: object) -> tuple[LossPair, LossDistribution]:
    """The pair of ``mechanism`` and its add-direction law.

    Laws are immutable and depend only on the spec, so those of a hashable spec are
    built once and shared, with the window points they have already searched (every
    accountant that composes the spec sizes and discretizes the same laws).  The key
    holds the spec's type and ``repr`` too, so specs that compare equal but are written
    with differently typed parameters (``1`` and ``1.0``) keep their own laws."""
    try:
        key = (type(mechanism), repr(mechanism), mechanism)
        hash(key)
    except (TypeError, ValueError):   # unhashable spec (array-valued fields): built afresh
        pair = _build_pair(mechanism)
        return pair, pair[1].negated()
    return _cached_laws(key)


@functools.lru_cache(maxsize=64)
def _cached_laws(key: tuple) -> tuple[LossPair, LossDistribution]:
    pair = _build_pair(key[2])
    return pair, pair[1].negated()


def clear_law_cache() -> None:
    """Forget the shared laws and everything memoized on them (window points, small
    discretizations): the next accountant builds them afresh.  For benchmarks that time
    a cold call after an untimed warm-up; the numbers are the same either way."""
    _cached_laws.cache_clear()


def privacy_loss(mechanism: object, direction: "str | Direction") -> LossDistribution:
    """Law of the privacy loss in one direction.

    ``"remove"``: :math:`\\log p/q` under :math:`P`; ``"add"``: :math:`\\log q/p` under
    :math:`Q` (the pair is ``(M(D + x), M(D))``)."""
    d = as_direction(direction)
    (under_p, _), add = _laws(mechanism)
    return under_p if d is Direction.REMOVE else add
