r"""The tilted law :math:`P_a` of the fixed-bin matrix mechanism (remove direction).

Pair (design notes, "Matrix-factorization training"): ``b`` bins,
:math:`P = b^{-1}\sum_j N(m_j, \sigma^2 I)`, :math:`Q = N(0, \sigma^2 I)`,
:math:`S = M^\top M/\sigma^2`.  Expanding :math:`(P/Q)^a` over ``a``-tuples of bins,

.. math:: q\prod_{r\le a}\frac{dN(m_{j_r})}{dQ} = e^{\sum_{r<s}S_{j_rj_s}}\,
          N\Big(\sum_r m_{j_r}, \sigma^2 I\Big),

so :math:`P_a` (density :math:`p^aq^{1-a}/Z_a`) is the mixture over the count vectors
:math:`c` (``|c| = a``; a tuple's law depends on its counts only) with weights

.. math:: \pi_a(c) = Z_a^{-1}\, b^{-a}\binom{a}{c}
          e^{(c^\top Sc - c^\top\operatorname{diag}S)/2}

(the terms of :math:`Z_a`, :mod:`sampledprv.rdp.matrix_moments`) of
:math:`N(Mc, \sigma^2 I)`; in the Gram-reduced coordinates
:math:`u = M^\top y/\sigma^2`, :math:`u \sim N(Sc, S)` and
:math:`L = \operatorname{logsumexp}_j(u_j - S_{jj}/2) - \log b`.

The count vector is drawn by running the band transfer of
:func:`sampledprv.rdp.matrix_moments.band_fixed_bin_log_moments` backwards
(cyclic bandwidth ``w``, ``b >= 2w + 1``): the counts ``F`` of bins ``0..w-1`` are
drawn with probability proportional to their share of :math:`Z_a`; given ``F`` the
forward values :math:`V_t(s)` (log of the summed weights of the partial count vectors
of bins ``< w + t`` ending in state ``s``) are stored for every column; the final state
is drawn among those of total ``a`` proportionally to :math:`e^{V_{b-w}(s)}`, and each
column's incoming transition proportionally to its term of :math:`V_t(s')` (the
predecessors of ``s' = (L', r')`` are ``(l, L'_0..L'_{w-2}, r' - l)``,
``l = 0..r'``, the count of bin ``j`` is ``L'_{w-1}``).  The path's probability is the
product of these ratios, which telescopes to :math:`\pi_a(c)`.  Small ``b`` (``b < 2w +
1``) lists the count vectors instead.

Round-off: the forward values carry an absolute error of at most
:math:`\varepsilon_V = 2^{-53}X[(b-w)(4w + 4g + 8) + w^2 + 4w + 4(n_F + n_s)]`
(``X`` the largest magnitude met, ``g = a + 1`` terms per log-sum, each log-add within
``4`` ulps of ``X`` and 1-Lipschitz in its inputs); ``log Z_a`` is bracketed by twice
that, and each path's sampled probability is within a factor
:math:`e^{\pm 4\varepsilon_V}` of the exact one, plus the 53-bit uniform's
granularity ``(a + 2) 2^-53`` per choice: the law's ``tv``.
"""

from __future__ import annotations

import math
from typing import Tuple

import numpy as np
from scipy import sparse
from numba import njit

from ...rdp import matrix_moments as mm
from ..draws.matrix import correlated_normals, lse_shifted
from ..draws.rng import uniform
from ..draws.user_fills import states_from
from .tilted import TiltedLaw, renyi_tilted

__all__ = ["fixed_bin_law", "fixed_bin_tilted_counts", "tilted_log_moment", "feasible",
           "product_law", "MAX_LISTED", "MAX_TABLE"]

#: Largest number of count vectors the small-``b`` path lists.
MAX_LISTED = 200_000
#: Largest choice table of one group of draws (float64 entries, ``(b - w) x states x
#: (a + 1)``); all groups together are limited to twice the transfer's budget.
MAX_TABLE = 3.0e7
#: Most ordered pairs of bins (``b^2``) the order-2 law lists (:class:`_Pairs`).
MAX_PAIRS = 4_000_000
_U = 2.0 ** -53


@njit(cache=True)
def _forward(S, w, a, st, nxt, lgam, s0, out):  # pragma: no cover - numba
    """Fill ``out[t, s]`` (``(b - w + 1) x ns``) with the forward values of the band
    transfer started from the initial state ``s0`` (window ``F``, ``r = 0``); return
    the largest magnitude met (``X`` of the module notes)."""
    b = S.shape[0]
    ns = st.shape[0]
    T = b - w
    for t in range(T + 1):
        for i in range(ns):
            out[t, i] = -math.inf
    F = st[s0, :w]
    v0 = mm.band_start(S, F, w, lgam)
    out[0, s0] = v0
    big = abs(v0) + 1.0
    for t in range(T):
        j = w + t
        wrap = mm.band_wrap(S, j, w, b, F)
        sjj = S[j, j]
        for i in range(ns):
            v = out[t, i]
            if v == -math.inf:
                continue
            field = mm.band_field(S, j, w, st, i, wrap)
            for c in range(a - mm.state_total(st, i, w) + 1):
                x = mm.band_term(v, sjj, c, field, lgam[c])
                mag = abs(v) + sjj * a * a + a * abs(field) + lgam[a]
                if mag > big:
                    big = mag
                tg = nxt[i, c]
                out[t + 1, tg] = mm.log_add(out[t + 1, tg], x)
    return big


@njit(cache=True)
def _choices(S, w, a, st, pred, lgam, fwd, cum):  # pragma: no cover - numba
    """``cum[t - 1, s, l]``: cumulative weights (relative to ``e^{V_t(s)}``) of the
    predecessors ``pred[s, 0..l]`` of state ``s`` at column ``t``."""
    b = S.shape[0]
    ns = st.shape[0]
    T = b - w
    F = np.empty(w, dtype=np.int64)
    s0 = -1
    for i in range(ns):
        if fwd[0, i] > -math.inf:
            s0 = i
    for k in range(w):
        F[k] = st[s0, k]
    for t in range(1, T + 1):
        j = w + t - 1
        wrap = mm.band_wrap(S, j, w, b, F)
        sjj = S[j, j]
        for s in range(ns):
            tot = fwd[t, s]
            acc = 0.0
            if tot > -math.inf:
                c = st[s, w - 1]
                for l in range(st[s, w] + 1):
                    p = pred[s, l]
                    v = fwd[t - 1, p]
                    if v > -math.inf:
                        field = mm.band_field(S, j, w, st, p, wrap)
                        acc += math.exp(mm.band_term(v, sjj, c, field, lgam[c]) - tot)
                    cum[t - 1, s, l] = acc


@njit(cache=True)
def _draw(state, S, w, a, st, pred, fwd, cum, final, fcum, sptr, sidx, sval, rptr, ridx,
          rval, half, logb, out, counts, want_counts):  # pragma: no cover - numba
    """``out.size`` losses of :math:`P_a` given the counts ``F`` of the first ``w`` bins
    (the group of ``fwd``): the final state from ``fcum``, the path backwards through
    ``cum``, then :math:`u = Sc + Rg`, :math:`L = \\mathrm{lse}(u - S_{jj}/2) - \\log b`."""
    b = S.shape[0]
    T = b - w
    nf = final.size
    c = np.zeros(b, dtype=np.int64)
    g = np.empty(b)
    u = np.empty(b)
    s0 = -1
    for i in range(st.shape[0]):
        if fwd[0, i] > -math.inf:
            s0 = i
    for k in range(out.shape[0]):
        for j in range(b):
            c[j] = 0
        for j in range(w):
            c[j] = st[s0, j]
        x = uniform(state) * fcum[nf - 1]
        i = 0
        while i < nf - 1 and fcum[i] <= x:
            i += 1
        s = final[i]
        for t in range(T, 0, -1):
            c[w + t - 1] = st[s, w - 1]
            r = st[s, w]
            if r == 0:
                s = pred[s, 0]
                continue
            x = uniform(state) * cum[t - 1, s, r]
            l = 0
            while l < r and cum[t - 1, s, l] <= x:
                l += 1
            s = pred[s, l]
        correlated_normals(state, rptr, ridx, rval, g, u)
        for j in range(b):
            if c[j] != 0:
                for q in range(sptr[j], sptr[j + 1]):      # S symmetric: row j = column j
                    u[sidx[q]] += c[j] * sval[q]
        out[k] = lse_shifted(u, half, 0, b) - logb
        if want_counts:
            for j in range(b):
                counts[k, j] = c[j]


def _csr(A: np.ndarray) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    nz = A != 0
    ptr = np.concatenate([[0], np.cumsum(nz.sum(axis=1))]).astype(np.int64)
    rows, cols = np.nonzero(nz)
    return ptr, cols.astype(np.int64), np.ascontiguousarray(A[rows, cols], dtype=np.float64)


def _bandwidth(S: np.ndarray) -> int:
    return max(mm.cyclic_bandwidth(S), 1)


def feasible(S: np.ndarray, order: int, budget: float) -> bool:
    """Whether :func:`fixed_bin_law` builds the law of ``order`` within ``budget`` (the
    band transfer's work, :func:`sampledprv.rdp.matrix_moments.band_transitions`, with
    each group's choice table within :data:`MAX_TABLE` and all groups' within ``2 *
    budget``; or at most :data:`MAX_LISTED` count vectors where ``b < 2w + 1``)."""
    b, w, a = S.shape[0], _bandwidth(S), int(order)
    if b >= 2 * w + 1:
        return _band_feasible(b, w, a, budget) or (a == 2 and b * b <= MAX_PAIRS)
    return mm.vectors(b, a) <= MAX_LISTED


def _band_feasible(b: int, w: int, a: int, budget: float) -> bool:
    table = (b - w) * math.comb(a + w + 1, w + 1) * (a + 1)    # choice table per group
    return mm.band_transitions(b, w, a) <= budget and table <= MAX_TABLE and \
        math.comb(a + w, w) * table <= 2 * budget


class _Band:
    """The band transfer's tables at order ``a`` and the share of each initial window."""

    def __init__(self, S: np.ndarray, a: int) -> None:
        self.S = mm.readonly_gram(S)
        b = self.S.shape[0]
        self.w = w = _bandwidth(self.S)
        self.a = a
        st, _, nxt = mm.band_state_table(w, a)
        self.st, self.nxt = st, nxt
        index = {tuple(int(x) for x in row): i for i, row in enumerate(st)}
        pred = np.full((st.shape[0], a + 1), -1, dtype=np.int64)
        for i, row in enumerate(st):
            L, r = tuple(int(x) for x in row[:w]), int(row[w])
            for l in range(r + 1):
                pred[i, l] = index[(l,) + L[:w - 1] + (r - l,)]
        self.pred = pred
        self.lgam = np.array([math.lgamma(c + 1.0) for c in range(a + 2)])
        sums = st.sum(axis=1)
        self.initial = np.flatnonzero(st[:, w] == 0)
        self.final = np.flatnonzero(sums == a)
        self.T = b - w
        shares, big = [], 1.0
        buf = np.empty((self.T + 1, st.shape[0]))
        for s0 in self.initial:
            big = max(big, _forward(self.S, w, a, st, nxt, self.lgam, int(s0), buf))
            v = buf[self.T, self.final]
            v = v[np.isfinite(v)]
            top = float(v.max()) if v.size else -math.inf
            shares.append(top + math.log(float(np.exp(v - top).sum())) if v.size
                          else -math.inf)
        self.shares = np.array(shares)
        top = float(np.max(self.shares))
        total = top + math.log(float(np.exp(self.shares - top).sum()))
        self.log_z = float(self.lgam[a] - a * math.log(b) + total)
        X = big + abs(total) + abs(self.log_z) + 1.0
        eps_v = _U * X * (self.T * (4 * w + 4 * (a + 1) + 8) + w * w + 4 * w
                          + 4 * (self.initial.size + st.shape[0]))
        self.margin = 2.0 * eps_v
        self.tv = 4.0 * eps_v * (1.0 + 8.0 * eps_v) + (self.T + 2) * (a + 2) * _U

    def tables(self, s0: int) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        st = self.st
        fwd = np.empty((self.T + 1, st.shape[0]))
        _forward(self.S, self.w, self.a, st, self.nxt, self.lgam, int(s0), fwd)
        cum = np.zeros((self.T, st.shape[0], self.a + 1))
        _choices(self.S, self.w, self.a, st, self.pred, self.lgam, fwd, cum)
        v = fwd[self.T, self.final]
        top = float(np.max(v))
        return fwd, cum, np.cumsum(np.exp(v - top))


class _Listed:
    """Small ``b``: the count vectors of sum ``a`` listed with their log-weights."""

    def __init__(self, S: np.ndarray, a: int) -> None:
        self.S = np.ascontiguousarray(S, dtype=np.float64)
        b = self.S.shape[0]
        comps = []

        def walk(prefix: list, left: int) -> None:
            if len(prefix) == b - 1:
                comps.append(prefix + [left])
                return
            for c in range(left + 1):
                walk(prefix + [c], left - c)
        walk([], a)
        C = np.array(comps, dtype=np.int64).reshape(-1, b)
        lg = np.array([math.lgamma(x + 1.0) for x in range(a + 1)])
        quad = np.einsum("ij,jk,ik->i", C, self.S, C) - C @ np.diag(self.S)
        lw = lg[a] - lg[C].sum(axis=1) + 0.5 * quad
        top = float(lw.max())
        total = top + math.log(float(np.exp(lw - top).sum()))
        self.C = C
        self.p = np.exp(lw - top)
        self.p /= self.p.sum()
        self.log_z = float(total - a * math.log(b))
        X = float(np.max(np.abs(lw))) + abs(total) + a * math.log(b) + 1.0
        eps_v = _U * X * (4 * b * b + 4 * C.shape[0] + 16)
        self.margin = 2.0 * eps_v
        self.tv = 4.0 * eps_v * (1.0 + 8.0 * eps_v) + (C.shape[0] + 4) * _U


class _Pairs:
    r"""Order 2 where the band transfer's tables are too large (many bands): the
    ``b^2`` ordered pairs ``(j, j')`` with log-weights :math:`S_{jj'}` (the count vector
    ``e_j + e_{j'}``: ``multinomial(2; c) exp((c^T S c - c^T diag S)/2)`` summed over the
    orderings), so :math:`Z_2 = b^{-2}\sum_{j,j'} e^{S_{jj'}}` exactly."""

    def __init__(self, S: np.ndarray) -> None:
        self.S = np.ascontiguousarray(S, dtype=np.float64)
        b = self.S.shape[0]
        lw = self.S.ravel()
        top = float(lw.max())
        total = top + math.log(float(np.exp(lw - top).sum()))
        self.p = np.exp(lw - top)
        self.p /= self.p.sum()
        self.log_z = float(total - 2.0 * math.log(b))
        # as _Listed, with b^2 listed terms of one addition each
        X = float(np.max(np.abs(lw))) + abs(total) + 2.0 * math.log(b) + 1.0
        eps_v = _U * X * (4 * b * b + 16)
        self.margin = 2.0 * eps_v
        self.tv = 4.0 * eps_v * (1.0 + 8.0 * eps_v) + (b * b + 4) * _U


def _structure(S: np.ndarray, a: int, budget: float = math.inf):
    """The law's tables: listed count vectors where ``b < 2w + 1``; the ordered pairs at
    order 2 where the band transfer is over ``budget`` (:func:`feasible`); else the
    band transfer."""
    b, w = S.shape[0], _bandwidth(S)
    if b < 2 * w + 1:
        return _Listed(S, a)
    if a == 2 and not _band_feasible(b, w, a, budget) and b * b <= MAX_PAIRS:
        return _Pairs(S)
    return _Band(S, a)


def tilted_log_moment(S: np.ndarray, order: int) -> Tuple[float, float]:
    r"""Bracket ``(lower, upper)`` on :math:`\log Z_a = \log E_Q[(P/Q)^a]` of the fixed
    bin from the tables the tilted sampler uses (equal to
    :func:`sampledprv.rdp.matrix_moments.band_fixed_bin_log_moments` up to round-off)."""
    st = _structure(np.asarray(S, dtype=np.float64), _order(order))
    return st.log_z - st.margin, st.log_z + st.margin


def _order(order: int) -> int:
    a = int(order)
    if a < 2 or a != order:
        raise ValueError(f"order must be an integer >= 2, got {order!r}")
    return a


def _sample(struct, rng: np.random.Generator, n: int, R: np.ndarray,
            want_counts: bool) -> Tuple[np.ndarray, np.ndarray]:
    S = struct.S
    b = S.shape[0]
    half = 0.5 * np.diag(S)
    logb = math.log(b)
    out = np.empty(int(n))
    counts = np.zeros((int(n) if want_counts else 0, b), dtype=np.int64)
    if isinstance(struct, _Pairs):
        return _sample_pairs(struct, rng, int(n), R, want_counts, half, logb)
    if isinstance(struct, _Listed):
        idx = rng.choice(struct.p.size, size=int(n), p=struct.p)
        step = 100_000
        for lo in range(0, int(n), step):
            hi = min(int(n), lo + step)
            c = struct.C[idx[lo:hi]]
            u = c @ S + rng.standard_normal((hi - lo, b)) @ R.T - half
            m = u.max(axis=1)
            out[lo:hi] = m + np.log(np.exp(u - m[:, None]).sum(axis=1)) - logb
            if want_counts:
                counts[lo:hi] = c
        return out, counts
    p = np.exp(struct.shares - np.max(struct.shares))
    groups = rng.multinomial(int(n), p / p.sum())
    sptr, sidx, sval = _csr(S)
    rptr, ridx, rval = _csr(R)
    pos = 0
    for s0, m in zip(struct.initial, groups):
        if m == 0:
            continue
        fwd, cum, fcum = struct.tables(int(s0))
        state = states_from(rng)[0]
        _draw(state, S, struct.w, struct.a, struct.st, struct.pred, fwd, cum,
              struct.final, fcum, sptr, sidx, sval, rptr, ridx, rval, half, logb,
              out[pos:pos + m], counts[pos:pos + m] if want_counts else counts,
              want_counts)
        pos += int(m)
    return out, counts


def _sample_pairs(struct: "_Pairs", rng: np.random.Generator, n: int, R: np.ndarray,
                  want_counts: bool, half: np.ndarray,
                  logb: float) -> Tuple[np.ndarray, np.ndarray]:
    """Draws of the order-2 law: a pair ``(j, j')`` from its weights, then
    ``u = S (e_j + e_j') + R g`` (rows ``S[j] + S[j']``; ``R`` applied sparse, the many-band
    factor being mostly zeros), in chunks of at most ``4e6 / b`` draws."""
    S = struct.S
    b = S.shape[0]
    idx = rng.choice(struct.p.size, size=n, p=struct.p)
    first, second = idx // b, idx % b
    Rs = sparse.csr_matrix(R)
    out = np.empty(n)
    counts = np.zeros((n if want_counts else 0, b), dtype=np.int64)
    step = max(1, 4_000_000 // b)
    for lo in range(0, n, step):
        hi = min(n, lo + step)
        g = rng.standard_normal((hi - lo, b))
        u = S[first[lo:hi]] + S[second[lo:hi]] + (Rs @ g.T).T - half
        m = u.max(axis=1)
        out[lo:hi] = m + np.log(np.exp(u - m[:, None]).sum(axis=1)) - logb
    if want_counts:
        rows = np.arange(n)
        np.add.at(counts, (rows, first), 1)
        np.add.at(counts, (rows, second), 1)
    return out, counts


def fixed_bin_tilted_counts(S: np.ndarray, order: int, n: int,
                            seed: int = 0) -> Tuple[np.ndarray, np.ndarray]:
    """``(losses, counts)``: ``n`` draws of :math:`P_a` with their count vectors
    (``n x b``; for checks against the exact mixture weights)."""
    S = np.ascontiguousarray(S, dtype=np.float64)
    struct = _structure(S, _order(order))
    return _sample(struct, np.random.default_rng(seed), n, np.linalg.cholesky(S), True)


def fixed_bin_law(S: np.ndarray, R: np.ndarray, order: int, count: int = 1,
                  budget: float = math.inf) -> TiltedLaw:
    r""":math:`P_a` of ``count`` independent runs of the fixed-bin matrix mechanism with
    scaled Gram matrix ``S`` and a factor ``R`` (:math:`RR^\top = S`), remove
    direction: the product of the runs' tilted laws, :math:`Z_a` the product of their
    moments.  The draws of a group of equal first-window counts are made together, then
    put in a uniformly random order (so that the draws are i.i.d. in sequence, and the
    copies of a composition or the factors of :func:`product_law` pair independently)."""
    a, E = _order(order), int(count)
    if E < 1:
        raise ValueError(f"count must be >= 1, got {count!r}")
    S = np.ascontiguousarray(S, dtype=np.float64)
    R = np.ascontiguousarray(R, dtype=np.float64)
    struct = _structure(S, a, budget)

    def draw(rng: np.random.Generator, n: int) -> np.ndarray:
        total = np.zeros(int(n))
        for _ in range(E):
            losses, _ = _sample(struct, rng, int(n), R, False)
            total += rng.permutation(losses)    # iid order: copies and products add
        return total
    b = S.shape[0]
    return renyi_tilted(a, (E * (struct.log_z - struct.margin),
                            E * (struct.log_z + struct.margin)), draw,
                        f"fixed-bin matrix mechanism ({b} bins) tilted to order {a}",
                        tv=E * struct.tv)


def product_law(laws: list) -> TiltedLaw:
    r""":math:`P_a` of the product of independent pairs from their tilted laws of one
    order (:math:`p^aq^{1-a}` factorises, so the product of the tilted laws is the
    tilted law of the product and :math:`Z_a` the product of the moments): the losses
    add, the brackets on :math:`\log Z_a` and the round-off ``tv`` add."""
    if not laws:
        raise ValueError("laws must hold at least one tilted law")
    a = laws[0].order
    if any(law.order != a for law in laws):
        raise ValueError("the laws of a product must share one order")

    def draw(rng: np.random.Generator, n: int) -> np.ndarray:
        return sum(law.draw(rng, int(n))[0] for law in laws)
    lo = sum(law.log_scale[0] for law in laws)
    hi = sum(law.log_scale[1] for law in laws)
    return renyi_tilted(a, (lo, hi), draw, " x ".join(law.name for law in laws),
                        tv=sum(law.tv for law in laws))
