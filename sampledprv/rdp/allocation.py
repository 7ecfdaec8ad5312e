r"""Renyi divergences of random allocation (``k`` of ``T`` steps; balls-and-bins ``k = 1``).

The dominating pair (design notes, "Batch samplers: random allocation") is
:math:`P = \binom Tk^{-1}\sum_{|S|=k} A^{S} B^{S^c}`, :math:`Q = B^{\otimes T}` for a
base step pair :math:`(A, B)` with loss :math:`\ell = \log a/b`.  Write
:math:`M(c) = E_B[(a/b)^c] = e^{(c-1)D_c(A\|B)}` (:math:`M(0) = M(1) = 1`; Gaussian
steps: :math:`M(c) = e^{c(c-1)\mu^2/2}`).

Remove direction (:func:`remove_log_moment`).  For an integer order :math:`\alpha`,
expanding :math:`(P/Q)^\alpha` over :math:`\alpha` independent subsets
:math:`S_1..S_\alpha` and integrating coordinate by coordinate,

.. math:: E_Q[(P/Q)^\alpha] = E\Big[\prod_{t=1}^T M(c_t)\Big], \qquad
          c_t = \#\{i : t \in S_i\},

which for Gaussian steps is :math:`E[\exp(\mu^2\sum_{i<j}|S_i\cap S_j|)]`.

* ``k = 1`` (exact): :math:`(c_t)` is multinomial (:math:`\alpha` balls in :math:`T`
  bins), so with :math:`f(x) = \sum_{j \le \alpha} M(j) x^j/j!`,
  :math:`E = \alpha!\, T^{-\alpha} [x^\alpha] f(x)^T`.
* ``k > 1`` (exact): the occupancy recursion of :mod:`.occupancy` (the ``a`` subsets
  revealed step by step, a Markov chain on how many subsets have how many elements so
  far; compiled, swept from both ends), wherever it is
  :func:`~.occupancy.affordable` (``ceil(T/2) * C(a + 2k, 2k)`` transition evaluations
  within :data:`~.occupancy.MAX_TRANSITIONS`).
* ``k > 1`` beyond that budget (upper bounds, the smaller wins): the block reduction of
  :mod:`.allocation_reduction` (the sum of the exact balls-and-bins moments of ``k``
  blocks of about ``T/k`` steps, by Jensen's inequality over a random permutation), and
  Hoeffding's comparison: each :math:`1_{S_i}` is a sum of ``k`` draws *without*
  replacement from the vectors :math:`e_1..e_T`; :math:`c \mapsto \prod_t M(c_t)` is
  convex (:math:`\log M` is a cumulant generating function, hence convex, and
  :math:`\exp` of a convex function is convex), so by Hoeffding's comparison (1963,
  Thm 4; for vector populations Gross & Nesme 2010, arXiv 1001.2738) replacing each
  :math:`S_i` in turn by ``k`` draws *with* replacement can only increase the
  expectation: :math:`E \le` the ``k = 1`` formula with :math:`\alpha k` balls.

Add direction (:func:`add_divergence`).  By the AM-GM (Jensen) inequality
:math:`\log(P/Q) \ge \binom Tk^{-1}\sum_S\sum_{t\in S}\ell_t = \tfrac kT\sum_t \ell_t`,
so the add loss :math:`-\log(P/Q) \le -\tfrac kT\sum_t\ell(x_t)` with
:math:`x_t \sim B` i.i.d., and for every real :math:`\lambda > 1`

.. math:: D_\lambda(Q\|P) \le k\, D_{1 + (\lambda-1)k/T}(B\|A)

(Gaussian steps: :math:`k\mu^2/2 + (\lambda-1)k^2\mu^2/(2T)`).

Orders that are not integers (remove direction) are bounded by the chord of the
convex :math:`(\alpha-1)D_\alpha` between the neighbouring integers.  Every value is
rounded up (:mod:`sampledprv.core.outward`).
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from ..mechanisms import Gaussian
from ..core.outward import up
from .divergence import spec_divergence
from .allocation_reduction import block_counts
from .occupancy import affordable, occupancy_log_moment

__all__ = ["log_multinomial_moment", "remove_log_moment", "remove_divergence", "reduction_log_moment",
           "add_divergence", "step_log_moment", "step_add_divergence", "MAX_BALLS"]

#: Largest number of balls (order x selected) of the exact remove-direction moment.
MAX_BALLS = 96


def _log_mul(a: np.ndarray, b: np.ndarray, n: int) -> np.ndarray:
    """Log-coefficients of the product of two power series (log-coefficients), to
    degree ``n``."""
    i = np.arange(n + 1)
    d = i[:, None] - i[None, :]                      # d - i for output degree d
    with np.errstate(invalid="ignore"):
        mat = np.where(d >= 0, a[None, : n + 1] + b[np.clip(d, 0, n)], -np.inf)
    top = np.max(mat, axis=1)
    safe = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        return np.where(np.isfinite(top),
                        safe + np.log(np.sum(np.exp(mat - safe[:, None]), axis=1)), -np.inf)


def log_multinomial_moment(log_m: np.ndarray, bins: int) -> float:
    r""":math:`\log E[\prod_b M(n_b)]` for :math:`N` balls thrown uniformly into
    ``bins`` bins, ``log_m[j] = log M(j)`` for ``j = 0..N`` (exact up to round-off).

    :math:`E = N!\,T^{-N}[x^N](\sum_j M(j)x^j/j!)^T`, by repeated squaring of the
    truncated series in log space (all coefficients positive: no cancellation)."""
    log_m = np.asarray(log_m, dtype=np.float64)
    n = log_m.size - 1
    j = np.arange(n + 1, dtype=np.float64)
    base = log_m - np.array([math.lgamma(x + 1.0) for x in j])
    result = np.full(n + 1, -np.inf)
    result[0] = 0.0
    power = base.copy()
    e = int(bins)
    while e > 0:
        if e & 1:
            result = _log_mul(result, power, n)
        e >>= 1
        if e:
            power = _log_mul(power, power, n)
    return float(math.lgamma(n + 1.0) - n * math.log(bins) + result[n])


def step_log_moment(base: Any, c: int) -> float:
    r"""Upper bound on :math:`\log M(c) = (c-1) D_c(A\|B)` of a base step spec
    (exact :math:`c(c-1)\mu^2/2` for a Gaussian; else
    :func:`sampledprv.rdp.renyi_divergence`)."""
    if c <= 1:
        return 0.0
    if isinstance(base, Gaussian):
        return up(0.5 * c * (c - 1) * base.mu * base.mu)
    return up((c - 1) * spec_divergence(base, float(c), "remove"))


def step_add_divergence(base: Any, lam: float) -> float:
    r"""Upper bound on :math:`D_\lambda(B\|A)` of a base step spec."""
    if isinstance(base, Gaussian):
        return up(0.5 * lam * base.mu * base.mu)
    return spec_divergence(base, float(lam), "add")


@functools.lru_cache(maxsize=4096)
def remove_log_moment(order: int, steps: int, selected: int, base: Any) -> float:
    r"""Upper bound on :math:`\log E_Q[(P/Q)^\alpha]` at an integer order; ``base`` is
    the step spec.

    Exact up to round-off (for Gaussian steps; else as tight as the step's
    :math:`M(c)` bounds) for ``selected = 1`` (multinomial expansion) and, for
    ``selected > 1``, wherever the occupancy recursion of :mod:`.occupancy` is
    :func:`~.occupancy.affordable`; beyond it the smaller of the block reduction
    (:mod:`.allocation_reduction`, ``order`` balls per block) and Hoeffding's comparison
    bound (``order * selected`` balls), each where it has at most :data:`MAX_BALLS`
    balls, else ``inf``."""
    a, k, T = int(order), int(selected), int(steps)
    if k > 1 and affordable(a, T, k):
        lm = np.array([0.0, 0.0] + [step_log_moment(base, c) for c in range(2, a + 1)])[: a + 1]
        if not np.all(np.isfinite(lm)):
            return math.inf
        val = occupancy_log_moment(lm, T, k)
        return up(max(val, 0.0), max(float(np.max(lm)), float(T)))
    block = reduction_log_moment(a, T, k, base) if k > 1 else math.inf
    balls = a * k
    if balls > MAX_BALLS:
        return block
    lm = np.array([0.0, 0.0] + [step_log_moment(base, c) for c in range(2, balls + 1)])
    lm = lm[: balls + 1]
    if not np.all(np.isfinite(lm)):
        return block
    val = log_multinomial_moment(lm, steps)
    return min(block, up(max(val, 0.0), float(np.max(lm)) + balls))


def remove_divergence(order: float, steps: int, selected: int, base: Any) -> float:
    r"""Upper bound on :math:`D_\alpha(P\|Q)` for any real order :math:`\alpha > 1`
    (``inf`` beyond :data:`MAX_BALLS`)."""
    a = float(order)
    lo, hi = math.floor(a), math.ceil(a)
    if lo == hi:
        return remove_log_moment(int(a), steps, selected, base) / (a - 1.0)
    k_hi = remove_log_moment(int(hi), steps, selected, base)
    k_lo = 0.0 if lo <= 1 else remove_log_moment(int(lo), steps, selected, base)
    if not (math.isfinite(k_hi) and math.isfinite(k_lo)):
        return math.inf
    lo = max(lo, 1)
    chord = (k_lo * (hi - a) + k_hi * (a - lo)) / (hi - lo)
    return up(chord / (a - 1.0), max(k_lo, k_hi) / (a - 1.0))


def add_divergence(order: float, steps: int, selected: int, base: Any) -> float:
    r"""Upper bound :math:`k\,D_{1+(\alpha-1)k/T}(B\|A)` on :math:`D_\alpha(Q\|P)`
    (``base`` the step spec)."""
    a = float(order)
    k, T = int(selected), int(steps)
    return up(k * step_add_divergence(base, 1.0 + (a - 1.0) * k / T))


def reduction_log_moment(order: int, steps: int, selected: int, base: Any) -> float:
    r"""Upper bound :math:`\sum_j \log E[(P^{(1,T_j)}/Q^{(1,T_j)})^\alpha]` on the
    remove-direction log-moment :math:`(\alpha-1)D_\alpha(P\|Q)` of ``selected``-of-
    ``steps`` allocation at an integer order (the block theorem of the module notes with
    :math:`f(x) = x^\alpha`; each block's moment is the exact balls-and-bins moment of
    :func:`remove_log_moment`), ``inf`` beyond its reach."""
    total = 0.0
    for size, count in block_counts(steps, selected):
        total += count * remove_log_moment(int(order), size, 1, base)
    return up(total, total)
