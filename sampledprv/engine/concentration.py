r"""Tail bound of the summed rounding errors: Bennett for the fine level, Hoeffding above.

The coupling of the analytic accountant (design notes, "Coupling bound" and "Long
compositions") needs :math:`P(\sum_i X_i > t)` (and the same for :math:`-X_i`), where

* the fine level's errors :math:`X_i = Z_i - E Z_i` of the ``c_m`` steps of each
  mechanism ``m`` are independent, have mean zero, lie in an interval of length ``h``
  (so :math:`X_i \le b = h`) and have variance at most :math:`v_m` (the discretization's
  certified second moment, :attr:`~sampledprv.engine.discretize.Discretized.rounding_variance`);
* every other rounding (the tree's randomized regridding, the core/tail split's extra
  steps) is a martingale difference with a conditional range :math:`r_j` known in
  advance, :math:`V_{\rm rest} = \sum_j r_j^2`.

Revealed in that order, the sum is a martingale, and for every :math:`\lambda \ge 0`

.. math::

    \log E e^{\lambda \sum X} \le \sum_m c_m \min\Big(v_m \frac{\varphi(\lambda b)}{b^2},
    \frac{\lambda^2 h^2}{8}\Big) + \frac{\lambda^2 V_{\rm rest}}{8},
    \qquad \varphi(x) = e^x - 1 - x,

(Bennett's bound :math:`E e^{\lambda X} \le \exp(v \varphi(\lambda b)/b^2)` for
:math:`X \le b`, mean zero, variance :math:`\le v`, because :math:`\varphi(\lambda x)/x^2`
increases in ``x``; Hoeffding's lemma for a range, conditionally for the martingale
terms), so :math:`P(\sum X > t) \le \exp(-\lambda t + \text{that})`, minimized over
:math:`\lambda`.  At :math:`\lambda = 4t/V` (:math:`V = V_{\rm rest} + \sum_m c_m h^2`)
this is at most Hoeffding's :math:`\exp(-2t^2/V)`, which is evaluated too, so the bound
never exceeds the Azuma-Hoeffding term it replaces.  Nearest rounding of a smooth law
has :math:`v \approx h^2/12` against the :math:`h^2/4` that Hoeffding's range charges:
the fine mesh may be about :math:`\sqrt 3` times coarser for the same term.
"""

from __future__ import annotations

import math
from typing import Sequence

__all__ = ["phi_upper", "rounding_tail_bound"]


def phi_upper(x: float) -> float:
    r"""An upper bound on :math:`\varphi(x) = e^x - 1 - x` for :math:`x \ge 0`, accurate
    to a few ulps relatively: the series :math:`x^2/2 + x^3/6 + x^4/24 + x^5 e^x / 120`
    (Taylor with Lagrange remainder) below ``1e-2``, where ``expm1(x) - x`` would
    cancel."""
    if x < 1e-2:
        return (x * x / 2.0 + x ** 3 / 6.0 + x ** 4 / 24.0 + x ** 5 * math.exp(x) / 120.0) \
            * (1.0 + 1e-15)
    # expm1(x) - x cancels by at most 2/x = 200 at x = 1e-2: within 1e-13 relatively
    return (math.expm1(x) - x) * (1.0 + 1e-12)


def _log_mgf(lam: float, fine: Sequence[tuple[int, float, float]],
             rest_variance: float) -> float:
    total = lam * lam * rest_variance / 8.0
    for count, v, h in fine:
        hoeffding = lam * lam * h * h / 8.0
        bennett = v * phi_upper(lam * h) / (h * h) if h > 0 else 0.0
        total += count * min(bennett, hoeffding)
    return total


def rounding_tail_bound(t: float, fine: Sequence[tuple[int, float, float]],
                        rest_variance: float) -> float:
    r"""Bound on :math:`P(\sum X > t)` (and on :math:`P(\sum X < -t)`), see the module
    docstring.

    Parameters
    ----------
    t : float
        The deviation (loss units, nats), ``> 0``.
    fine : sequence of (count, variance, h)
        Per mechanism: the number of fine-level steps, the bound on one step's error
        variance (nats^2, at most ``h^2/4``) and the mesh ``h`` (the errors' range).
    rest_variance : float
        :math:`V_{\rm rest}`: the sum of the squared ranges of every other rounding.

    Returns
    -------
    float
        The bound, in ``[0, 1]``; at most Hoeffding's :math:`\exp(-2t^2/V)`.
    """
    if not t > 0:
        raise ValueError(f"t must be positive, got {t!r}")
    if rest_variance < 0 or any(c < 0 or v < 0 or h < 0 for c, v, h in fine):
        raise ValueError("counts, variances, meshes and rest_variance must be >= 0")
    fine = [(int(c), min(float(v), 0.25 * float(h) ** 2), float(h)) for c, v, h in fine]
    v_range = rest_variance + sum(c * h * h for c, _, h in fine)
    if v_range <= 0:
        return 0.0

    def objective(lam: float) -> float:
        return -lam * t + _log_mgf(lam, fine, rest_variance)

    lam_h = 4.0 * t / v_range                          # Hoeffding's minimizer
    best = min(0.0, objective(lam_h))
    # objective(lam) >= -lam t + lam^2 s/2 with s the sub-Gaussian floor below, which is
    # positive beyond 2t/s: the minimizer lies in [0, 2t/s]; the objective is convex
    s = rest_variance / 4.0 + sum(c * min(v, h * h / 4.0) for c, v, h in fine)
    if s > 0:
        lo, hi = 0.0, 2.0 * t / s
        g = (math.sqrt(5.0) - 1.0) / 2.0
        a, b = hi - g * (hi - lo), lo + g * (hi - lo)
        fa, fb = objective(a), objective(b)
        for _ in range(80):
            if fa < fb:
                hi, b, fb = b, a, fa
                a = hi - g * (hi - lo)
                fa = objective(a)
            else:
                lo, a, fa = a, b, fb
                b = lo + g * (hi - lo)
                fb = objective(b)
        best = min(best, fa, fb)
    return min(1.0, math.exp(best))
