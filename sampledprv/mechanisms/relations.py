"""Privacy random variables of the analytic mechanisms (exact laws, both directions)."""

from __future__ import annotations

import functools

from ..core.law import LossDistribution, LossPair, mixture
from ..core.subsampled_law import subsampled_pair
from .base import DIRECTIONS, Direction, NeighbouringRelation, as_direction, as_relation
from .laws import analytic_pair
from .registry import family_of
from .subsampled import PoissonSubsampled


def resolve_relation(mechanism: object, relation: object) -> object:
    """The spec whose canonical pair is the worst case of ``mechanism`` under ``relation``.

    Registered specs go through their family's ``for_relation`` hook, subsampled ones
    through :func:`sampledprv.mechanisms.substitution.subsampled_for_relation`; other
    objects (user inputs of the sampled accountant) are returned unchanged.  Results are
    cached (the pairs of subsampled integer noise under substitution are tables).

    Raises
    ------
    ValueError
        When the spec cannot certify the relation (naming both).
    """
    rel = as_relation(relation)
    try:
        return _resolve_cached(mechanism, rel)
    except TypeError as exc:            # unhashable: not a registered spec
        if "unhashable" not in str(exc):
            raise
        return _resolve(mechanism, rel)


@functools.lru_cache(maxsize=256)
def _resolve_cached(mechanism: object, rel: NeighbouringRelation) -> object:
    return _resolve(mechanism, rel)


def _resolve(mechanism: object, rel: NeighbouringRelation) -> object:
    from .substitution import FixedSizeSubsampled, subsampled_for_relation
    if isinstance(mechanism, (PoissonSubsampled, FixedSizeSubsampled)):
        return subsampled_for_relation(mechanism, rel)
    try:
        fam = family_of(mechanism)
    except TypeError:
        return mechanism
    return fam.for_relation(mechanism, rel)


def resolve_bounds(mechanism: object, relation: object) -> tuple[object, object]:
    """``(upper, lower)``: the specs whose compositions give the upper and the lower end
    of ``mechanism``'s intervals under ``relation``.

    Both are :func:`resolve_relation`'s spec, except for fixed-size batches under
    substitution: there the upper end comes from a symmetric dominating pair and the
    lower end from the attained member pair
    (:func:`sampledprv.mechanisms.substitution.fixed_size_bounds`)."""
    from .substitution import FixedSizeSubsampled
    rel = as_relation(relation)
    if isinstance(mechanism, FixedSizeSubsampled) and rel is NeighbouringRelation.SUBSTITUTE:
        return _bounds_cached(mechanism, rel)
    r = resolve_relation(mechanism, rel)
    return r, r


@functools.lru_cache(maxsize=256)
def _bounds_cached(mechanism: object, rel: NeighbouringRelation) -> tuple[object, object]:
    from .substitution import fixed_size_bounds
    return fixed_size_bounds(mechanism, rel)


def loss_pair(mechanism: object) -> LossPair:
    """``(law of l under P, law of l under Q)`` for ``l = log p/q`` of the worst-case pair."""
    if isinstance(mechanism, PoissonSubsampled):
        return subsampled_pair(analytic_pair(mechanism.mechanism), mechanism.q)
    return analytic_pair(mechanism)


def privacy_loss(mechanism: object, direction: "str | Direction") -> LossDistribution:
    """Law of the privacy loss in one direction.

    ``"remove"``: :math:`\\log p/q` under :math:`P`; ``"add"``: :math:`\\log q/p` under
    :math:`Q` (the pair is ``(M(D + x), M(D))``)."""
    d = as_direction(direction)
    under_p, under_q = loss_pair(mechanism)
    if d is Direction.REMOVE:
        return under_p
    return under_q.negated()


__all__ = ["LossDistribution", "mixture", "loss_pair", "privacy_loss", "DIRECTIONS",
           "resolve_relation", "resolve_bounds"]
