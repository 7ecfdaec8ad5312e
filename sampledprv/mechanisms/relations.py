"""The spec that answers a neighbouring relation (``resolve_relation``, ``resolve_bounds``).

The exact laws of a spec (``loss_pair``, ``privacy_loss``) are in
:mod:`sampledprv.mechanisms.laws` and re-exported here."""

from __future__ import annotations

import functools

from ..core.law import LossDistribution, mixture
from .base import DIRECTIONS, NeighbouringRelation, as_relation
from .laws import loss_pair, privacy_loss
from .registry import family_of
from .subsampled import PoissonSubsampled
from .substitution import FixedSizeSubsampled, fixed_size_bounds, subsampled_for_relation


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
    rel = as_relation(relation)
    if isinstance(mechanism, FixedSizeSubsampled) and rel is NeighbouringRelation.SUBSTITUTE:
        return _bounds_cached(mechanism, rel)
    r = resolve_relation(mechanism, rel)
    return r, r


@functools.lru_cache(maxsize=256)
def _bounds_cached(mechanism: object, rel: NeighbouringRelation) -> tuple[object, object]:
    return fixed_size_bounds(mechanism, rel)


__all__ = ["LossDistribution", "mixture", "loss_pair", "privacy_loss", "DIRECTIONS",
           "resolve_relation", "resolve_bounds"]
