"""Privacy random variables of the analytic mechanisms (exact laws, both directions)."""

from __future__ import annotations

from ..mechanisms import PoissonSubsampled
from .analytic import LossPair, analytic_pair
from .loss_distribution import LossDistribution, mixture
from .subsampled import subsampled_pair

DIRECTIONS = ("remove", "add")


def loss_pair(mechanism: object) -> LossPair:
    """``(law of l under P, law of l under Q)`` for ``l = log p/q`` of the worst-case pair."""
    if isinstance(mechanism, PoissonSubsampled):
        return subsampled_pair(analytic_pair(mechanism.mechanism), mechanism.q)
    return analytic_pair(mechanism)


def privacy_loss(mechanism: object, direction: str) -> LossDistribution:
    """Law of the privacy loss in one direction.

    ``"remove"``: :math:`\\log p/q` under :math:`P`; ``"add"``: :math:`\\log q/p` under
    :math:`Q` (the pair is ``(M(D + x), M(D))``)."""
    under_p, under_q = loss_pair(mechanism)
    if direction == "remove":
        return under_p
    if direction == "add":
        return under_q.negated()
    raise ValueError(f"direction must be 'remove' or 'add', got {direction!r}")


__all__ = ["LossDistribution", "mixture", "loss_pair", "privacy_loss", "DIRECTIONS"]
