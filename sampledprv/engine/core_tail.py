r"""Core/tail split of one step's loss for very long compositions.

The single-step loss of a subsampled mechanism has a narrow bulk and a long thin tail
(DP-SGD with sigma 0.8, q 4e-3: standard deviation 0.008, but mass up to 5 nats).  A
composition tree on the fine mesh would carry that tail through every level.  Instead
the law of one step is split at two cut points ``c_lo < c_hi`` into

* the **core** ``c`` (losses in ``[c_lo, c_hi]``), discretized on the fine mesh ``h``
  by nearest rounding plus the constant shift that makes the error mean-zero given
  the region (Gopi et al.), and
* the **tail** ``u`` (losses outside), discretized on a coarse mesh ``H`` (a multiple
  of ``h`` on the same shifted lattice) by *randomized* rounding to the two
  neighbouring coarse points, which is mean-preserving given the loss.

Both are sub-probability measures with ``c + u`` the law of the discretized step.  By
the binomial expansion in the convolution algebra,

.. math:: (c + u)^{*k} = c^{*(k-J)} * W + R, \qquad
          W = \sum_{j=0}^{J} \binom{k}{j} c^{*(J-j)} * u^{*j},

where ``R`` (the terms with more than ``J`` tail steps) has mass at most
:math:`P(T > J)`, ``T ~ Bin(k, |u|)``.  ``c^{*(k-J)}`` is composed by the multi-level
tree on a window set by the core alone, and ``W`` (``J`` steps) on the coarse mesh over
its whole support.  Dropping ``R`` lowers every privacy curve by at most its mass: the
accountant adds :func:`binomial_tail_bound` to the upper bound's terms.

Coupling.  Reveal first whether each step is core or tail, then its rounding error:
given the region, the error has conditional mean zero and a range of ``h`` (core) or
``H`` (tail).  On ``T <= J`` the ``J`` steps that form ``W`` (the tail steps and
``J - T`` core steps) are rounded (or regridded) to ``H`` once more, so the Azuma
variance is at most ``k h^2 + J H^2`` plus the tree's regridding terms.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from ..core.law import LossDistribution
from .discretize import Discretized, discretize
from .compose import inverse_with_roundoff
from .fft import next_fast_len, rfft
from .lattice import LatticePMF, _logsumexp_rows
from .moments import cell_moments, subdivisions

#: sub-cells per tail cell for its first moment and that moment's error bound: as many
#: as keep the side's sub-cells within ``_TAIL_SUB_CELLS`` (between 4 and 64); few wide
#: cells (a tail that decays within a coarse cell) get the finest
_TAIL_SUB_CELLS = 2**17

_EPS = np.finfo(np.float64).eps


def binomial_tail_bound(k: int, p: float, j: int) -> float:
    r"""Chernoff bound on :math:`P(T > j)` for :math:`T \sim Bin(k, p)`:
    :math:`\exp(-k\,\mathrm{KL}(a \| p))` with :math:`a = (j+1)/k > p`."""
    if p <= 0.0:
        return 0.0
    a = (j + 1) / k
    if a >= 1.0:
        return 0.0 if j + 1 > k else p ** k
    if a <= p:
        return 1.0
    kl = a * math.log(a / p) + (1.0 - a) * math.log1p(-a) - (1.0 - a) * math.log1p(-p)
    return math.exp(-k * kl)


def tail_cap(k: int, p: float, budget: float) -> tuple[int, float]:
    """Smallest ``J`` with :func:`binomial_tail_bound` ``<= budget``, and that bound."""
    j = int(k * p)
    while True:
        b = binomial_tail_bound(k, p, j)
        if b <= budget or j >= k:
            return j, b
        j += 1


@dataclass(frozen=True, eq=False)
class CoreTail:
    """A step split into core (fine mesh) and tail (coarse mesh, same shifted lattice)."""

    core: Discretized          # sub-probability on the fine mesh; outside = dropped tails
    tail: LatticePMF           # sub-probability on the coarse mesh, same shift
    tail_mass: float           # |u| (upper bound on P(step in the tail))
    mass_error: float          # bound on the rounding error of the tail masses
    #: bound on the conditional mean of a tail step's rounding error given that the step
    #: is in the tail (the cells' moment errors, engine/moments.py, over P(tail)); the
    #: at most ``J`` tail steps add ``J`` times it to the epsilon slack
    tail_mean_error: float = 0.0


def _randomized(mass: np.ndarray, moment: np.ndarray, lo_idx: np.ndarray, width: float,
                lo: np.ndarray, mid: np.ndarray) -> dict[int, float]:
    """Randomized rounding of the mass in ``[lo, hi]`` (inside coarse cell ``lo_idx``)
    onto the cell's end points: mass ``E[(Y - cell_lo)/H]`` goes up."""
    cell_lo = lo_idx * width
    mean_offset = np.where(mass > 0, (mid - cell_lo) + moment / np.where(mass > 0, mass, 1.0),
                           0.0)
    up = np.clip(mass * mean_offset / width, 0.0, mass)
    out: dict[int, float] = {}
    for idx, m_dn, m_up in zip(lo_idx.tolist(), (mass - up).tolist(), up.tolist()):
        out[idx] = out.get(idx, 0.0) + m_dn
        out[idx + 1] = out.get(idx + 1, 0.0) + m_up
    return out


def split_step(dist: LossDistribution, h: float, tau: float, factor: int,
               c_lo: float, c_hi: float) -> CoreTail:
    """Split ``dist`` at ``[c_lo, c_hi]``: core on mesh ``h``, tail on ``H = factor h``.

    ``tau`` is the outer window's tail budget (as in
    :func:`~sampledprv.engine.discretize.discretize`); mass beyond it stays outside."""
    if dist.atom_values.size or dist.p_pos_inf > 0 or dist.cont_mass <= 0:
        raise ValueError("the core/tail split needs a continuous law without atoms")
    a, b = dist.lower_point(tau), dist.upper_point(tau)
    # core buckets [(i - 1/2) h, (i + 1/2) h] for i in i0..i1
    i0 = int(np.floor(max(a, c_lo) / h + 0.5))
    i1 = max(int(np.floor(min(b, c_hi) / h + 0.5)), i0)
    core = discretize(dist, h, 0.0, None, window=(i0, i1))
    mu = core.pmf.shift
    big = factor * h
    cells: dict[int, float] = {}
    err = moment_bound = 0.0
    for side, (x0, x1) in (("lower", (a, (i0 - 0.5) * h)), ("upper", ((i1 + 0.5) * h, b))):
        if x1 <= x0:
            continue
        # coarse lattice points j H + mu; cells [j H + mu, (j+1) H + mu] cut to [x0, x1]
        j0 = int(np.floor((x0 - mu) / big))
        j1 = int(np.floor((x1 - mu) / big))
        idx = np.arange(j0, j1 + 1)
        lo = np.maximum(idx * big + mu, x0)
        hi = np.minimum((idx + 1) * big + mu, x1)
        keep = hi > lo
        idx, lo, hi = idx[keep], lo[keep], hi[keep]
        sub = subdivisions(_TAIL_SUB_CELLS, lo.size, 4, 64)
        mass, moment, bound, e = cell_moments(dist, lo, hi, sub,
                                              upper=(side == "upper"), turning="run")
        err += e
        moment_bound += float(bound.sum())
        for j, m in _randomized(mass, moment, idx, big, lo - mu, 0.5 * (lo + hi) - mu).items():
            cells[j] = cells.get(j, 0.0) + m
    if cells:
        keys = np.array(sorted(cells))
        probs = np.zeros(int(keys[-1] - keys[0]) + 1)
        probs[keys - keys[0]] = [cells[j] for j in keys.tolist()]
        tail = LatticePMF(probs=probs, offset=int(keys[0]), h=big, shift=mu)
    else:
        tail = LatticePMF(probs=np.zeros(1), offset=0, h=big, shift=mu)
    tail_mass = float(tail.probs.sum()) + err
    outside = float(dist.cdf_cont(np.array([a]))[0] + dist.sf_cont(np.array([b]))[0])
    core = replace(core, outside_mass=outside)
    # a tail step's rounding error lies within one coarse cell: its conditional mean is
    # at most H in any case
    low_mass = float(tail.probs.sum()) - err
    tail_mean = min(big, moment_bound / low_mass) if low_mass > 0 else big
    return CoreTail(core=core, tail=tail, tail_mass=tail_mass, mass_error=err,
                    tail_mean_error=tail_mean)


def _weights(k: int, cap: int, p: float) -> tuple[np.ndarray, float]:
    r"""The weights ``C(k, j) p^j`` for ``j = 0..cap``, and a bound on the relative error
    of every one.

    The weights come from the ratio recursion :math:`w_0 = 1`,
    :math:`w_j = w_{j-1} \cdot ((k - j + 1) p) / j`: ``k - j + 1`` is exact, and each step
    rounds three times (half an ulp each), so :math:`w_j` is within
    :math:`(1 + \epsilon/2)^{3j} - 1 < 2 j \epsilon` of itself relatively
    (:math:`\epsilon = 2^{-52}`; 1.6e-14 at ``j = 35``). The weights stay below
    :math:`e^{kp}` (``kp`` is the expected number of tail steps, 8). The difference of
    log-Gammas used before, :math:`\log\Gamma(k+1) - \log\Gamma(j+1) -
    \log\Gamma(k-j+1)`, cancels terms of size :math:`k \log k` and was off by 2.2e-7 at
    ``k = 1e8`` (1.1e-9 at 1e6; against 40-digit values), an error no term counted.
    """
    eps = float(np.finfo(np.float64).eps)
    w = np.zeros(cap + 1)
    w[0] = 1.0
    for j in range(1, cap + 1):
        w[j] = w[j - 1] * (((k - j + 1) * p) / j)
    return w, 2.0 * cap * eps * 1.01


def _window(core: LatticePMF, tail_n: LatticePMF, log_w: np.ndarray, cap: int,
            log_tail: float) -> tuple[int, int, object]:
    """Lattice indices ``[i_lo, i_hi]`` outside which ``W`` has at most ``exp(log_tail)``
    on each side (Chernoff with the convex-order-dominating two-point MGFs of the core and
    the normalized tail), and a function giving the spill bounds of any index window."""
    pc, lc = core.two_point_blocks()
    pu, lu = tail_n.two_point_blocks()
    h = core.h
    spread = max(float(pu.max() - pc.min()) if pu.size else 0.0, float(pc.max() - pc.min()),
                 h)
    lam = np.geomspace(1e-4, 1e3, 57) / spread
    j = np.arange(cap + 1)[:, None]

    def log_mgf(sign: float) -> np.ndarray:
        mc = _logsumexp_rows(lc, sign * lam, pc)
        mu = _logsumexp_rows(lu, sign * lam, pu) if pu.size else np.full(lam.size, -np.inf)
        terms = log_w[:, None] + (cap - j) * mc[None, :] + np.where(j > 0, j * mu[None, :], 0.0)
        top = terms.max(axis=0)
        return top + np.log(np.exp(terms - top).sum(axis=0))

    up, down = log_mgf(1.0), log_mgf(-1.0)
    lo_support = cap * min(core.offset, tail_n.offset)
    hi_support = cap * max(core.offset + core.probs.size - 1,
                           tail_n.offset + tail_n.probs.size - 1)
    with np.errstate(invalid="ignore"):
        upper = float(np.min((up - log_tail) / lam))
        lower = float(-np.min((down - log_tail) / lam))
    i_hi = int(min(max(math.ceil(upper / h), lo_support), hi_support))
    i_lo = int(max(min(math.floor(lower / h), hi_support), lo_support))

    def spill(a: int, b: int) -> tuple[float, float]:
        s_up = 0.0 if b >= hi_support else \
            float(np.min(np.exp(np.minimum(up - lam * (b + 0.5) * h, 0.0))))
        s_dn = 0.0 if a <= lo_support else \
            float(np.min(np.exp(np.minimum(down + lam * (a - 0.5) * h, 0.0))))
        return s_up, s_dn

    return i_lo, i_hi, spill


def tail_mixture(core: LatticePMF, tail: LatticePMF, k: int, cap: int,
                 spill_mass: float = 1e-30) -> tuple[LatticePMF, float]:
    r"""The measure :math:`W = \sum_{j \le J} \binom{k}{j} c^{*(J-j)} * u^{*j}` on the
    coarse mesh (``core`` already regridded to it).

    One circular FFT over a Chernoff window with at most ``spill_mass`` outside on each
    side; returns ``W`` on that window and its total-variation error (twice the aliased
    mass plus round-off)."""
    if not np.isclose(core.h, tail.h, rtol=1e-12, atol=0):
        raise ValueError("core and tail must share the coarse mesh")
    core, tail = core.trimmed(), tail.trimmed()
    p = float(tail.probs.sum())
    tail_n = LatticePMF(probs=tail.probs / p if p > 0 else tail.probs, offset=tail.offset,
                        h=tail.h, shift=tail.shift)
    weights, weight_rel = _weights(k, cap, p)
    with np.errstate(divide="ignore"):
        log_w = np.log(weights)
    i_lo, i_hi, spill = _window(core, tail_n, log_w, cap, math.log(spill_mass))
    n = next_fast_len(max(i_hi - i_lo + 1, core.probs.size, tail.probs.size))
    s_up, s_dn = spill(i_lo, i_hi)
    a = rfft(core.probs, n)
    # c^{J-j} * u^j has offset (J - j) o_c + j o_u: relative to J o_c, u is moved by
    # o_u - o_c (a phase factor); index t of the result is offset J o_c + t (mod n)
    freqs = np.arange(a.size)
    b = rfft(tail_n.probs, n) * \
        np.exp(-2j * np.pi * freqs * ((tail.offset - core.offset) % n) / n)
    acc = np.full_like(a, weights[0])
    bj = np.ones_like(a)
    for j in range(1, cap + 1):
        acc *= a
        bj *= b
        if weights[j] > 0:
            acc += weights[j] * bj
    del bj, a, b
    res, numeric = inverse_with_roundoff(acc, n, cap)
    del acc
    idx = (np.arange(i_lo, i_hi + 1) - cap * core.offset) % n
    probs = np.clip(res[idx], 0.0, None)
    # the weights' relative error moves W by at most that share of its mass
    # (sum_j w_j |c|^(J-j), the tail law normalized)
    c_mass = float(core.probs.sum())
    w_mass = math.fsum(float(w) * c_mass ** (cap - j) for j, w in enumerate(weights))
    return (LatticePMF(probs=probs, offset=i_lo, h=core.h, shift=cap * core.shift),
            numeric + 2.0 * (s_up + s_dn) + weight_rel * w_mass)


__all__ = ["binomial_tail_bound", "tail_cap", "CoreTail", "split_step", "tail_mixture"]
