r"""Certified Renyi divergence of the 1-D Generalized Gaussian with *relative* accuracy
at small shifts.

:mod:`sampledprv.rdp.gg_quadrature` brackets :math:`F = e^{(a-1)D_a}` to a relative
accuracy, which leaves an absolute error of about ``rtol / (a - 1)`` in :math:`D_a`: too
coarse when many small per-coordinate divergences are added up (the vector GG bound).
Here the excess :math:`E = F - 1` is bracketed to a relative accuracy instead.

With :math:`L(x) = |x-\delta|^\beta - |x|^\beta` (the privacy loss of
:math:`GG(0)` against :math:`GG(\delta)`, scale 1) and :math:`p(\delta - x) = p(x)e^{-L(x)}`,
pairing :math:`x` with :math:`\delta - x` gives a nonnegative integrand:

.. math::

    E = \int_{-\infty}^{\delta/2} p(x)\,\big(1 - e^{-aL(x)}\big)\big(e^{(a-1)L(x)} - 1\big)\,dx,
    \qquad L \ge 0 \text{ there}.

:math:`L` decreases on :math:`(-\infty, \delta/2]`; :math:`p` decreases on
:math:`[0, \delta/2]` (so the integrand does: monotone bracketing) and increases on
:math:`(-\infty, 0]` (there a cell's supremum is at most :math:`\sup p \cdot \sup \psi(L)`,
and also at most :math:`\sup e^{\varphi}/Z \cdot (1 - e^{-a\sup L})` with the unimodal
:math:`e^\varphi = p\,e^{(a-1)L}Z` of :mod:`.gg_quadrature`, whichever is smaller).  The
left tail is bounded as in :mod:`.gg_quadrature` and enlarged until it is below
``rtol / 10`` of the integral.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Tuple

import numpy as np

from ..core.outward import down, up
from .gg_quadrature import _mode

__all__ = ["gg_excess_bounds", "gg_excess_bounds_many", "gg_renyi_bounds_fine", "QuadratureOverflow"]
_DEBUG = False


def _log_one_py(lv, a):
    if lv <= 0.0:
        return -math.inf
    return math.log(-math.expm1(-a * lv))


def _log_em1_py(lv, a):
    """log(e^{(a-1)L} - 1) for one L > 0."""
    y = (a - 1.0) * lv
    if y > 30.0:
        return y + math.log1p(-math.exp(-y))
    return math.log(math.expm1(y))


def _log_psi1_py(lv, a):
    """log((1 - e^{-aL}) (e^{(a-1)L} - 1)) for one L, -inf at L = 0: the sum of its two
    factors' logarithms (the cell kernel reuses the first where it needs it alone)."""
    if lv <= 0.0:
        return -math.inf
    return _log_one(lv, a) + _log_em1(lv, a)


try:
    from numba import njit as _njit
    _log_one = _njit(cache=True)(_log_one_py)
    _log_em1 = _njit(cache=True)(_log_em1_py)
    _log_psi1 = _njit(cache=True)(_log_psi1_py)
except ImportError:  # pragma: no cover - numba is a core dependency
    raise

@_njit(cache=True)
def _cells_kernel(nodes, seg, ds, refs, a, b):  # pragma: no cover - compiled
    n = nodes.size
    l_up = np.empty(n)
    l_lo = np.empty(n)
    lp_up = np.empty(n)
    lp_lo = np.empty(n)
    for i in range(n):
        x = nodes[i]
        d = ds[seg[i]]
        ax = abs(x)
        xb = ax ** b
        if x < 0.0:
            rel = math.expm1(b * math.log1p(d / ax))
            val = xb * rel
            mag = xb * abs(rel) + xb
        elif x == 0.0:
            val = d ** b
            mag = val
        else:
            y = abs(d - x) ** b
            val = y - xb
            mag = y + xb
        if val < 0.0:
            val = 0.0
        err = 1e-14 * mag + 1e-300
        l_up[i] = val + err
        l_lo[i] = max(val - err, 0.0)
        lp = -xb
        perr = 1e-14 * xb + 1e-300
        lp_up[i] = lp + perr
        lp_lo[i] = lp - perr
    m = n - 1
    cell_up = np.zeros(m)
    cell_lo = np.zeros(m)
    for j in range(m):
        if seg[j] != seg[j + 1]:
            continue
        h = nodes[j + 1] - nodes[j]
        ref = refs[seg[j]]
        lu_l, lu_r = l_up[j], l_up[j + 1]
        ll_l, ll_r = l_lo[j], l_lo[j + 1]
        # log psi = log_one + log_em1 (_log_psi1), its first part reused where needed
        one_up_l = _log_one(lu_l, a)
        psi_up_l = -math.inf if lu_l <= 0.0 else one_up_l + _log_em1(lu_l, a)   # _log_psi1
        if nodes[j + 1] <= 0.0:
            # p increasing, L decreasing
            sup_prod = lp_up[j + 1] + psi_up_l
            ph_l = lp_up[j] + (a - 1.0) * lu_l
            ph_r = lp_up[j + 1] + (a - 1.0) * lu_r
            sup = min(sup_prod, max(ph_l, ph_r) + one_up_l)
            one_lo_r = _log_one(ll_r, a)
            inf = lp_lo[j] + (-math.inf if ll_r <= 0.0 else one_lo_r + _log_em1(ll_r, a))
            if (a - 1.0) * ll_r > 2.0:
                phl_l = lp_lo[j] + (a - 1.0) * ll_l
                phl_r = lp_lo[j + 1] + (a - 1.0) * ll_r
                diff = math.exp(min(phl_l, phl_r) - ref) - math.exp(lp_up[j + 1] - ref)
                if diff > 0.0:
                    alt = math.log(diff) + ref + one_lo_r
                    if alt > inf:
                        inf = alt
        else:
            sup = lp_up[j] + psi_up_l
            inf = lp_lo[j + 1] + _log_psi1(ll_r, a)
        cell_up[j] = h * math.exp(sup - ref)
        cell_lo[j] = h * math.exp(inf - ref)
    return cell_up, cell_lo



class QuadratureOverflow(ValueError):
    """The cell bounds of the Renyi quadrature overflow floating point at this order
    (``(a - 1) |Delta/s|^beta`` too large); callers that can do without the order give
    no bound there (``inf``)."""


def _cells():
    return _cells_kernel


def _setup(a: float, b: float, d: float, extra: float = 0.0):
    """Mode, reference exponent, left end and log tail bound for one shift."""
    ts = min(_mode(a, b, d), 0.0)
    phi_s = (a - 1.0) * abs(ts - d) ** b - a * abs(ts) ** b
    ref = max(phi_s, 0.0)
    u_end = max(-2.0 * ts, 4.0 * d, 1.0)
    # E is at least of order delta^2: start where the tail bound is far below that
    want = ref + 2.0 * max(0.0, -math.log(d)) + 40.0 + extra
    for _attempt in range(400):
        c = 1.0 - (a - 1.0) * math.expm1(b * math.log1p(d / u_end))
        if c >= 0.5 and c * u_end ** b >= want:
            break
        u_end *= 1.25
    else:  # pragma: no cover
        raise ValueError(f"could not bound the tail (beta={b}, shift={d}, order={a})")
    log_tail = -c * u_end ** b - math.log(c * b * u_end ** (b - 1.0)) - ref
    return ts, ref, u_end, log_tail


def gg_excess_bounds_many(beta: float, shifts, order: float,
                          rtol: float = 1e-2) -> Tuple[np.ndarray, np.ndarray]:
    r""":func:`gg_excess_bounds` for many shifts at once (one vectorized quadrature)."""
    a, b = float(order), float(beta)
    shifts = np.asarray(shifts, dtype=float)
    lo = np.full(shifts.shape, -math.inf)
    hi = np.full(shifts.shape, -math.inf)
    idx = np.nonzero(shifts > 0)[0]
    if idx.size == 0:
        return lo, hi
    setups = [_setup(a, b, float(shifts[i])) for i in idx]
    ts, ref, u_end, log_tail = (np.array(x) for x in zip(*setups))
    s_lo, s_up = _integrate(a, b, shifts[idx], ts, u_end, ref, rtol)
    log_z = math.log(2.0) + math.lgamma(1.0 + 1.0 / b)
    for j, i in enumerate(idx):
        if not (s_lo[j] > 0 and log_tail[j] <= math.log(0.1 * rtol * s_lo[j])):
            lo[i], hi[i] = gg_excess_bounds(b, float(shifts[i]), a, rtol)
            continue
        su = s_up[j] * (1.0 + 1e-12) + math.exp(log_tail[j])
        scale = abs(ref[j]) + abs(log_z) + 1.0
        lo[i] = down(ref[j] + math.log(s_lo[j]) - log_z, scale)
        hi[i] = up(ref[j] + math.log(su) - log_z, scale)
    return lo, hi


@lru_cache(maxsize=262144)
def gg_excess_bounds(beta: float, shift: float, order: float,
                     rtol: float = 1e-2) -> Tuple[float, float]:
    r"""Certified ``(lower, upper)`` on :math:`\log E`, :math:`E = e^{(a-1)D_a} - 1`,
    for :math:`D_a(GG(0)\|GG(\delta))` (scale 1, ``shift`` :math:`=\delta`), with
    relative accuracy ``rtol`` on :math:`E` at every shift.  ``(-inf, -inf)`` at 0."""
    a, b, d = float(order), float(beta), float(shift)
    if d == 0.0:
        return -math.inf, -math.inf
    log_z = math.log(2.0) + math.lgamma(1.0 + 1.0 / b)
    extra = 0.0
    for _attempt in range(20):
        ts, ref, u_end, log_tail = _setup(a, b, d, extra)
        s_lo, s_up = _integrate(a, b, np.array([d]), np.array([ts]), np.array([u_end]),
                                np.array([ref]), rtol)
        s_lo, s_up = float(s_lo[0]), float(s_up[0])
        if s_lo > 0 and log_tail <= math.log(0.1 * rtol * s_lo):
            break
        extra += 20.0
    else:  # pragma: no cover
        raise ValueError(f"could not bound the tail (beta={b}, shift={d}, order={a})")
    s_up = s_up * (1.0 + 1e-12) + math.exp(log_tail)
    scale = abs(ref) + abs(log_z) + 1.0
    return (down(ref + math.log(s_lo) - log_z, scale),
            up(ref + math.log(s_up) - log_z, scale))


_NEAR = np.geomspace(1e-4, 1e4, 97)
#: the refinement stops splitting cells at this many nodes per shift (on average)
_NODES_PER_SHIFT = 400_000


def _initial_nodes(ds: np.ndarray, tss: np.ndarray,
                   u_ends: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """The starting nodes of every shift, concatenated (sorted and unique within each
    segment), and their segment numbers.  Per shift ``d`` (mode ``ts``, left end
    ``u_end``): 257 equispaced nodes on ``[-u_end, 0]``, ``-d`` times 97 geometric ratios
    in ``[1e-4, 1e4]`` (those above ``-u_end``), ``ts``, ``d/2`` and 33 equispaced nodes on
    ``[0, d/2]``.  Built for all shifts at once: the same floating-point values as one
    ``np.unique(np.concatenate([...]))`` per shift (``np.linspace`` with array ends does
    the same arithmetic per row), without a Python loop over the shifts."""
    n = ds.size
    left = np.linspace(-u_ends, 0.0, 257, axis=1)
    near = -ds[:, None] * _NEAR[None, :]
    keep = near > -u_ends[:, None]
    extra = np.stack([tss, ds / 2.0], axis=1)
    right = np.linspace(0.0, ds / 2.0, 33, axis=1)
    rows = np.arange(n)
    vals = np.concatenate([left.ravel(), near[keep], extra.ravel(), right.ravel()])
    seg = np.concatenate([np.repeat(rows, 257), np.nonzero(keep)[0], np.repeat(rows, 2),
                          np.repeat(rows, 33)])
    order = np.lexsort((vals, seg))
    vals, seg = vals[order], seg[order]
    first = np.ones(vals.size, dtype=bool)
    first[1:] = (seg[1:] != seg[:-1]) | (vals[1:] != vals[:-1])
    return vals[first], seg[first]


def _split_cells(nodes: np.ndarray, seg: np.ndarray,
                 k: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """Cell ``j`` (between ``nodes[j]`` and ``nodes[j + 1]``) cut into ``k[j]`` equal
    cells: the new nodes and their segment numbers (``k = 1`` keeps a cell)."""
    starts = np.repeat(nodes[:-1], k)
    step = np.repeat(np.diff(nodes) / k, k)
    offs = np.arange(starts.size) - np.repeat(np.cumsum(k) - k, k)
    return (np.concatenate([starts + offs * step, nodes[-1:]]),
            np.concatenate([np.repeat(seg[:-1], k), seg[-1:]]))


def _integrate(a: float, b: float, ds: np.ndarray, tss: np.ndarray, u_ends: np.ndarray,
               refs: np.ndarray, rtol: float) -> Tuple[np.ndarray, np.ndarray]:
    """Bracket the (scaled) integral for each shift; all shifts in one node array, cells
    between segments masked out.

    A shift whose bracket has met ``rtol`` keeps its nodes (its cells are not split), so
    every later round would compute its cells, and its sums, again to the same values:
    its nodes leave the array and its sums are kept.  The node cap counts them as if they
    were still there, so the result is bit for bit that of refining every shift in every
    round."""
    nodes, seg = _initial_nodes(np.asarray(ds, dtype=float), np.asarray(tss, dtype=float),
                                np.asarray(u_ends, dtype=float))
    n = len(ds)
    s_lo = np.zeros(n)
    s_up = np.zeros(n)
    done = np.zeros(n, dtype=bool)
    gone = 0                    # nodes of finished shifts taken out of the array
    for _round in range(14):
        same = seg[:-1] == seg[1:]
        cseg = seg[:-1]
        live = ~done
        cell_up, cell_lo = _cells()(nodes, seg, ds, refs, a, b)
        s_up = np.where(live, np.bincount(cseg, weights=cell_up, minlength=n) * (1.0 + 1e-12),
                        s_up)
        s_lo = np.where(live, np.bincount(cseg, weights=cell_lo, minlength=n) * (1.0 - 1e-12),
                        s_lo)
        done = (s_lo > 0) & (s_up - s_lo <= rtol * s_lo)
        if done.all():
            break
        gap = np.where(done[cseg], 0.0, cell_up - cell_lo)
        root = np.sqrt(np.maximum(gap, 0.0))
        rsum = np.bincount(cseg, weights=root, minlength=n)
        with np.errstate(over="ignore", invalid="ignore"):
            k = np.ceil(root * (rsum / (0.5 * rtol * np.maximum(s_lo, 1e-300)))[cseg])
        if np.isnan(k[same & ~done[cseg]]).any():   # overflowed cell bounds (inf - inf, inf * 0)
            bad = int(cseg[np.isnan(k) & same & ~done[cseg]][0])
            raise QuadratureOverflow(
                f"the Renyi quadrature overflows at beta={b}, order={a}, shift "
                f"Delta/s={float(ds[bad]):.6g}: (a - 1) |Delta/s|^beta is too large for "
                "floating point at this order; use lower Renyi orders (the accountant's "
                "orders=...) or more noise (a larger scale)")
        k = np.where(same, np.clip(k, 1, 4096), 1).astype(np.int64)
        cap = _NODES_PER_SHIFT * n
        total = int(k.sum()) + gone      # as if the finished shifts' cells (1 each) were here
        if total > cap:
            k = np.maximum(1, (k * (cap / total)).astype(np.int64))
        if int(k.sum()) == k.size:
            # at the node cap no cell is split: every further round would evaluate the
            # same cells to the same sums (10 such rounds of 27 million nodes
            # took 200 s at order 64 of a 320-dimensional GG(4) vector)
            break
        nodes, seg = _split_cells(nodes, seg, k)
        keep = ~done[seg]
        gone += int(seg.size - np.count_nonzero(keep))
        nodes, seg = nodes[keep], seg[keep]
        if _DEBUG:
            print(_round, nodes.size, int(done.sum()), n)
    return s_lo, s_up


def gg_renyi_bounds_fine(beta: float, shift: float, order: float) -> Tuple[float, float]:
    """``(lower, upper)`` on :math:`D_a` from :func:`gg_excess_bounds`
    (:math:`D_a = \\log(1 + E)/(a - 1)`)."""
    lo, hi = gg_excess_bounds(beta, shift, order)
    a = float(order)
    return (max(0.0, down(float(np.logaddexp(0.0, lo)) / (a - 1.0))),
            up(float(np.logaddexp(0.0, hi)) / (a - 1.0)))
