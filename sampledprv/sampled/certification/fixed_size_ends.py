r"""Fixed-size batches under substitution in the sampled accountant: two inner accountants.

A fixed-size batch (:class:`~sampledprv.FixedSizeSubsampled`) under substitution has no
single worst-case pair: its upper end is sampled from the symmetric dominating pair and
its lower end from the attained member pair
(:func:`~sampledprv.mechanisms.relations.resolve_bounds`), each in an inner accountant
at ``alpha / 2``, so that both ends hold together with probability ``>= 1 - alpha``
(union bound).  The functions take the outer accountant.
"""

from __future__ import annotations

from typing import Optional

from ...core.interval import PROBABILISTIC, Interval, fixed_size_bracket
from ...mechanisms.base import NeighbouringRelation, as_relation
from ...mechanisms.relations import resolve_bounds
from ...mechanisms.substitution import FixedSizeSubsampled
from ..histograms.empirical import EmpiricalPRV

__all__ = ["end_pairs", "bracketed_spec", "ends", "bracketed"]


def end_pairs(acc, mechanism: object) -> tuple:
    """What is sampled for ``mechanism``: its pair, or for a fixed-size batch under
    substitution the two pairs of its upper and lower end."""
    if bracketed_spec(acc, mechanism):
        return tuple(resolve_bounds(mechanism, acc.neighbouring))
    if isinstance(mechanism, EmpiricalPRV):
        return (mechanism,)
    if hasattr(mechanism, "check"):
        return (mechanism,)
    return (acc._bank.pair(mechanism),)


def bracketed_spec(acc, mechanism: object) -> bool:
    return isinstance(mechanism, FixedSizeSubsampled) and \
        as_relation(acc.neighbouring) is NeighbouringRelation.SUBSTITUTE


def ends(acc) -> Optional[tuple]:
    """``(upper, lower)`` inner accountants when a composed spec is a fixed-size batch
    under substitution, else ``None``.

    Its upper end comes from the symmetric dominating pair and its lower end from the
    attained member pair (:func:`~sampledprv.mechanisms.relations.resolve_bounds`), so each inner
    accountant samples the pairs of one end (every other mechanism as resolved under
    this accountant's relation, sampled in both), each with failure probability
    ``alpha / 2``: by the union bound both ends hold together with probability at
    least ``1 - alpha``.  Seeds: ``seed`` for the upper one, ``seed + 1`` for the
    lower one; a checkpoint directory gets ``upper/`` and ``lower/``."""
    if not any(bracketed_spec(acc, m) for m, _ in acc._bank.entries.values()):
        return None
    if acc._ends_cache is not None:
        return acc._ends_cache
    inners = []
    for i, name in enumerate(("upper", "lower")):
        inner = type(acc).from_settings(acc._settings.under(name).replace(
            alpha=acc.alpha / 2.0, seed=int(acc._bank.seed_value) + i,
            neighbouring="add_remove"))
        for key, (m, c) in acc._bank.entries.items():
            pairs = end_pairs(acc, m)
            renyi, loss_range = acc._bank.side.get(key, (None, None))
            pair = pairs[i] if len(pairs) == 2 else pairs[0]
            if hasattr(pair, "empirical") and hasattr(pair, "member"):
                # a user pair's fixed-size upper end: spliced from the member's two
                # histograms (sampled.certification.subsampled_inputs)
                pair = pair.empirical(inner._bank, len(inners))
            inner.compose(pair, c, renyi=renyi, loss_range=loss_range)
        inners.append(inner)
    acc._ends_cache = (inners[0], inners[1])
    return acc._ends_cache


def bracketed(acc, query: str, x: float, direction: object) -> Optional[Interval]:
    """The interval of a bracketed composition: upper end from the upper inner
    accountant, lower end from the lower one, estimate from the upper one (clipped)."""
    pair = ends(acc)
    if pair is None:
        return None
    user = any(hasattr(p, "member") for m, _ in acc._bank.entries.values()
               if bracketed_spec(acc, m) for p in end_pairs(acc, m))
    member = ("((1 - gamma) Q + gamma P, Q) of the user's pair (P, Q)" if user
              else "u = 2C, v = 0")
    return fixed_size_bracket(getattr(pair[0], query)(x, direction),
                              getattr(pair[1], query)(x, direction), PROBABILISTIC,
                              1.0 - acc.alpha, note="; each at alpha/2, union bound",
                              member=member)
