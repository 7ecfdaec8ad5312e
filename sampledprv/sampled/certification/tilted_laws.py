r"""Tilted laws :math:`P_a` of mixtures of Gaussians.

Each law here is the remove direction :math:`(P, Q)`, :math:`Q = N(0, I)`, of a
mixture :math:`P = \sum_i w_i N(\mu v_i, I)` composed ``count`` times (independent
copies: :math:`P_a` is the product of the copies' tilted laws and
:math:`Z_a` the product of their moments).  With
:math:`r_i(x) = dN(\mu v_i, I)/dQ(x) = e^{\mu v_i\cdot x - \mu^2|v_i|^2/2}`,

.. math:: Q(x)\prod_{j \le a} r_{i_j}(x) = e^{\mu^2\sum_{j<l} v_{i_j}\cdot v_{i_l}}\,
          N\Big(\mu\sum_j v_{i_j}, I\Big)(x),

so :math:`P_a` is the mixture over ``a``-tuples of components with weights
:math:`\prod_j w_{i_j}\, e^{\mu^2\sum_{j<l} v_{i_j}\cdot v_{i_l}}` (the terms of
:math:`Z_a`) of Gaussians centred at :math:`\mu\sum_j v_{i_j}`.

* Poisson-subsampled Gaussian (:func:`poisson_gaussian_law`): components ``0`` and
  ``1`` (one coordinate), weights ``1 - q`` and ``q``; a tuple with ``c`` ones has weight
  :math:`\binom ac q^c(1-q)^{a-c}e^{c(c-1)\mu^2/2}` and centre :math:`c\mu`.
* ``k``-of-``T`` random allocation with Gaussian steps (:func:`allocation_law`):
  components the ``k``-subsets (indicator vectors), the tuple's weight
  :math:`\binom Tk^{-a}\prod_t M(c_t)` and centre :math:`\mu c` with :math:`c_t` the
  occupancy of step ``t``; the tuple is drawn by running the occupancy recursion
  (:mod:`sampledprv.rdp.occupancy`) backwards.
"""

from __future__ import annotations

import math
import numpy as np
from numba import njit

from ...rdp import occupancy as occ
from .tilted import TiltedLaw, mixture_sampler, renyi_tilted

__all__ = ["poisson_gaussian_law", "allocation_law", "storable", "MAX_STORED"]


def _lse(x: np.ndarray) -> float:
    m = float(np.max(x))
    return m + math.log(float(np.sum(np.exp(x - m))))


def poisson_gaussian_law(q: float, mu: float, order: int, count: int = 1) -> TiltedLaw:
    r""":math:`P_a` of ``count`` compositions of the Poisson-subsampled Gaussian
    (rate ``q``, :math:`\mu = \Delta/\sigma`), remove direction; ``log Z_a`` from the
    binomial expansion (exact up to round-off, bracketed by a relative 1e-12)."""
    a, k = int(order), int(count)
    if a < 2 or a != order:
        raise ValueError(f"order must be an integer >= 2, got {order!r}")
    if not 0.0 < q <= 1.0 or not mu > 0.0 or k < 1:
        raise ValueError(f"need 0 < q <= 1, mu > 0 and count >= 1, got q={q!r}, mu={mu!r}, "
                         f"count={count!r}")
    c = np.arange(a + 1, dtype=np.float64)
    lc = np.array([math.lgamma(a + 1.0) - math.lgamma(x + 1.0) - math.lgamma(a - x + 1.0)
                   for x in c])
    with np.errstate(divide="ignore"):
        lw = lc + c * math.log(q) + (a - c) * (math.log1p(-q) if q < 1 else -np.inf) \
            + 0.5 * c * (c - 1.0) * mu * mu
    lw = np.where(np.isfinite(lw), lw, -np.inf)
    log_z = k * _lse(lw[np.isfinite(lw)])
    tol = 1e-12 * max(1.0, abs(log_z)) + 1e-14 * k * a * (1.0 + 0.5 * a * a * mu * mu)
    draw_one = mixture_sampler(lw, lambda rng, idx: idx)

    def draw(rng: np.random.Generator, n: int) -> np.ndarray:
        out = np.zeros(int(n))
        for _ in range(k):
            cs = draw_one(rng, n)
            x = mu * cs + rng.standard_normal(int(n))
            out += np.logaddexp(math.log1p(-q) if q < 1 else -np.inf,
                                math.log(q) + mu * x - 0.5 * mu * mu)
        return out
    # the component probabilities' round-off (a + 1 float64 terms, normalised, against
    # a 53-bit uniform): total variation below 2 (a + 6) 2^-53 per step
    return renyi_tilted(a, (log_z - tol, log_z + tol), draw,
                        f"Poisson-subsampled Gaussian tilted to order {a}",
                        tv=k * 2.0 * (a + 6) * 2.0 ** -53)


# ---- random allocation: the occupancy recursion, stored and run backwards -------------
@njit(cache=True, inline="always")
def _cumulate(prev, src, base, lo, hi, shift, cum):  # pragma: no cover (jit)
    r"""Write into ``cum[lo:hi]`` the running sums of
    :math:`e^{\text{prev}[\text{src}_i] + \text{base}_i - \text{shift}}` over the incoming
    transitions ``lo <= i < hi`` of one state (those from ``-inf`` add nothing); return
    the total."""
    acc = 0.0
    for i in range(lo, hi):
        v = prev[src[i]]
        if v > -np.inf:
            acc += math.exp(v + base[i] - shift)
        cum[i] = acc
    return acc


@njit(cache=True)
def _forward_all(start, src, base, heads, columns):  # pragma: no cover (jit)
    ns = heads.size - 1
    out = np.full((columns + 1, ns), -np.inf)
    out[0, start] = 0.0
    scratch = np.empty(src.size)
    for t in range(1, columns + 1):
        for d in range(ns):
            top = -np.inf
            for i in range(heads[d], heads[d + 1]):
                v = out[t - 1, src[i]]
                if v > -np.inf and v + base[i] > top:
                    top = v + base[i]
            if top == -np.inf:
                continue
            acc = _cumulate(out[t - 1], src, base, heads[d], heads[d + 1], top, scratch)
            out[t, d] = top + math.log(acc)
    return out


@njit(cache=True)
def _probabilities(u, src, base, heads):  # pragma: no cover (jit)
    """Cumulative probabilities of the incoming transitions of every state at every
    column: ``cum[t - 1, i]`` for column ``t`` (float64: each is off by at most a few
    ``g_max`` ulps, see :func:`allocation_law`)."""
    columns = u.shape[0] - 1
    ns = heads.size - 1
    cum = np.zeros((columns, src.size), dtype=np.float64)
    for t in range(1, columns + 1):
        for d in range(ns):
            tot = u[t, d]
            if tot == -np.inf:
                continue
            _cumulate(u[t - 1], src, base, heads[d], heads[d + 1], tot, cum[t - 1])
    return cum


@njit(cache=True)
def _allocation_losses(cum, src, cnt, heads, end, mu, k, T, log_binom, n,
                       seed):  # pragma: no cover (jit)
    np.random.seed(seed)
    out = np.empty(n)
    c = np.empty(T, dtype=np.int64)
    e = np.empty(k + 1)
    for j in range(n):
        d = end
        for t in range(T, 0, -1):                   # the occupancy path, backwards
            lo, hi = heads[d], heads[d + 1]
            u = np.random.random() * cum[t - 1, hi - 1]
            i = lo
            while i < hi - 1 and cum[t - 1, i] < u:
                i += 1
            c[t - 1] = cnt[i]
            d = src[i]
        # x_t = mu c_t + z_t; step loss l_t = mu x_t - mu^2/2; L = log e_k(e^l) - log C
        ls = np.empty(T)
        top = -np.inf
        for t in range(T):
            ls[t] = mu * (mu * c[t] + np.random.standard_normal()) - 0.5 * mu * mu
            if ls[t] > top:
                top = ls[t]
        e[0] = 1.0
        for r in range(1, k + 1):
            e[r] = 0.0
        for t in range(T):
            y = math.exp(ls[t] - top)
            for r in range(min(t + 1, k), 0, -1):
                e[r] += y * e[r - 1]
        out[j] = math.log(e[k]) + k * top - log_binom
    return out


#: Largest stored table ``steps * transitions`` of :func:`allocation_law` (float64).
MAX_STORED = 3.0e7


def storable(order: int, steps: int, selected: int) -> bool:
    """Whether :func:`allocation_law` keeps its table within :data:`MAX_STORED`."""
    return int(steps) * occ.transition_count(order, selected) <= MAX_STORED


def allocation_law(mu: float, steps: int, selected: int, order: int,
                   count: int = 1) -> TiltedLaw:
    r""":math:`P_a` of ``count`` epochs of ``selected``-of-``steps`` random allocation
    with Gaussian steps (:math:`\mu = \Delta/\sigma`), remove direction.

    The forward recursion of :mod:`sampledprv.rdp.occupancy` is run over all ``T``
    columns and stored; a draw walks it backwards from the final state, choosing at
    column ``t`` an incoming transition with probability proportional to
    :math:`u_{t-1}(n) M(\sum m)\prod\binom{n_r}{m_r}` (the terms of :math:`u_t`), which
    samples the profile path, hence the occupancies :math:`c_t = \sum_r m_r`, with the
    law of the ``a``-tuple of subsets under :math:`P_a`; then
    :math:`x = \mu c + z`.  ``log Z_a`` is the stored recursion's value bracketed by
    the round-off margin of :func:`sampledprv.rdp.occupancy.occupancy_log_moment`.

    Round-off of the sampler: each column's choice uses cumulative sums of at most
    ``g_max`` float64 terms ``exp(u + base - tot)``, whose argument is rounded by up to
    ``3 * largest`` ulps (``largest`` the largest ``|log term|`` met), so each term is
    off by a relative ``(3 largest + 4) 2^-53`` at most and the sums by
    ``(g_max + 3 largest + 4) 2^-53``; against a uniform with 53 bits each column's
    choice law is within total variation ``2 (g_max + 5)(1 + largest) 2^-53`` of the
    exact one (the errors of the stored ``u`` cancel along a path: its probability
    telescopes to its exact weight over the common normaliser), and the path's law
    within ``T`` times that (per epoch): the law's ``tv``, added to the confidence
    bounds."""
    a, k, T, E = int(order), int(selected), int(steps), int(count)
    if a < 2 or a != order:
        raise ValueError(f"order must be an integer >= 2, got {order!r}")
    if not 1 <= k <= T or E < 1 or not mu > 0:
        raise ValueError(f"need 1 <= selected <= steps, count >= 1 and mu > 0, got "
                         f"selected={selected!r}, steps={steps!r}, count={count!r}, mu={mu!r}")
    if not storable(a, T, k):
        raise ValueError(f"the tilted law at order {a} stores {T} x "
                         f"{occ.transition_count(a, k):,} transition probabilities (limit "
                         f"{MAX_STORED:.3g}); use a lower order")
    states, src, lbin, cnt, heads, start, _ = occ._table(a, k)
    lm = np.array([0.5 * c * (c - 1) * mu * mu for c in range(a + 1)])
    base = lbin + lm[cnt]
    u = _forward_all(start, src, base, heads, T)
    end = int(np.flatnonzero((states[:, k] == a))[0])
    log_binom = math.lgamma(T + 1.0) - math.lgamma(k + 1.0) - math.lgamma(T - k + 1.0)
    log_z1 = float(u[T, end]) - a * log_binom
    # the margin of occupancy_log_moment for the forward sweep (module notes there)
    largest = max(float(np.max(np.abs(u[np.isfinite(u)]))), a * log_binom,
                  float(np.max(np.abs(base))))
    g_max = int(np.max(np.diff(heads)))
    margin = 8.0 * 2.0 ** -53 * (2 * T * ((2 * k + 8) * (1.0 + largest) + g_max)
                                 + (a + 4) * (1.0 + largest))
    cum = _probabilities(u, src, base, heads)
    del u

    def draw(rng: np.random.Generator, n: int) -> np.ndarray:
        out = np.zeros(int(n))
        for _ in range(E):
            seed = int(rng.integers(0, 2 ** 31 - 1))
            out += _allocation_losses(cum, src, cnt, heads, end, float(mu), k, T,
                                      log_binom, int(n), seed)
        return out
    tv = E * T * 2.0 * (g_max + 5) * (1.0 + largest) * 2.0 ** -53
    return renyi_tilted(a, (E * (log_z1 - margin), E * (log_z1 + margin)), draw,
                        f"random allocation ({k} of {T}) tilted to order {a}", tv=tv)

