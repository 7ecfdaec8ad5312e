r"""Renyi DP of repeat-and-select: run a mechanism a random number ``K`` of times and
publish only the best run (Papernot and Steinke 2022, "Hyperparameter tuning with Renyi
differential privacy", ICLR; dp-accounting's ``RepeatAndSelectDpEvent``).

With :math:`\varepsilon(\lambda)` the Renyi bound of one run (both directions):

* ``K`` truncated negative binomial with shape :math:`\eta \ge 0` and parameter
  :math:`\gamma` (geometric at :math:`\eta = 1`, logarithmic at :math:`\eta = 0`),
  Theorem 2:

  .. math:: \varepsilon'(\lambda) = \varepsilon(\lambda) + \frac{\log E[K]}{\lambda - 1}
     + (1 + \eta)\min_{\hat\lambda}\Big[(1 - 1/\hat\lambda)\,\varepsilon(\hat\lambda)
     + \frac{\log(1/\gamma)}{\hat\lambda}\Big];

* ``K`` Poisson with mean :math:`\mu` (``shape = inf``), Theorem 6:
  :math:`\varepsilon'(\lambda) = \varepsilon(\lambda) + \mu\hat\delta + \log\mu/(\lambda-1)`
  with :math:`\hat\delta` the certified ``delta`` of one run at
  :math:`\hat\varepsilon = \log(1 + 1/(\lambda - 1))`.

Renyi divergences are nondecreasing in the order, so a bound at a larger order bounds a
smaller one: the result is replaced by its suffix minimum.  :math:`\gamma` is found by
bisection on the mean :math:`E[K] = \eta(1-\gamma)/(\gamma(1-\gamma^\eta))` and its
lower end is used (a smaller :math:`\gamma` only enlarges the bound).
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from ..rdp import delta_from_rdp
from ..core.outward import up

__all__ = ["repeat_and_select_rdp", "truncated_negative_binomial_gamma"]


def _tnb_mean(gamma: float, shape: float) -> float:
    if shape == 1.0:
        return 1.0 / gamma
    lg = math.log(gamma)
    if lg == 0.0:
        return 1.0
    if shape == 0.0:
        return (1.0 - gamma) / (gamma * -lg)
    # eta (1 - gamma) / (gamma (1 - gamma^eta)), with expm1 for accuracy
    return shape * -math.expm1(lg) / (gamma * -math.expm1(shape * lg))


def truncated_negative_binomial_gamma(shape: float, mean: float) -> float:
    """A lower bound (within 1e-12 relative) on the ``gamma`` whose truncated negative
    binomial with ``shape`` has the given ``mean`` (the mean decreases in ``gamma``)."""
    if shape == 1.0:
        return 1.0 / mean
    lo, hi = 0.0, 1.0
    while hi - lo > 1e-12 * hi:
        mid = 0.5 * (lo + hi)
        if _tnb_mean(mid, shape) < mean:
            hi = mid
        else:
            lo = mid
    return lo if lo > 0 else hi * 0.5


def repeat_and_select_rdp(orders: Sequence[float], rdp: Sequence[float], mean: float,
                          shape: float) -> np.ndarray:
    """Renyi bounds at ``orders`` of publishing the best of ``K`` runs of a mechanism with
    bounds ``rdp`` (module docstring).  ``shape = inf``: Poisson; ``shape >= 0``: truncated
    negative binomial."""
    a = np.asarray(orders, dtype=np.float64)
    r = np.asarray(rdp, dtype=np.float64)
    if not (mean >= 1.0 and math.isfinite(mean)):
        raise ValueError(f"RepeatAndSelectDpEvent.mean must be a finite number >= 1, got {mean!r}")
    if not shape >= 0.0:
        raise ValueError(f"RepeatAndSelectDpEvent.shape must be >= 0, got {shape!r}")
    if a.ndim != 1 or a.shape != r.shape or np.any(np.diff(a) <= 0) or np.any(a <= 1):
        raise ValueError("orders must be increasing numbers > 1, one rdp value per order")
    out = np.full(a.shape, math.inf)
    if math.isinf(shape):
        for i, lam in enumerate(a):
            eps_hat = math.log1p(1.0 / (lam - 1.0))
            d_hat = delta_from_rdp(a, r, eps_hat)
            out[i] = up(r[i] + mean * d_hat + math.log(mean) / (lam - 1.0))
    else:
        gamma = truncated_negative_binomial_gamma(float(shape), float(mean))
        c = (1.0 + shape) * float(np.min((1.0 - 1.0 / a) * r - math.log(gamma) / a))
        out = np.array([up(r[i] + math.log(mean) / (lam - 1.0) + c) for i, lam in enumerate(a)])
    # suffix minimum: a bound at a larger order bounds every smaller order
    return np.minimum.accumulate(out[::-1])[::-1]
