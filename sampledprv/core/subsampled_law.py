r"""Poisson subsampling of any analytic pair, both directions, without sampling.

With :math:`(P_0, Q_0)` the base pair and :math:`\ell = \log p_0/q_0`, the
subsampled pair is :math:`P = (1-q) Q_0 + q P_0`, :math:`Q = Q_0`, whose loss is
:math:`g(\ell) = \log(1 - q + q e^{\ell})`, increasing from :math:`\log(1-q)` to
:math:`+\infty`.  Hence

* remove direction: law of :math:`g(\ell)` with :math:`\ell \sim (1-q)\,\mathcal L_{Q_0} + q\,\mathcal L_{P_0}`;
* add direction: law of :math:`-g(\ell)` with :math:`\ell \sim \mathcal L_{Q_0}`.

:math:`g^{-1}(y) = y - \log q + \log(1 - (1-q)e^{-y})`, evaluated with ``expm1``.
"""

from __future__ import annotations

import numpy as np

from .law import LossPair, mixture


def subsampled_pair(base: LossPair, q: float) -> LossPair:
    """Laws of the subsampled loss :math:`g(\\ell)` under the subsampled ``P`` and ``Q``."""
    under_p0, under_q0 = base
    if q == 1.0:
        return base
    log1mq, logq = np.log1p(-q), np.log(q)

    def g(l: np.ndarray) -> np.ndarray:
        return np.logaddexp(log1mq, logq + np.asarray(l, dtype=np.float64))

    def g_inv(y: np.ndarray) -> np.ndarray:
        y = np.asarray(y, dtype=np.float64)
        shape = y.shape
        y = y.reshape(-1)
        t = np.subtract(log1mq, y)            # in place: this runs on every grid point
        with np.errstate(divide="ignore", invalid="ignore"):
            np.expm1(t, out=t)
            np.negative(t, out=t)
            np.log(t, out=t)
        t += y
        t -= logq
        return t.reshape(shape)

    rng = (float(log1mq), np.inf)
    under_p = mixture([q, 1.0 - q], [under_p0, under_q0]).pushforward(g, g_inv, rng)
    under_q = under_q0.pushforward(g, g_inv, rng)
    return under_p, under_q
