r"""numpy samplers of a spec's privacy loss, from its family's ``numpy_losses`` hook.

Used by the numpy path of the sampled accountant (pilots and checks) and by the
symmetrized dominating pair of :mod:`sampledprv.mechanisms.substitution`.  Under Poisson
subsampling with rate ``q`` the remove direction draws :math:`\log(1 - q + q e^{\ell_0})`
with :math:`x \sim (1-q)Q_0 + qP_0` and the add direction minus that loss with
:math:`x \sim Q_0`.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from .base import Mechanism, as_direction
from .registry import family_of
from .subsampled import PoissonSubsampled

__all__ = ["spec_loss_sampler"]

Sampler = Callable[["np.random.Generator", int], np.ndarray]


def _base_losses(mech: Mechanism) -> tuple[Sampler, Sampler]:
    r"""Samplers of :math:`\ell_0 = \log p_0/q_0` under P0 and under Q0 (the spec's
    family's ``numpy_losses`` hook)."""
    try:
        fam = family_of(mech)
    except TypeError:
        fam = None
    if fam is None or fam.numpy_losses is None:
        raise TypeError(f"no numpy sampler for mechanism {mech!r}")
    return fam.numpy_losses(mech)


def spec_loss_sampler(mechanism: object, direction: str) -> Sampler:
    """``f(rng, size)`` drawing privacy losses of the spec ``mechanism`` (or of its
    Poisson-subsampled version) in ``direction``, from its family's ``numpy_losses``."""
    direction = as_direction(direction).value
    if isinstance(mechanism, PoissonSubsampled):
        q = mechanism.q
        under_p0, under_q0 = _base_losses(mechanism.mechanism)
        log1mq, logq = (math.log1p(-q) if q < 1 else -np.inf), math.log(q)

        def g(l0: np.ndarray) -> np.ndarray:
            with np.errstate(divide="ignore", invalid="ignore"):
                return np.logaddexp(log1mq, logq + l0)

        if direction == "remove":
            def f(r: np.random.Generator, n: int) -> np.ndarray:
                pick = r.random(n) < q
                l0 = under_q0(r, n)
                k = int(pick.sum())
                if k:
                    l0[pick] = under_p0(r, k)
                return g(l0)
            return f
        return lambda r, n: -g(under_q0(r, n))
    under_p0, under_q0 = _base_losses(mechanism)  # type: ignore[arg-type]
    return under_p0 if direction == "remove" else (lambda r, n: -under_q0(r, n))
