"""numpy samplers of the Generalized Gaussian privacy loss (shared by the Laplace and the
Generalized Gaussian families, so that neither module imports the other's)."""

from __future__ import annotations

import numpy as np

__all__ = ["gg_numpy_losses"]


def gg_numpy_losses(beta: float, s: float, d: float):
    """numpy samplers of :math:`\\ell = (|x-d|^\\beta - |x|^\\beta)/s^\\beta` under
    :math:`P_0` (``x ~ GG(beta, s)``) and :math:`Q_0` (``x ~ d + GG(beta, s)``)."""
    def draw(r, size):
        g = r.gamma(1.0 / beta, 1.0, size)
        return s * g ** (1.0 / beta) * np.where(r.random(size) < 0.5, -1.0, 1.0)

    def lp(r, n):
        x = draw(r, n)
        return (np.abs(x - d) ** beta - np.abs(x) ** beta) / s ** beta

    def lq(r, n):
        x = draw(r, n) + d
        return (np.abs(x - d) ** beta - np.abs(x) ** beta) / s ** beta
    return lp, lq
