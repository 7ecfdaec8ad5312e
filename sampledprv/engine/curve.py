r"""The privacy curve of a lattice distribution, exactly and stably.

For a sub-probability measure :math:`p` on sorted finite points :math:`s_j` plus an
atom :math:`p_\infty` at :math:`+\infty`,

.. math:: \delta(\varepsilon) = p_\infty + \sum_{s_j > \varepsilon} p_j\,(1 - e^{\varepsilon - s_j}),

the hockey-stick divergence when the measure is the law of the privacy loss under
``P``.  :meth:`PrivacyCurve.epsilon` inverts it exactly: on each segment between
consecutive support points :math:`\delta = P_m - e^{\varepsilon} Q_m` with
:math:`Q_m = \sum_{j \ge m} p_j e^{-s_j}`; ``Q_m`` is accumulated in log space, so
losses beyond 745 (where ``exp(-s)`` underflows) are handled.  Only the upper tail
that can matter is touched: since :math:`\delta(\varepsilon) \ge (1 - e^{-1})
P(S > \varepsilon + 1)`, points below the ``eps`` where that lower bound exceeds the
target are irrelevant.
"""

from __future__ import annotations

import numpy as np

_GAP = 1.0
_FACTOR = -np.expm1(-_GAP)   # 1 - e^{-1}


class PrivacyCurve:
    """Exact ``delta(eps)`` and ``eps(delta)`` of a lattice sub-probability measure.

    Parameters
    ----------
    values : numpy.ndarray
        Sorted (increasing) finite support points.
    probs : numpy.ndarray
        Their non-negative masses.
    p_inf : float
        Mass at ``+inf``.
    """

    def __init__(self, values: np.ndarray, probs: np.ndarray, p_inf: float) -> None:
        self.values = np.asarray(values, dtype=np.float64)
        self.probs = np.asarray(probs, dtype=np.float64)
        self.p_inf = float(p_inf)
        # tail[j] = sum_{i >= j} p_i
        self._tail = np.cumsum(self.probs[::-1])[::-1]

    def delta(self, eps: float) -> float:
        """``p_inf + sum_{s > eps} p (1 - exp(eps - s))``."""
        j = int(np.searchsorted(self.values, eps, side="right"))
        s, p = self.values[j:], self.probs[j:]
        return float(self.p_inf + np.dot(p, -np.expm1(eps - s)))

    def epsilon(self, delta: float) -> float:
        """``inf{eps >= 0 : delta(eps) <= delta}``; ``inf`` when ``delta < p_inf``."""
        if delta < self.p_inf:
            return np.inf
        if self.delta(0.0) <= delta:
            return 0.0
        # restrict to points that can matter (see module docstring)
        target = (delta - self.p_inf) / _FACTOR
        # first index whose tail mass <= target: eps* >= values[j] - GAP - (one step)
        j = int(np.searchsorted(-self._tail, -target, side="left"))
        start = max(0, j - 2)
        start_val = self.values[start] - _GAP if start < self.values.size else 0.0
        i0 = int(np.searchsorted(self.values, start_val, side="left"))
        keep = self.probs[i0:] > 0
        s = self.values[i0:][keep][::-1]           # decreasing
        p = self.probs[i0:][keep][::-1]
        if s.size == 0:
            return 0.0
        P = self.p_inf + np.cumsum(p)
        logQ = np.logaddexp.accumulate(np.log(p) - s)
        with np.errstate(over="ignore", invalid="ignore"):
            d_at_s = P - np.exp(s + logQ)          # delta at eps = s_m, increasing in m
        m = int(np.searchsorted(d_at_s, delta, side="right"))
        if m == 0:
            return float(s[0])
        rem = P[m - 1] - delta
        if rem <= 0:
            return float(s[m - 1])
        eps = float(np.log(rem) - logQ[m - 1])
        return max(0.0, eps)


def delta_of_eps(values: np.ndarray, probs: np.ndarray, p_inf: float, eps: float) -> float:
    """Functional form of :meth:`PrivacyCurve.delta` (``values`` sorted)."""
    return PrivacyCurve(values, probs, p_inf).delta(eps)


def eps_of_delta(values: np.ndarray, probs: np.ndarray, p_inf: float, delta: float) -> float:
    """Functional form of :meth:`PrivacyCurve.epsilon` (``values`` sorted)."""
    return PrivacyCurve(values, probs, p_inf).epsilon(delta)
