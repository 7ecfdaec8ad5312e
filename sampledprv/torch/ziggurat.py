r"""Ziggurat tables of the unit-scale Generalized Gaussian (pure math, no torch).

The half density :math:`f(x) = e^{-x^\beta}` on :math:`x \ge 0` is decreasing, so it is
covered by ``N`` horizontal strips of equal area :math:`v` (Marsaglia and Tsang's
ziggurat).  With :math:`x_1 = r` and, for :math:`i = 1, \dots, N-1`,

.. math::  f(x_{i+1}) = f(x_i) + v / x_i, \qquad x_N = 0,

strip :math:`i \ge 1` is the box :math:`[0, x_i] \times [f(x_i), f(x_{i+1})]`; strip 0 is
the box :math:`[0, r] \times [0, f(r)]` plus the tail :math:`x > r`, of area
:math:`v = r f(r) + \int_r^\infty f` and virtual width :math:`x_0 = v / f(r)`.  ``r`` is
fixed (by bisection) so that the top strip ends at :math:`f(0) = 1`.

A draw picks a strip ``i`` uniformly and a point :math:`x = u x_i`, ``u`` uniform:

* :math:`x < x_{i+1}` lies under the curve: accept (the *fast path*, about 98% of draws
  at ``N = 256`` for beta in [1, 4]);
* strip 0 beyond ``r``: draw from the tail, :math:`x = (r^\beta + E)^{1/\beta}` with
  :math:`E \sim \mathrm{Exp}(1)` (density :math:`\propto x^{\beta-1} e^{-x^\beta}` on
  :math:`x > r`), accepted with probability :math:`(r/x)^{\beta-1} \le 1`; retry the tail
  on rejection;
* otherwise the *wedge*: accept if :math:`f(x_i) + V (f(x_{i+1}) - f(x_i)) < f(x)`,
  ``V`` uniform; on rejection start again with a new strip.

Every accepted point is uniform under the curve, so :math:`|X|` has density
:math:`\propto e^{-x^\beta}` exactly; a random sign makes :math:`X \sim GG(\beta, 1)`.

Integer form (one 32-bit word per fast draw): bits 0-7 give ``i``, bit 8 the sign and bits
9-31 the 23-bit integer ``u``; :math:`x = u\,x_i 2^{-23}` and the fast test
:math:`x < x_{i+1}` is exactly ``u < K_i`` with :math:`K_i = \lceil 2^{23} x_{i+1}/x_i
\rceil`.  The tables hold ``K`` (int32), :math:`W_i = x_i 2^{-23}` and :math:`F_i = f(x_i)`
(float32, :math:`F_N = 1`).  :mod:`sampledprv.torch.fused_gg` runs this on the GPU.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy import special

__all__ = ["ZigguratTables", "ziggurat_tables", "LAYERS", "U_BITS"]

LAYERS = 256       # strips: the low 8 bits of a word choose one
U_BITS = 23        # bits of the within-strip uniform (bit 8 is the sign)


@dataclass(frozen=True)
class ZigguratTables:
    """Ziggurat of :math:`e^{-x^\\beta}` on ``[0, inf)`` (see the module docstring).

    Attributes
    ----------
    beta : float
        Shape parameter (``>= 1``).
    r : float
        Start of the tail, :math:`x_1`.
    v : float
        Area of each strip.
    x : numpy.ndarray
        ``LAYERS + 1`` strip widths :math:`x_0 > x_1 = r > \\dots > x_N = 0` (float64).
    k : numpy.ndarray
        int32 fast-path thresholds :math:`K_i = \\lceil 2^{23} x_{i+1} / x_i \\rceil`.
    w : numpy.ndarray
        float32 :math:`x_i 2^{-23}` (``LAYERS`` entries).
    f : numpy.ndarray
        float32 :math:`f(x_i)` (``LAYERS + 1`` entries, the last one 1).
    fast_fraction : float
        Probability of the fast path, :math:`\\frac1N \\sum_i x_{i+1}/x_i`.
    """

    beta: float
    r: float
    v: float
    x: np.ndarray
    k: np.ndarray
    w: np.ndarray
    f: np.ndarray
    fast_fraction: float


def _tail_area(beta: float, r: float) -> float:
    r""":math:`\int_r^\infty e^{-x^\beta} dx = \Gamma(1/\beta)\,Q(1/\beta, r^\beta)/\beta`."""
    a = 1.0 / beta
    return float(special.gamma(a) * special.gammaincc(a, r ** beta) / beta)


def _strips(beta: float, r: float, layers: int):
    """Widths from ``r`` upwards; returns (top height - 1, widths, v); widths is None when the
    strips reach height 1 before the last one (``r`` too small)."""
    fr = math.exp(-r ** beta)
    v = r * fr + _tail_area(beta, r)
    x = [v / fr, r]
    y = fr
    for i in range(1, layers - 1):
        y += v / x[i]
        if y >= 1.0:
            return float(layers - i), None, v
        x.append((-math.log(y)) ** (1.0 / beta))
    return y + v / x[layers - 1] - 1.0, x, v


@lru_cache(maxsize=64)
def ziggurat_tables(beta: float, layers: int = LAYERS) -> ZigguratTables:
    """The ziggurat of :math:`GG(\\beta)` (``beta >= 1``) with ``layers`` strips.

    ``r`` is found by bisection on :math:`\\log r` until the top strip's upper edge is 1
    to float64 accuracy (about 1e-14)."""
    beta = float(beta)
    if not (1.0 <= beta < math.inf):
        raise ValueError(f"beta must be a finite number >= 1, got {beta!r}")
    if layers != LAYERS:
        raise ValueError(f"layers must be {LAYERS} (the word layout uses 8 bits), got {layers}")
    lo, hi = math.log(1e-3), math.log(700.0) / beta      # f(e^hi) = e^-700 > 0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        top, _x, _v = _strips(beta, math.exp(mid), layers)
        if top > 0.0:
            lo = mid
        else:
            hi = mid
    top, x, v = _strips(beta, math.exp(hi), layers)
    if x is None or abs(top) > 1e-9:
        raise ValueError(f"no ziggurat of {layers} strips found for beta={beta!r}")
    x = np.array(x + [0.0])
    ratio = x[1:] / x[:-1]
    k = np.ceil(ratio * 2.0 ** U_BITS).astype(np.int64)
    if k.max() > 2 ** U_BITS:
        raise ValueError("ziggurat thresholds exceed the 23-bit uniform")
    return ZigguratTables(
        beta=beta, r=float(x[1]), v=float(v), x=x,
        k=k.astype(np.int32), w=(x[:-1] * 2.0 ** -U_BITS).astype(np.float32),
        f=np.append(np.exp(-x[:-1] ** beta), 1.0).astype(np.float32),
        fast_fraction=float(ratio.mean()))
