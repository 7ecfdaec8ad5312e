r"""The privacy curve of a lattice distribution, exactly and stably.

For a sub-probability measure :math:`p` on finite points :math:`s_j` plus an atom
:math:`p_\infty` at :math:`+\infty`,

.. math:: \delta(\varepsilon) = p_\infty + \sum_{s_j > \varepsilon} p_j\,(1 - e^{\varepsilon - s_j}),

which is the hockey-stick divergence when the measure is the law of the privacy loss
under ``P``.  :func:`eps_of_delta` inverts it exactly: on each segment between
consecutive support points :math:`\delta` equals :math:`P_m - e^{\varepsilon} Q_m` with
:math:`Q_m = \sum_{j \le m} p_j e^{-s_j}`; ``Q_m`` is kept in log space so that losses
beyond 745 (where ``exp(-s)`` underflows) are still handled.
"""

from __future__ import annotations

import numpy as np


def delta_of_eps(values: np.ndarray, probs: np.ndarray, p_inf: float, eps: float) -> float:
    """``p_inf + sum_{s > eps} p (1 - exp(eps - s))`` (values need not be sorted)."""
    mask = values > eps
    return float(p_inf + np.sum(probs[mask] * -np.expm1(eps - values[mask])))


def eps_of_delta(values: np.ndarray, probs: np.ndarray, p_inf: float, delta: float) -> float:
    r"""``inf{eps >= 0 : delta_of_eps(eps) <= delta}``; ``inf`` if no such eps.

    ``values`` must be sorted increasingly.  Returns ``0.0`` when even ``eps = 0``
    satisfies the target and ``inf`` when ``delta < p_inf`` (the atom at infinity
    alone exceeds the target).
    """
    if delta < p_inf:
        return np.inf
    if delta_of_eps(values, probs, p_inf, 0.0) <= delta:
        return 0.0
    keep = probs > 0
    s = values[keep][::-1]            # decreasing
    p = probs[keep][::-1]
    P = p_inf + np.cumsum(p)         # mass of the top m+1 points (plus +inf)
    logQ = np.logaddexp.accumulate(np.log(p) - s)
    # On eps in [s_{m+1}, s_m]: delta(eps) = P_m - exp(eps + logQ_m).
    # delta(s_m) for each m (evaluating segment m at its right end, eps = s_m):
    with np.errstate(divide="ignore", invalid="ignore"):
        d_at_s = P - np.exp(s + logQ)
    # delta is decreasing in eps; find the first m (largest s) where delta(s_m) > delta.
    # Points are visited by decreasing s, so delta(s_m) increases with m.
    m = int(np.searchsorted(d_at_s, delta, side="right"))
    # delta(s_{m}) > delta >= delta(s_{m-1}): the solution lies in [s_m, s_{m-1}],
    # on the segment where the top m points are active.
    if m == 0:
        return float(s[0]) if s.size else 0.0  # delta >= p_inf and only the atom remains
    Pm, logQm = P[m - 1], logQ[m - 1]
    rem = Pm - delta
    if rem <= 0:
        return float(s[m - 1])
    return float(max(0.0, np.log(rem) - logQm))
