r"""Certified Renyi divergence of the 1-D Generalized Gaussian mechanism.

For noise density :math:`p(t) = e^{-|t|^\beta}/Z`, :math:`Z = 2\Gamma(1 + 1/\beta)` (the
scale divided out, so the shift is :math:`\delta = \Delta / s`), the order-``a`` Renyi
divergence between :math:`P = GG(0)` and :math:`Q = GG(\delta)` is

.. math::

    D_a(P\|Q) = \frac{1}{a-1}\log\frac{1}{Z}\int_{\mathbb R} e^{\varphi(t)}\,dt,
    \qquad \varphi(t) = -a|t|^\beta + (a-1)|t-\delta|^\beta ,

and :math:`D_a(Q\|P) = D_a(P\|Q)` (reflect :math:`t \mapsto \delta - t`).

**The integrand is unimodal.**  For :math:`t > \delta` and :math:`0 < t < \delta`,
:math:`\varphi' < 0`.  For :math:`t = -u < 0`,
:math:`d\varphi/du = \beta[(a-1)(u+\delta)^{\beta-1} - a u^{\beta-1}]`, positive iff
:math:`u < u^* = \delta / ((a/(a-1))^{1/(\beta-1)} - 1)` (``beta > 1``; ``u* = 0`` for
``beta = 1``).  So :math:`e^\varphi` increases up to :math:`t^* = -u^*` and decreases after.

**Certified quadrature.**  On a grid containing :math:`t^*` each cell is monotone, so its
integral lies between ``width * min`` and ``width * max`` of the endpoint values
(monotone bracketing); cells are split until the bracket is within ``rtol`` (relative).
Tails: for :math:`t \ge R \ge \delta`, :math:`\varphi(t) \le -t^\beta` and
:math:`\int_R^\infty e^{-t^\beta} \le e^{-R^\beta}/(\beta R^{\beta-1})`; for
:math:`t = -u \le -U`, :math:`\varphi \le -c\,u^\beta` with
:math:`c = a - (a-1)(1+\delta/U)^\beta > 0`, giving
:math:`e^{-cU^\beta}/(c\beta U^{\beta-1})`.  Every exponent carries a floating-point
margin and the result is rounded outward (:mod:`sampledprv.core.outward`).
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Optional, Tuple

import numpy as np

from ..core.outward import down, up

__all__ = ["gg_renyi_bounds"]

_N0 = 512          # initial cells per side of the mode
_MAX_ROUNDS = 12
_TAIL_EXP = 60.0   # tails cut where the integrand is below e^-60 of its peak


def _phi(t: np.ndarray, a: float, beta: float, delta: float) -> Tuple[np.ndarray, np.ndarray]:
    """The exponent and a bound on its floating-point error.

    Outside ``[0, delta]`` the two powers nearly cancel for large orders, so there
    :math:`(a-1)|t-\\delta|^\\beta - a|t|^\\beta = -|t|^\\beta + (a-1)|t|^\\beta
    \\,\\mathrm{expm1}(\\beta\\log(1 - \\delta/t))` is evaluated instead."""
    t = np.asarray(t, dtype=float)
    x = np.abs(t) ** beta
    outside = (t < 0.0) | (t > delta)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(outside, np.expm1(beta * np.log1p(-delta / np.where(t == 0, 1.0, t))),
                       0.0)
    inner_y = np.abs(t - delta) ** beta
    phi = np.where(outside, -x + (a - 1.0) * x * rel, (a - 1.0) * inner_y - a * x)
    mag = np.where(outside, x + (a - 1.0) * x * np.abs(rel), a * x + (a - 1.0) * inner_y)
    # float margin: a few ulps per operation, 1e-14 relative to the magnitudes involved
    return phi, 1e-14 * mag + 1e-300


def _mode(a: float, beta: float, delta: float) -> float:
    if beta == 1.0:
        return 0.0
    denom = math.expm1(math.log1p(1.0 / (a - 1.0)) / (beta - 1.0))
    if denom == math.inf:
        return 0.0
    return -delta / denom


@lru_cache(maxsize=65536)
def gg_renyi_bounds(beta: float, shift: float, order: float,
                    rtol: Optional[float] = None) -> Tuple[float, float]:
    r"""Certified ``(lower, upper)`` on :math:`D_a(GG(0)\|GG(\delta))`, both directions.

    Parameters
    ----------
    beta : float
        Shape (``>= 1``).
    shift : float
        :math:`\delta = \Delta / s`, the sensitivity in units of the scale (``>= 0``).
    order : float
        Renyi order ``a > 1``.
    rtol : float, optional
        Target relative width of the bracket on the integral (the divergence bracket is
        about ``rtol / (a - 1)`` wide); default ``min(1e-3, 1e-4 (a - 1))``, a bracket
        of about ``1e-4`` nats.
    """
    a, b, d = float(order), float(beta), float(shift)
    if not a > 1.0 or not math.isfinite(a):
        raise ValueError(f"order must be a finite number > 1, got {order!r}")
    if not b >= 1.0 or not math.isfinite(b):
        raise ValueError(f"beta must be a finite number >= 1, got {beta!r}")
    if not d >= 0.0 or not math.isfinite(d):
        raise ValueError(f"shift must be a finite number >= 0, got {shift!r}")
    if d == 0.0:
        return 0.0, 0.0
    rtol = min(1e-3, 1e-4 * (a - 1.0)) if rtol is None else float(rtol)
    ts = _mode(a, b, d)
    phi_s = float(_phi(np.array([ts]), a, b, d)[0][0])          # the peak exponent (> 0)
    # right end R >= delta with e^{-R^b} negligible against the peak
    r_end = max(d, 1.0, (max(phi_s, 0.0) + _TAIL_EXP) ** (1.0 / b))
    right_tail = math.exp(-r_end ** b - phi_s) / (b * r_end ** (b - 1.0))
    # left end U >= 2 u* with c(U) >= 1/2 and c U^b beyond the peak
    u_end = max(-2.0 * ts, d, 1.0)
    for _ in range(200):
        c = 1.0 - (a - 1.0) * math.expm1(b * math.log1p(d / u_end))
        if c >= 0.5 and c * u_end ** b >= phi_s + _TAIL_EXP:
            break
        u_end *= 1.5
    else:  # pragma: no cover - unreachable for finite inputs
        raise ValueError(f"could not bound the left tail (beta={b}, shift={d}, order={a})")
    left_tail = math.exp(-c * u_end ** b - phi_s) / (c * b * u_end ** (b - 1.0))
    tails = (right_tail + left_tail) * (1.0 + 1e-12)

    nodes = np.concatenate([np.linspace(-u_end, ts, _N0 + 1),
                            np.linspace(ts, r_end, _N0 + 1)[1:]])
    for _ in range(_MAX_ROUNDS):
        phi, err = _phi(nodes, a, b, d)
        f_up = np.exp(phi - phi_s + err)
        f_lo = np.exp(phi - phi_s - err)
        h = np.diff(nodes)
        cell_up = h * np.maximum(f_up[:-1], f_up[1:])
        cell_lo = h * np.minimum(f_lo[:-1], f_lo[1:])
        s_up = float(cell_up.sum()) * (1.0 + 1e-12) + tails
        s_lo = float(cell_lo.sum()) * (1.0 - 1e-12)
        f_mid = np.exp(phi - phi_s)
        disc = float((h * np.abs(np.diff(f_mid))).sum())   # the part refinement can shrink
        if s_up - s_lo <= rtol * s_lo or disc <= 0.25 * rtol * s_lo:
            break
        # split cell j into k_j pieces (its gap shrinks to gap_j / k_j): the allocation
        # k_j ~ sqrt(gap_j) minimises sum k_j subject to sum gap_j / k_j <= rtol * s / 2
        gap = cell_up - cell_lo
        root = np.sqrt(gap)
        # (a lower sum that underflowed to zero: measure the gaps against the upper one)
        k = np.ceil(root * (root.sum() / (0.5 * rtol * (s_lo if s_lo > 0 else s_up))))
        k = np.clip(k, 1, 4096).astype(np.int64)
        if int(k.sum()) > 2_000_000:
            k = np.maximum(1, (k * (2_000_000 / k.sum())).astype(np.int64))
        starts = np.repeat(nodes[:-1], k)
        step = np.repeat(h / k, k)
        offs = np.arange(starts.size) - np.repeat(np.cumsum(k) - k, k)
        nodes = np.concatenate([starts + offs * step, nodes[-1:]])
    log_z = math.log(2.0) + math.lgamma(1.0 + 1.0 / b)
    scale = abs(phi_s) + abs(log_z) + 1.0
    upper = up((phi_s + math.log(s_up) - log_z) / (a - 1.0), scale / (a - 1.0))
    lower = max(0.0, down((phi_s + math.log(s_lo) - log_z) / (a - 1.0), scale / (a - 1.0)))
    return lower, upper
