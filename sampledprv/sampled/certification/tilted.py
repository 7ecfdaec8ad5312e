r"""Certified tails by tilted sampling.

For a pair :math:`(P, Q)` with privacy loss :math:`L = \log(dP/dQ)` and an order
:math:`a > 1` whose moment :math:`Z_a = E_Q[(P/Q)^a] = e^{(a-1)D_a}` is known exactly,
the *tilted law* :math:`P_a` has density :math:`p^a q^{1-a}/Z_a`, and for every
function :math:`g`

.. math:: E_P[g(L)] = Z_a\, E_{P_a}\big[e^{-(a-1)L} g(L)\big].

With the hockey-stick integrand :math:`g(L) = (1 - e^{\varepsilon - L})_+`,

.. math:: \delta(\varepsilon) = Z_a e^{-(a-1)\varepsilon}\, E_{P_a}[Y_\varepsilon],
          \qquad Y_\varepsilon = e^{(a-1)(\varepsilon - L)}
          (1 - e^{\varepsilon - L})_+ \in [0, 1],

a bounded mean: ``n`` draws of :math:`L` under :math:`P_a` give confidence bounds on
:math:`E[Y_\varepsilon]` (empirical Bernstein, Maurer and Pontil, "Empirical Bernstein
Bounds and Sample Variance Penalization", COLT 2009, Thm 4), hence on
:math:`\delta(\varepsilon)`, with a *relative* error that does not grow as
:math:`\delta` gets small when :math:`a` is chosen so that :math:`P_a` puts its mass
near :math:`\varepsilon` (:math:`E_{P_a}[L] = \tfrac{d}{da}\log Z_a`).

**Mixtures.**  When :math:`P = \sum_i w_i P_i` and each :math:`Q\prod_j (dP_{i_j}/dQ)`
is a scaled law that can be sampled, :math:`P_a` is a mixture over ``a``-tuples of
components with weights proportional to the terms of the moment :math:`Z_a` (the
terms the exact-moment recursions sum).  :func:`mixture_sampler` turns that description
(the components' log-weights and a per-component sampler of the loss) into a sampler,
and :func:`renyi_tilted` into a :class:`TiltedLaw`; :class:`TiltedLaw` itself is any
proposal :math:`R` with :math:`E_{\text{pair}}[g(L)] = e^s E_R[e^W g(L)]` and a bound
on :math:`W` on the tail.  Concrete laws: :mod:`.tilted_laws`.

**Queries.**  :math:`\delta(\varepsilon)` at one :math:`\varepsilon`: two one-sided
bounds at ``alpha/2`` each.  :math:`\varepsilon(\delta)`: the bounds on a fixed grid of
``m`` values of :math:`\varepsilon` (chosen before sampling), each side at
``alpha/(2m)`` (union bound); :math:`\delta(\cdot)` is non-increasing, so the smallest
grid point whose upper bound on :math:`\delta` is at most the target is an upper end of
:math:`\varepsilon(\delta)`, and the largest whose lower bound exceeds the target a
lower end.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Tuple

import numpy as np

__all__ = ["TiltedLaw", "renyi_tilted", "mean_bounds", "tilted_delta", "tilted_epsilon",
           "mixture_sampler"]


@dataclass(frozen=True)
class TiltedLaw:
    r"""A proposal law :math:`R` for one direction of a pair, with bounded weights on
    the tail: :math:`E_{\text{pair}}[g(L)] = e^{s} E_R[e^{W} g(L)]` for every
    :math:`g`, and :math:`W \le \mathrm{cap}(\varepsilon)` wherever
    :math:`L > \varepsilon`.

    The tilted law :math:`P_a` (:func:`renyi_tilted`) is the case
    :math:`s = \log Z_a`, :math:`W = -(a-1)L`, :math:`\mathrm{cap}(\varepsilon) =
    -(a-1)\varepsilon`.

    Parameters
    ----------
    order : float
        The Renyi order of the tilt (``nan`` for other proposals; informative).
    log_scale : (float, float)
        Lower and upper bounds on :math:`s` (nats).
    draw : callable
        ``draw(rng, n) -> (L, W)``: ``n`` privacy losses (nats) at independent points of
        :math:`R` and their log-weights :math:`W`.
    log_cap : callable
        ``log_cap(eps) -> float``: an upper bound on :math:`W` on :math:`\{L > eps\}`.
    name : str
        What the law is, for the interval's ``method``.
    y_max : float
        An upper bound on :math:`Y_\varepsilon` below (default 1); the Renyi tilt has
        :math:`Y \le \max_{u>0} e^{-(a-1)u}(1-e^{-u}) = (1-1/a)^{a-1}/a`, which
        narrows the confidence bounds by that factor.
    tv : float
        A bound on the total-variation distance between the law ``draw`` samples and
        :math:`R` (its round-off); the confidence bounds on :math:`E[Y/y_{\max}]` are
        widened by it.
    """

    order: float
    log_scale: Tuple[float, float]
    draw: Callable[[np.random.Generator, int], Tuple[np.ndarray, np.ndarray]]
    log_cap: Callable[[float], float]
    name: str = "tilted law"
    y_max: float = 1.0
    tv: float = 0.0

    def __post_init__(self) -> None:
        lo, hi = (float(x) for x in self.log_scale)
        if not (math.isfinite(lo) and math.isfinite(hi) and lo <= hi):
            raise ValueError(f"log_scale must be a finite bracket (lower, upper), got "
                             f"{self.log_scale!r}")


def renyi_tilted(order: float, log_z: Tuple[float, float], draw_losses: Callable,
                 name: str, tv: float = 0.0) -> TiltedLaw:
    r"""The tilted law :math:`P_a` (density :math:`p^a q^{1-a}/Z_a`) from a sampler
    ``draw_losses(rng, n)`` of the loss under it and a bracket on :math:`\log Z_a`."""
    a = float(order)
    if not a > 1.0:
        raise ValueError(f"order must be > 1, got {order!r}")

    def draw(rng: np.random.Generator, n: int) -> Tuple[np.ndarray, np.ndarray]:
        L = np.asarray(draw_losses(rng, n), dtype=np.float64)
        return L, -(a - 1.0) * L
    # max of e^{-(a-1)u}(1 - e^{-u}) over u > 0, at e^{-u} = 1 - 1/a; raised by 1e-12
    y_max = min(1.0, (1.0 - 1.0 / a) ** (a - 1.0) / a * (1.0 + 1e-12))
    return TiltedLaw(a, (float(log_z[0]), float(log_z[1])), draw,
                     lambda eps: -(a - 1.0) * float(eps), name, y_max, float(tv))


def mixture_sampler(log_weights: np.ndarray, component_losses: Callable) -> Callable:
    r"""``draw(rng, n)`` for a tilted law that is a mixture: component ``i`` with
    probability proportional to ``exp(log_weights[i])`` (the terms of the moment
    recursion), then ``component_losses(rng, idx) -> L`` for the chosen indices
    ``idx`` (one loss per index)."""
    lw = np.asarray(log_weights, dtype=np.float64)
    if lw.ndim != 1 or lw.size == 0 or not np.any(np.isfinite(lw)):
        raise ValueError("log_weights must be a non-empty 1-D array with a finite entry")
    p = np.exp(lw - np.max(lw))
    p = p / p.sum()

    def draw(rng: np.random.Generator, n: int) -> np.ndarray:
        idx = rng.choice(p.size, size=int(n), p=p)
        return np.asarray(component_losses(rng, idx), dtype=np.float64)
    return draw


def mean_bounds(y: np.ndarray, alpha_side: float) -> Tuple[float, float]:
    r"""Lower and upper confidence bounds on the mean of i.i.d. variables in
    :math:`[0, 1]`, each side holding with probability ``>= 1 - alpha_side``
    (empirical Bernstein, Maurer and Pontil 2009, Thm 4:
    :math:`\bar Y \pm (\sqrt{2 V_n \ln(2/\alpha)/n} + 7\ln(2/\alpha)/(3(n-1)))`,
    :math:`V_n` the unbiased sample variance), clipped to :math:`[0, 1]`."""
    y = np.asarray(y, dtype=np.float64)
    n = y.size
    if n < 2:
        return 0.0, 1.0
    return _bernstein(float(np.mean(y)), float(np.var(y, ddof=1)), n, alpha_side)


def _bernstein(mean: float, var: float, n: int, alpha_side: float) -> Tuple[float, float]:
    """:func:`mean_bounds` from the sample mean and unbiased variance of ``n >= 2``
    values."""
    ln = math.log(2.0 / alpha_side)
    rad = math.sqrt(2.0 * var * ln / n) + 7.0 * ln / (3.0 * (n - 1))
    # round-off of the float sums (n terms in [0, 1]): far below n * 2^-52 absolute
    slack = 4.0 * n * 2.0 ** -52
    return max(0.0, mean - rad - slack), min(1.0, mean + rad + slack)


def _scaled(losses: np.ndarray, log_w: np.ndarray, cap, eps) -> np.ndarray:
    r""":math:`Y_\varepsilon` before the division by ``y_max``; ``cap`` and ``eps`` are
    floats, or columns (one row of ``Y`` per value: the same operations, elementwise)."""
    d = eps - losses
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        y = np.where(d < 0.0, np.exp(np.minimum(log_w - cap, 0.0)) * (-np.expm1(d)), 0.0)
    if np.any((d < 0.0) & (log_w > cap + 1e-9 * (1.0 + abs(cap)))):
        raise ValueError("a tilted draw's weight exceeds the law's cap: the law's log_cap "
                         "is not a bound (a bug in the law, not in the input)")
    return y


def tilted_delta(law: TiltedLaw, draws: Tuple[np.ndarray, np.ndarray], eps: float,
                 alpha: float) -> Tuple[float, float, float]:
    r"""``(lower, estimate, upper)`` on :math:`\delta(\varepsilon)` of the law's
    direction from ``draws = law.draw(rng, n)``; both ends hold together with
    probability ``>= 1 - alpha``.

    :math:`\delta(\varepsilon) = e^{s + \mathrm{cap}} E_R[Y]` with
    :math:`Y = e^{W - \mathrm{cap}}(1 - e^{\varepsilon - L})_+ \in [0, 1]`."""
    losses, log_w = (np.asarray(x, dtype=np.float64) for x in draws)
    cap = float(law.log_cap(float(eps)))
    ym = float(law.y_max)
    y = _scaled(losses, log_w, cap, float(eps)) / ym
    if np.any(y > 1.0):
        raise ValueError("a tilted draw exceeds the law's y_max (a bug in the law)")
    lo, up = mean_bounds(y, alpha / 2.0)
    return _delta_bounds(law, cap, lo, up, float(np.mean(y)))


def _delta_bounds(law: TiltedLaw, cap: float, lo: float, up: float,
                  mean: float) -> Tuple[float, float, float]:
    r""":func:`tilted_delta` from the confidence bounds ``lo``, ``up`` and the sample
    mean of :math:`Y/y_{\max}`."""
    ym = float(law.y_max)
    lo, up = ym * max(0.0, lo - law.tv), ym * min(1.0, up + law.tv)
    scale_lo, scale_up = law.log_scale[0] + cap, law.log_scale[1] + cap
    rel = 1e-12                                   # the exp/log round-off, outward
    est = math.exp(0.5 * (scale_lo + scale_up)) * ym * mean
    low = math.exp(scale_lo) * lo * (1.0 - rel) if lo > 0 else 0.0
    upp = min(1.0, math.exp(scale_up) * up * (1.0 + rel))
    return low, min(max(est, low), upp), upp


#: at most this many values of :math:`Y` held at once by :func:`_tilted_deltas`
_ROWS_ELEMENTS = 1 << 20


def _tilted_deltas(law: TiltedLaw, draws: Tuple[np.ndarray, np.ndarray], eps: np.ndarray,
                   alpha: float) -> list:
    """``[tilted_delta(law, draws, e, alpha) for e in eps]``, the same numbers: the
    values :math:`Y` of a block of ``eps`` are one array, a row per value, made by the
    same elementwise operations, and the rows' means and variances are numpy's
    reductions along a row (the same pairwise sums as for one row alone)."""
    losses, log_w = (np.asarray(x, dtype=np.float64) for x in draws)
    n = losses.size
    if n < 2:
        return [tilted_delta(law, draws, float(e), alpha) for e in eps]
    ym = float(law.y_max)
    caps = np.array([float(law.log_cap(float(e))) for e in eps], dtype=np.float64)
    step = max(1, _ROWS_ELEMENTS // n)
    rows = []
    for a in range(0, eps.size, step):
        cap = caps[a:a + step, None]
        y = _scaled(losses[None, :], log_w[None, :], cap, eps[a:a + step, None]) / ym
        if np.any(y > 1.0):
            raise ValueError("a tilted draw exceeds the law's y_max (a bug in the law)")
        means = np.mean(y, axis=1)
        var = np.var(y, axis=1, ddof=1)
        for j in range(means.size):
            lo, up = _bernstein(float(means[j]), float(var[j]), n, alpha / 2.0)
            rows.append(_delta_bounds(law, float(caps[a + j]), lo, up, float(means[j])))
    return rows


def tilted_epsilon(law: TiltedLaw, draws: Tuple[np.ndarray, np.ndarray], delta: float,
                   grid: np.ndarray, alpha: float) -> Tuple[float, float, float]:
    r"""``(lower, estimate, upper)`` on :math:`\varepsilon(\delta)` from the bounds on
    :math:`\delta` at the points of ``grid`` (fixed before the draws are read; each
    side at ``alpha / (2 len(grid))``).  ``upper`` is ``inf`` when no grid point is
    certified below ``delta``; ``lower`` is 0 when none is certified above it."""
    grid = np.sort(np.asarray(grid, dtype=np.float64))
    m = grid.size
    if m == 0:
        raise ValueError("grid must hold at least one epsilon")
    rows = _tilted_deltas(law, draws, grid, alpha / m)
    lows = np.array([r[0] for r in rows])
    ests = np.array([r[1] for r in rows])
    ups = np.array([r[2] for r in rows])
    ok = np.flatnonzero(ups <= delta)
    upper = float(grid[ok[0]]) if ok.size else math.inf
    above = np.flatnonzero(lows > delta)
    lower = float(grid[above[-1]]) if above.size else 0.0
    below = np.flatnonzero(ests <= delta)
    est = float(grid[below[0]]) if below.size else upper
    return lower, min(max(est, lower), upper), upper
