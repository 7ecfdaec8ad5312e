r"""The change-of-measure identities every privacy loss satisfies, tested on its samples.

For a pair :math:`P, Q` with loss :math:`L = \log p/q`, the remove loss
:math:`Y = L` under :math:`P` and the add loss :math:`Y' = -L` under :math:`Q` satisfy,
for every set :math:`A` of finite losses, :math:`Q(L \in A) = E_P[e^{-L} 1\{L \in A\}]`.
With :math:`A = (t, \infty)` and :math:`A = (-\infty, -t)`, :math:`t \ge 0`:

.. math::
   P(Y < -t) = E[e^{-Y'} 1\{Y' > t\}], \qquad
   Q(Y' < -t) = E[e^{-Y} 1\{Y > t\}].

Both sides are means of variables in :math:`[0, 1]`, so empirical Bernstein bounds
(Maurer and Pontil 2009, Thm 4) hold whatever the tails: this is the two-sided,
heavy-tail-proof form of :math:`E_P[q/p] = 1 = E_Q[p/q]` (at :math:`t = 0` it reads
:math:`P(L < 0) = E_Q[e^{L}; L < 0]`), tested at every threshold ``t`` at once.  A
sampler narrower than its density, truncated, shifted or scaled breaks them: a narrow
or truncated ``sample_p`` loses the lower tail of ``Y`` that the weighted upper tail of
``Y'`` predicts.

A symmetric pair (``symmetric=True``: ``Y'`` has the law of ``Y``) makes the same
identities a one-sample statement, :math:`E[1\{Y < -t\} - e^{-Y} 1\{Y > t\}] = 0`:
the evidence that :class:`~.inputs.LogDensityPair` and the accountant ask for before
sampling one direction only.

The samples are given as intervals with counts (raw draws: points; histograms: bins and
the draws outside the window), and each statistic is bounded below and above over
every position inside its interval, so the binning never causes a false alarm: the
test refuses only what no placement of the draws inside their bins explains, at a
false-alarm probability of at most ``level``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

import numpy as np

__all__ = ["Samples", "from_draws", "from_histogram", "identity_violation"]

#: thresholds ``t`` tested: ``_STEPS + 1`` equally spaced points in ``[0, t_max]``
_STEPS = 32


@dataclass(frozen=True)
class Samples:
    """Draws of a loss as intervals ``[a, b]`` (``a == b`` for exact draws) with counts."""

    a: np.ndarray
    b: np.ndarray
    w: np.ndarray

    @property
    def n(self) -> float:
        return float(self.w.sum())


def from_draws(y: np.ndarray) -> Samples:
    """Exact draws (``+inf`` allowed)."""
    y = np.asarray(y, dtype=np.float64).ravel()
    return Samples(y, y, np.ones_like(y))


def from_histogram(hist: object) -> Samples:
    """The draws of a :class:`~sampledprv.sampled.histograms.histogram.LossHistogram`:
    bin ``j`` as ``[lo + j h, lo + (j+1) h]``, draws outside the window as half-lines."""
    counts = np.asarray(hist.counts)
    j = np.flatnonzero(counts)
    a = hist.lo + j * hist.h
    b = hist.lo + (j + 1) * hist.h
    w = counts[j].astype(np.float64)
    extra = [(-math.inf, hist.lo, hist.below), (hist.hi, math.inf, hist.above),
             (math.inf, math.inf, hist.pos_inf), (-math.inf, -math.inf, hist.neg_inf)]
    ea = np.array([x[0] for x in extra if x[2] > 0])
    eb = np.array([x[1] for x in extra if x[2] > 0])
    ew = np.array([float(x[2]) for x in extra if x[2] > 0])
    return Samples(np.concatenate([a, ea]), np.concatenate([b, eb]), np.concatenate([w, ew]))


def _lower_tail(s: Samples, t: float) -> tuple[np.ndarray, np.ndarray]:
    """Range of ``1{y < -t}`` over each interval (``[a, b)`` bins or points)."""
    point = s.a == s.b
    hi = np.where(s.a < -t, 1.0, 0.0)
    lo = np.where(point, hi, np.where(s.b <= -t, 1.0, 0.0))
    return lo, hi


def _weighted_upper(s: Samples, t: float) -> tuple[np.ndarray, np.ndarray]:
    """Range of ``e^{-y} 1{y > t}`` over each interval."""
    with np.errstate(over="ignore"):
        top = np.where(s.b > t, np.exp(-np.maximum(s.a, t)), 0.0)
        bottom = np.where(s.a > t, np.exp(-s.b), 0.0)
    top = np.where(s.a == math.inf, 0.0, top)
    return bottom, np.minimum(top, 1.0)


def _mean_bounds(x: np.ndarray, w: np.ndarray, log_term: float,
                 span: float) -> tuple[float, float]:
    """Empirical Bernstein confidence bounds on the mean of a variable of range ``span``
    (each side at ``exp(-log_term) / 2``)."""
    n = float(w.sum())
    mean = float(np.dot(w, x) / n)
    var = float(np.dot(w, (x - mean) ** 2) / max(n - 1.0, 1.0))
    dev = math.sqrt(2.0 * var * log_term / n) + 7.0 * span * log_term / (3.0 * max(n - 1.0, 1.0))
    return mean - dev, mean + dev


def identity_violation(remove: Samples, add: Optional[Samples], level: float
                       ) -> Optional[dict]:
    r"""The first threshold at which the samples contradict the identities, else None.

    Parameters
    ----------
    remove : Samples
        Draws of ``Y = log p/q`` under ``P``.
    add : Samples or None
        Draws of ``Y' = log q/p`` under ``Q``; ``None`` for a pair declared symmetric
        (``Y'`` has the law of ``Y``).
    level : float
        False-alarm probability of the whole test (union over thresholds and sides).

    Returns
    -------
    dict or None
        ``{"t", "identity", "left", "right"}``: the threshold, the identity in words
        and confidence intervals of its two sides that do not meet.
    """
    finite = [np.abs(s.a[np.isfinite(s.a)]) for s in (remove, add) if s is not None] + \
        [np.abs(s.b[np.isfinite(s.b)]) for s in (remove, add) if s is not None]
    t_max = max((float(x.max()) for x in finite if x.size), default=0.0)
    thresholds = np.linspace(0.0, t_max, _STEPS + 1)
    sides = 2 if add is None else 8             # one-sided bounds per threshold
    log_term = math.log(2.0 * sides * thresholds.size / level)
    for t in thresholds:
        if add is None:
            # one sample: f = 1{Y < -t} - e^{-Y} 1{Y > t} has mean 0
            g_lo, g_hi = _lower_tail(remove, t)
            h_lo, h_hi = _weighted_upper(remove, t)
            lo_b = _mean_bounds(g_lo - h_hi, remove.w, log_term, 2.0)
            hi_b = _mean_bounds(g_hi - h_lo, remove.w, log_term, 2.0)
            if lo_b[0] > 0.0 or hi_b[1] < 0.0:
                return {"t": float(t), "identity": "P(Y < -t) = E[exp(-Y); Y > t] "
                        "(a symmetric pair, one sample)",
                        "left": (lo_b[0], hi_b[1]), "right": (0.0, 0.0)}
            continue
        for lower, upper, words in ((remove, add, "P(Y < -t) = E_Q[exp(-Y'); Y' > t]"),
                                    (add, remove, "Q(Y' < -t) = E_P[exp(-Y); Y > t]")):
            g_lo, g_hi = _lower_tail(lower, t)
            h_lo, h_hi = _weighted_upper(upper, t)
            left = (_mean_bounds(g_lo, lower.w, log_term, 1.0)[0],
                    _mean_bounds(g_hi, lower.w, log_term, 1.0)[1])
            right = (_mean_bounds(h_lo, upper.w, log_term, 1.0)[0],
                     _mean_bounds(h_hi, upper.w, log_term, 1.0)[1])
            if left[0] > right[1] or right[0] > left[1]:
                return {"t": float(t), "identity": words, "left": left, "right": right}
    return None
