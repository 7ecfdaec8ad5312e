r"""Renyi divergence of the d-dimensional GG mechanism, worst case over the l_beta ball.

Adding i.i.d. :math:`GG(\beta, s)` noise to a query whose neighbouring values differ by a
vector :math:`\Delta` with :math:`\|\Delta\|_\beta \le C` gives product distributions, so
the order-:math:`a` Renyi divergence is :math:`\sum_i g_a(|\Delta_i|)` with :math:`g_a`
the 1-D divergence (the same in both directions).  With :math:`u_i = (|\Delta_i|/C)^\beta`,
:math:`\sum_i u_i \le 1` and :math:`G(u) = g_a(C u^{1/\beta})` nondecreasing (below),
Jensen's inequality on the least concave majorant :math:`\hat G` of :math:`G` on
:math:`[0, 1]` gives

.. math:: \sum_{i=1}^d G(u_i) \le d\,\hat G\Big(\frac1d\sum_i u_i\Big) \le d\,\hat G(1/d).

**Certified evaluation.**  :math:`(a-1)g_a(\Delta) = \log\int p^a(x)\,
e^{(a-1)|x-\Delta|^\beta}dx` (scale 1) is a log-integral of exponentials of convex
functions of :math:`\Delta`, hence convex in :math:`\Delta` (Hoelder's inequality); it is
even, so :math:`g_a` is nondecreasing in :math:`|\Delta|` and lies below its chords.  On
a grid :math:`0 = \Delta_0 < \Delta_1 < \dots < \Delta_n = C` upper bounds
:math:`\bar g_j` come from :mod:`.gg_excess` (relative accuracy at every shift); on each
cell :math:`\bar H(u) = ` chord of :math:`\bar g` at :math:`C u^{1/\beta}` bounds
:math:`G` and is concave in :math:`u` (an increasing affine function of the concave
:math:`C u^{1/\beta}`), hence lies below both endpoint tangents.  The least concave
majorant of :math:`G` is therefore at most the upper hull of the grid points and the
tangents' intersection points, evaluated exactly at :math:`1/d`.  On the first cell the
left tangent is vertical for ``beta > 1``, so the right tangent alone is used; its value
at 0 is of order :math:`g_a(\Delta_1)`, and :math:`\Delta_1` is chosen so that ``d``
times it is negligible.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Tuple

import numpy as np

from ..core.outward import up
from ..mechanisms.generalized_gaussian_vector import MAX_DIMENSION, GeneralizedGaussianVector
from .gg_excess import QuadratureOverflow, gg_excess_bounds_many

__all__ = ["vector_gg_renyi", "vector_spec_renyi", "shift_grid", "MAX_DIMENSION"]


_GRID = np.unique(np.concatenate([np.geomspace(1e-11, 1e-2, 61), np.geomspace(1e-2, 1.0, 33)]))


def shift_grid(dimension: float) -> np.ndarray:
    r"""Grid of :math:`\Delta / C` in ``(0, 1]`` for dimension ``d``: ratio :math:`\sqrt2`
    below 1e-2 and about 1.15 above, from :math:`\sqrt{10^{-10}/d}` (one shared grid, so
    quadratures are reused across dimensions)."""
    r_min = min(1e-3, math.sqrt(1e-10 / float(dimension)))
    return _GRID[np.searchsorted(_GRID, r_min, side="right") - 1:]


def _upper_hull(x: np.ndarray, y: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    order = np.lexsort((-y, x))
    hx, hy = [], []
    for xi, yi in zip(x[order], y[order]):
        if hx and xi == hx[-1]:
            continue  # same x, lower y (sorted by -y)
        while len(hx) >= 2 and ((hx[-1] - hx[-2]) * (yi - hy[-2])
                                - (hy[-1] - hy[-2]) * (xi - hx[-2])) >= 0:
            hx.pop()
            hy.pop()
        hx.append(xi)
        hy.append(yi)
    return np.array(hx), np.array(hy)


@lru_cache(maxsize=4096)
def vector_gg_renyi(beta: float, clip_over_scale: float, dimension: float,
                    order: float) -> float:
    r"""Certified upper bound on :math:`\sup_{\|\Delta\|_\beta \le C} D_a` of the
    ``dimension``-dimensional GG mechanism (both directions).

    Parameters
    ----------
    beta : float
        Shape (``>= 1``).
    clip_over_scale : float
        :math:`C / s`.
    dimension : float
        ``d >= 1`` (a float so that very large dimensions can be asked for).
    order : float
        Renyi order ``a > 1``.
    """
    a, b, c, d = float(order), float(beta), float(clip_over_scale), float(dimension)
    grid = shift_grid(d)
    deltas = c * grid
    u = grid ** b
    try:
        log_e = gg_excess_bounds_many(b, deltas, a)[1]
    except QuadratureOverflow:
        # no bound at an order whose quadrature overflows (inf is a valid upper bound;
        # the accountant takes the best of its other orders)
        return math.inf
    h = np.logaddexp(0.0, log_e) / (a - 1.0)          # upper bounds on g_a at the nodes
    d_all = np.concatenate([[0.0], deltas])
    u_all = np.concatenate([[0.0], u])
    h_all = np.concatenate([[0.0], h])
    slope = np.diff(h_all) / np.diff(d_all)           # chord slopes of g in Delta
    # tangent slopes (in u) at both ends of each cell: slope * dDelta/du
    with np.errstate(divide="ignore", invalid="ignore"):
        dd_du = (c / b) * np.where(u_all > 0, u_all, np.nan) ** (1.0 / b - 1.0)
    m_left = slope * dd_du[:-1]
    m_right = slope * dd_du[1:]
    ul, ur, hl, hr = u_all[:-1], u_all[1:], h_all[:-1], h_all[1:]
    px, py = [u_all, ], [h_all, ]
    # first cell: right tangent only (vertical left tangent for beta > 1)
    px.append(np.array([0.0]))
    py.append(np.array([max(0.0, hr[0] - m_right[0] * ur[0])]))
    ml, mr = m_left[1:], m_right[1:]
    with np.errstate(divide="ignore", invalid="ignore"):
        ux = (hr[1:] - hl[1:] + ml * ul[1:] - mr * ur[1:]) / (ml - mr)
    ok = np.isfinite(ux) & (ml > mr)
    ux = np.clip(np.where(ok, ux, ur[1:]), ul[1:], ur[1:])
    vx = np.maximum(hl[1:] + ml * (ux - ul[1:]), hr[1:] + mr * (ux - ur[1:]))
    vx = np.where(ok, vx, hr[1:])   # degenerate: the cell's maximum, at its right end
    px.append(ux)
    py.append(vx)
    hx, hy = _upper_hull(np.concatenate(px), np.concatenate(py))
    x = 1.0 / d
    val = float(np.interp(x, hx, hy))
    return up(d * val, d * float(hy.max()) * 1e-3 + 1.0)


def vector_spec_renyi(spec: GeneralizedGaussianVector, order: float, direction: str) -> float:
    """Certified upper bound on ``D_order`` of a :class:`GeneralizedGaussianVector` (the same
    in both directions): exact at ``beta = 2`` (``a C^2 / s^2``, Gaussian noise of variance
    ``s^2 / 2`` per coordinate), else :func:`vector_gg_renyi`.  The ``renyi`` plug-in of
    the family's record (:mod:`sampledprv.mechanisms.generalized_gaussian_vector`), so
    ``renyi_divergence`` finds it whatever was imported first."""
    if spec.beta == 2.0:
        return up(order * (spec.clip_norm / spec.scale) ** 2)
    return vector_gg_renyi(spec.beta, spec.clip_norm / spec.scale, spec.effective_dimension,
                           float(order))

