r"""Certified tails by tilted sampling (issue 33, item 3).

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
terms the exact-moment recursions sum).  :class:`TiltedLaw` takes that description:
``log Z_a`` (bracketed) and a sampler of :math:`L` under :math:`P_a` (typically: pick
a component by its log-weight, then draw its coordinates).  Concrete laws:
:mod:`.tilted_laws`.

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

__all__ = ["TiltedLaw", "mean_bounds", "tilted_delta", "tilted_epsilon", "mixture_sampler"]


@dataclass(frozen=True)
class TiltedLaw:
    r"""The tilted law :math:`P_a` of one direction of a pair.

    Parameters
    ----------
    order : float
        :math:`a > 1`.
    log_z : (float, float)
        Lower and upper bounds on :math:`\log Z_a = (a-1) D_a(P\|Q)` (nats).
    draw : callable
        ``draw(rng, n) -> numpy.ndarray``: ``n`` privacy losses :math:`L` (nats) at
        independent points of :math:`P_a`.
    name : str
        What the law is, for the interval's ``method``.
    """

    order: float
    log_z: Tuple[float, float]
    draw: Callable[[np.random.Generator, int], np.ndarray]
    name: str = "tilted law"

    def __post_init__(self) -> None:
        if not self.order > 1.0:
            raise ValueError(f"order must be > 1, got {self.order!r}")
        lo, hi = (float(x) for x in self.log_z)
        if not (math.isfinite(lo) and math.isfinite(hi) and lo <= hi):
            raise ValueError(f"log_z must be a finite bracket (lower, upper), got "
                             f"{self.log_z!r}")


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
    mean = float(np.mean(y))
    var = float(np.var(y, ddof=1))
    ln = math.log(2.0 / alpha_side)
    rad = math.sqrt(2.0 * var * ln / n) + 7.0 * ln / (3.0 * (n - 1))
    # round-off of the float sums (n terms in [0, 1]): far below n * 2^-52 absolute
    slack = 4.0 * n * 2.0 ** -52
    return max(0.0, mean - rad - slack), min(1.0, mean + rad + slack)


def _scaled(losses: np.ndarray, a: float, eps: float) -> np.ndarray:
    d = eps - losses
    with np.errstate(over="ignore", under="ignore"):
        return np.where(d < 0.0, np.exp((a - 1.0) * d) * (-np.expm1(d)), 0.0)


def tilted_delta(law: TiltedLaw, losses: np.ndarray, eps: float,
                 alpha: float) -> Tuple[float, float, float]:
    r"""``(lower, estimate, upper)`` on :math:`\delta(\varepsilon)` of the law's
    direction from ``losses`` drawn under :math:`P_a`; both ends hold together with
    probability ``>= 1 - alpha``."""
    a = float(law.order)
    y = _scaled(np.asarray(losses, dtype=np.float64), a, float(eps))
    lo, up = mean_bounds(y, alpha / 2.0)
    scale_lo = law.log_z[0] - (a - 1.0) * eps
    scale_up = law.log_z[1] - (a - 1.0) * eps
    rel = 1e-12                                   # the exp/log round-off, outward
    est = math.exp(0.5 * (scale_lo + scale_up)) * float(np.mean(y))
    low = math.exp(scale_lo) * lo * (1.0 - rel) if lo > 0 else 0.0
    upp = min(1.0, math.exp(scale_up) * up * (1.0 + rel))
    return low, min(max(est, low), upp), upp


def tilted_epsilon(law: TiltedLaw, losses: np.ndarray, delta: float, grid: np.ndarray,
                   alpha: float) -> Tuple[float, float, float]:
    r"""``(lower, estimate, upper)`` on :math:`\varepsilon(\delta)` from the bounds on
    :math:`\delta` at the points of ``grid`` (fixed before sampling; each side at
    ``alpha / (2 len(grid))``).  ``upper`` is ``inf`` when no grid point is certified
    below ``delta``; ``lower`` is 0 when none is certified above it."""
    grid = np.sort(np.asarray(grid, dtype=np.float64))
    m = grid.size
    if m == 0:
        raise ValueError("grid must hold at least one epsilon")
    rows = [tilted_delta(law, losses, float(e), alpha / m) for e in grid]
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
