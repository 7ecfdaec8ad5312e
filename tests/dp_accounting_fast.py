"""dp-accounting's mixture-of-Gaussians PLD, built with the same numbers in less time.

``MixtureGaussianPrivacyLoss.inverse_privacy_losses`` inverts the privacy loss by a
recursive bisection in Python (``_inverse_privacy_losses_with_range``): one call of the
scalar ``privacy_loss`` per node of the recursion tree, millions of calls for a PLD at
``h = 1e-4`` (most of the time of the tests that compare with it). :func:`bisect` runs
the same bisection for every point at once: each point visits the same intervals
``(lo, hi)`` as in the recursion (the recursion splits a node's points by
``privacy_losses < privacy_loss(mid)``, which depends only on the point and the node),
``mid`` and the privacy loss at ``mid`` are computed by the same floating-point
operations (``logaddexp.reduce`` along the row of the same summands), and a point stops
where the recursion returns, with the same ``floor(hi / precision) * precision``. So the
output is bit-for-bit the recursion's; ``test_fast_mixture_inversion_is_bitwise_dp_accountings``
(tests/test_group.py) checks it against the original on both adjacency types.
"""

from __future__ import annotations

import contextlib
from typing import Iterator

import numpy as np

_CHUNK = 1 << 15


def _losses_at(mech, x: np.ndarray) -> np.ndarray:
    """``mech.privacy_loss(x_i)`` for each ``x_i``, by the same operations."""
    from dp_accounting.pld.privacy_loss_mechanism import AdjacencyType  # noqa: PLC0415

    x_loss = mech.sensitivities[None, :] * x[:, None] / (mech._variance)
    if mech.adjacency_type == AdjacencyType.ADD:
        return -np.logaddexp.reduce(mech._precompute_privacy_loss_constants[None, :] + x_loss,
                                    axis=1)
    if mech.adjacency_type == AdjacencyType.REMOVE:
        return np.logaddexp.reduce(mech._precompute_privacy_loss_constants[None, :] - x_loss,
                                   axis=1)
    raise ValueError(f"{mech.adjacency_type} adjacency type is not supported.")


def bisect(mech, privacy_losses: np.ndarray, bounds: tuple[float, float],
           precision: float = 1e-6) -> np.ndarray:
    """``mech._inverse_privacy_losses_with_range(privacy_losses, bounds, precision)``,
    vectorised over the points (module docstring)."""
    privacy_losses = np.asarray(privacy_losses)
    if len(privacy_losses) == 0:
        return []
    out = np.zeros_like(privacy_losses)
    for a in range(0, privacy_losses.size, _CHUNK):
        pl = privacy_losses[a:a + _CHUNK]
        lo = np.full(pl.shape, bounds[0], dtype=np.float64)
        hi = np.full(pl.shape, bounds[1], dtype=np.float64)
        act = np.flatnonzero(~(hi - lo <= precision))
        while act.size:
            mid = (lo[act] + hi[act]) / 2
            split = _losses_at(mech, mid)
            below = pl[act] < split
            lo[act[below]] = mid[below]
            hi[act[~below]] = mid[~below]
            act = act[~(hi[act] - lo[act] <= precision)]
        out[a:a + _CHUNK] = np.floor(hi / precision) * precision
    return out


@contextlib.contextmanager
def fast_mixture_pld() -> Iterator[None]:
    """Within the block, dp-accounting's mixture-of-Gaussians PLD uses :func:`bisect`."""
    from dp_accounting.pld import privacy_loss_mechanism as plm  # noqa: PLC0415

    cls = plm.MixtureGaussianPrivacyLoss
    orig = cls.__dict__["_inverse_privacy_losses_with_range"]
    cls._inverse_privacy_losses_with_range = bisect
    try:
        yield
    finally:
        cls._inverse_privacy_losses_with_range = orig
