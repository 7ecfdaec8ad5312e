r"""Outlier analysis for equally private Generalized Gaussian mechanisms (GG paper, App. B.5).

For each ``beta``, calibrate the GG scale :math:`s_\beta` so that the mechanism (optionally
Poisson-subsampled at rate ``q`` and composed ``count`` times) is certified
``(epsilon, delta)``-DP, then report the tail weight

.. math::

    w(\beta, \tau) = P(|X| > \tau) = Q\!\left(\tfrac{1}{\beta},
    \big(\tau / s_\beta\big)^{\beta}\right), \qquad X \sim GG(\beta, s_\beta),

where :math:`Q(a, z) = \Gamma(a, z)/\Gamma(a)` is the regularized upper incomplete gamma
function (``scipy.special.gammaincc``) and ``tau`` is in units of the sensitivity.  A
practitioner who wants few outliers picks the ``beta`` with the smallest weight at the
threshold they care about.  matplotlib is needed only by :func:`plot_tail_weights`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Sequence

import numpy as np
from scipy.special import gammaincc

from ..calibration import calibrate_generalized_gaussian
from ..mechanisms import GeneralizedGaussian

__all__ = ["tail_weight", "TailTable", "calibrated_tail_weights", "plot_tail_weights"]


def tail_weight(beta: float, scale: float, threshold) -> np.ndarray:
    r"""Two-sided tail :math:`P(|X| > \tau)` of ``GG(beta, scale)``, exact.

    Equals ``2 * scipy.stats.gennorm(beta, scale=scale).sf(tau)`` for ``tau >= 0`` (and 1
    for ``tau < 0``), without cancellation far in the tail.
    """
    spec = GeneralizedGaussian(beta, scale)
    t = np.asarray(threshold, dtype=float)
    z = np.power(np.maximum(t, 0.0) / spec.scale, spec.beta)
    w = gammaincc(1.0 / spec.beta, z)
    w = np.where(t < 0, 1.0, w)
    return w if w.ndim else float(w)


@dataclass(frozen=True)
class TailTable:
    """Tail weights of GG mechanisms calibrated to one guarantee.

    Attributes
    ----------
    betas : numpy.ndarray, shape ``(B,)``
    scales : numpy.ndarray, shape ``(B,)``
        Calibrated GG scales (per unit sensitivity; noise multiplier ``scale / sqrt(2)``).
    thresholds : numpy.ndarray, shape ``(T,)``
        Tail cutoffs ``tau`` (units of the sensitivity).
    weights : numpy.ndarray, shape ``(B, T)``
        ``weights[i, j] = P(|X| > thresholds[j])`` for ``X ~ GG(betas[i], scales[i])``.
    intervals : tuple of Interval
        Certified epsilon of each calibrated mechanism (``upper <= epsilon``).
    epsilon, delta, count, q : the guarantee and the setting.
    """

    betas: np.ndarray
    scales: np.ndarray
    thresholds: np.ndarray
    weights: np.ndarray
    intervals: tuple
    epsilon: float
    delta: float
    count: int
    q: float

    def best_beta(self) -> np.ndarray:
        """For each threshold, the beta with the smallest tail weight."""
        return self.betas[np.argmin(self.weights, axis=0)]

    def format(self) -> str:
        """A plain-text table: one row per beta."""
        head = "  beta    scale   eps_upper  " + "  ".join(f"P(|X|>{t:g})".rjust(11)
                                                        for t in self.thresholds)
        rows = [head]
        for b, s, iv, w in zip(self.betas, self.scales, self.intervals, self.weights):
            rows.append(f"{b:6.2f} {s:8.4f} {iv.upper:10.4f}  "
                        + "  ".join(f"{x:11.3e}" for x in w))
        return "\n".join(rows)


def calibrated_tail_weights(betas: Sequence[float], thresholds: Sequence[float], *,
                            epsilon: float, delta: float, count: int = 1, q: float = 1.0,
                            accountant: Any = None, rtol: float = 1e-3) -> TailTable:
    """Calibrate GG(beta, .) to ``(epsilon, delta)`` for each beta and tabulate tail weights.

    The calibration is :func:`sampledprv.calibrate_generalized_gaussian` (certified upper
    epsilon within the target), so the scales are the smallest certified ones.
    """
    betas = np.asarray(betas, dtype=float).ravel()
    thresholds = np.asarray(thresholds, dtype=float).ravel()
    if betas.size == 0 or thresholds.size == 0:
        raise ValueError("betas and thresholds must be non-empty")
    cals = [calibrate_generalized_gaussian(float(b), epsilon=epsilon, delta=delta,
                                           count=count, q=q, accountant=accountant, rtol=rtol)
            for b in betas]
    scales = np.array([c.x for c in cals])
    weights = np.stack([np.atleast_1d(tail_weight(b, s, thresholds))
                        for b, s in zip(betas, scales)])
    return TailTable(betas=betas, scales=scales, thresholds=thresholds, weights=weights,
                     intervals=tuple(c.interval for c in cals), epsilon=float(epsilon),
                     delta=float(delta), count=int(count), q=float(q))


def plot_tail_weights(table: TailTable, ax: Optional[Any] = None, *, logy: bool = True):
    """Plot ``P(|X| > tau)`` against beta, one line per threshold (GG paper, Figure 5).

    Requires matplotlib (``pip install sampledprv[plot]``).  Returns the Axes.
    """
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - exercised only without matplotlib
        raise ImportError("plot_tail_weights needs matplotlib: pip install matplotlib") from exc
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 4))
    for j, t in enumerate(table.thresholds):
        ax.plot(table.betas, table.weights[:, j], marker="o", label=f"tail tau={t:g}")
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel("beta")
    ax.set_ylabel("P(|noise| > tau)")
    setting = "GG" if table.q == 1.0 else f"SGG q={table.q:g}"
    ax.set_title(f"{setting}, {table.count} step(s), ({table.epsilon:g}, {table.delta:g})-DP")
    ax.legend()
    return ax
