r"""From Renyi DP to :math:`(\varepsilon, \delta)`-DP.

If :math:`D_\alpha(P\|Q) \le \rho` then, for every :math:`\varepsilon`,

.. math::

    H_{e^\varepsilon}(P\|Q) \le \frac{e^{(\alpha-1)(\rho-\varepsilon)}}{\alpha}
    \Big(1 - \frac1\alpha\Big)^{\alpha-1}

(Canonne, Kamath & Steinke 2020, "The discrete Gaussian for differential privacy",
Prop. 12; Asoodeh, Liao, Calmon, Kosut & Sankar 2021; equivalently Balle, Barthe,
Gaboardi, Hsu & Sato 2020, "Hypothesis testing interpretations and Renyi differential
privacy", Thm 21), i.e.

.. math::

    \varepsilon(\delta) \le \rho + \log(1 - 1/\alpha)
    - \frac{\log\delta + \log\alpha}{\alpha - 1}.

Minimised over the orders given; clipped to ``delta <= 1`` and ``epsilon >= 0``.  This is
the conversion dp-accounting's RDP accountant uses.  It needs the divergence of one
direction only; the add/remove accountants apply it per direction and take the maximum.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from ..core import validation as v
from ..core.outward import REL, up

__all__ = ["epsilon_from_rdp", "delta_from_rdp"]


def up_margin(x: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """The outward margin of :func:`~sampledprv.core.outward.up` per element: ``REL * max(|x|, scale)``
    (0 where ``x`` is not finite)."""
    with np.errstate(invalid="ignore"):
        m = REL * np.maximum(np.abs(x), scale) + 1e-300
    return np.where(np.isfinite(x) & np.isfinite(m), m, 0.0)


def _arrays(orders: Sequence[float], rdp: Sequence[float]):
    a = np.asarray(orders, dtype=float)
    r = np.asarray(rdp, dtype=float)
    if a.ndim != 1 or a.shape != r.shape or a.size == 0:
        raise ValueError("orders and rdp must be 1-D sequences of the same positive length")
    if not np.all(a > 1.0) or not np.all(np.isfinite(a)):
        raise ValueError("orders must be finite numbers > 1")
    if np.any(np.isnan(r)) or np.any(r < 0):
        raise ValueError("rdp values must be >= 0 (inf allowed)")
    return a, r


def epsilon_from_rdp(orders: Sequence[float], rdp: Sequence[float], delta: float) -> float:
    """Certified upper bound on ``epsilon(delta)`` from per-order Renyi bounds ``rdp``
    (Canonne-Kamath-Steinke Prop. 12 / Balle et al. Thm 21), minimised over ``orders``."""
    delta = v.in_interval("delta", delta, 0.0, 1.0, low_open=True, high_open=True)
    a, r = _arrays(orders, rdp)
    with np.errstate(invalid="ignore"):
        tail = np.log1p(-1.0 / a) - (math.log(delta) + np.log(a)) / (a - 1.0)
        eps = r + tail
    # each order's value rounded up on the scale of its own terms (the float error of
    # ``tail`` is a few ulps of |tail|, far below REL * 1e-3 |tail|), then the minimum
    eps = eps + up_margin(eps, np.abs(r) + 1e-3 * np.abs(tail) + 1.0)
    eps = np.where(np.isfinite(r), eps, math.inf)
    return max(0.0, float(np.min(eps)))


def delta_from_rdp(orders: Sequence[float], rdp: Sequence[float], epsilon: float) -> float:
    """Certified upper bound on ``delta(epsilon)`` from per-order Renyi bounds ``rdp``,
    minimised over ``orders`` (same theorem)."""
    eps = v.nonnegative("epsilon", epsilon)
    a, r = _arrays(orders, rdp)
    with np.errstate(over="ignore", invalid="ignore"):
        log_d = (a - 1.0) * (r - eps) + (a - 1.0) * np.log1p(-1.0 / a) - np.log(a)
        scale = (a - 1.0) * (np.abs(r) + eps + np.abs(np.log1p(-1.0 / a))) + np.log(a) + 1.0
    log_d = log_d + up_margin(log_d, scale)
    log_d = np.where(np.isfinite(r), log_d, math.inf)
    return min(1.0, math.exp(up(float(np.min(log_d)))))
