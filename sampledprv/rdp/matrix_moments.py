r"""Renyi divergences of the dominating pairs of matrix-factorization training (DP-MF).

Notation (design notes, "Matrix-factorization training"): ``n`` steps, ``b`` bins,
:math:`S = G/\sigma^2` the scaled Gram matrix of the bin vectors (non-negative entries
for a non-negative ``C``), :math:`P = b^{-1}\sum_j N(m_j, \sigma^2 I)`,
:math:`Q = N(0, \sigma^2 I)` for the fixed bin; in general :math:`P = E_\pi N(C\pi,
\sigma^2 I)` over the sampler's participation patterns :math:`\pi`.

Remove direction, fixed bin, integer order :math:`a` (:func:`fixed_bin_log_moment`):

.. math:: E_Q[(P/Q)^a] = b^{-a}\sum_{|c| = a}\binom{a}{c}
          \exp\big((c^\top Sc - c^\top \operatorname{diag} S)/2\big),

computed exactly by listing the count vectors (a depth-first walk that updates the
exponent incrementally) while :math:`\binom{b+a-1}{a}` fits :data:`MAX_VECTORS`, and
bounded above for every order by splitting the cross terms,
:math:`2S_{jk}c_jc_k \le S_{jk}(c_j^2 + c_k^2)` (:math:`S_{jk} \ge 0`), which makes the
sum a product of one series per bin:
:math:`E \le a!\,b^{-a}[x^a]\prod_j\sum_c e^{(S_{jj}+r_j)c(c-1)/2 + r_jc/2}x^c/c!`,
:math:`r_j = \sum_{k\ne j}S_{jk}` (exact when ``S`` is diagonal, e.g. ``c_col = [1]``).

Remove direction, any sampler (:func:`convexity_log_moment`): by the joint convexity of
:math:`(P, Q)\mapsto E_Q[(P/Q)^a]`,
:math:`E_Q[(P/Q)^a] \le E_\pi[e^{a(a-1)\|C\pi\|^2/(2\sigma^2)}]`, evaluated exactly for
the fixed bin (average over bins) and b-min-sep / cyclic Poisson (the columns of one
pattern are orthogonal: the renewal recursion with deterministic weights).

Add direction (:func:`add_divergence`): by Jensen's inequality
:math:`\log(P/Q)(y) \ge E_\pi[\log dN(C\pi)/dQ(y)] = \bar m^\top y/\sigma^2 - \kappa`,
:math:`\bar m = C\,E[\pi]`, :math:`\kappa = E_\pi\|C\pi\|^2/(2\sigma^2)`; under ``Q``
the right side is Gaussian, so :math:`D_a(Q\|P) \le \kappa + (a-1)\|\bar m\|^2/(2\sigma^2)`
for every real :math:`a > 1`.

Orders that are not integers (remove) take the chord of the convex
:math:`(a-1)D_a` between the neighbouring integers.  Every value is rounded up.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..core.outward import up

__all__ = ["MAX_VECTORS", "exact_fixed_bin_log_moment", "pair_fixed_bin_log_moment",
           "readonly_gram", "split_fixed_bin_log_moment", "split_fixed_bin_log_moments",
           "renewal_log_moment", "add_divergence", "chord", "band_state_table",
           "band_fixed_bin_log_moments", "band_transitions", "cyclic_bandwidth", "log_add",
           "band_start", "band_wrap", "band_field", "band_term", "state_total"]

#: Largest number of count vectors the exact fixed-bin moment lists.
MAX_VECTORS = 4_000_000


def _log_comb(n: int, k: int) -> float:
    return math.lgamma(n + 1.0) - math.lgamma(k + 1.0) - math.lgamma(n - k + 1.0)


@njit(cache=True, inline="always")
def log_add(acc, x):  # pragma: no cover - numba
    """``log(exp(acc) + exp(x))`` for an accumulator that starts at ``-inf``: the larger
    term plus ``log1p`` of the other's ratio (exact when either is ``-inf``)."""
    if acc == -math.inf:
        return x
    if x > acc:
        return x + math.log1p(math.exp(acc - x))
    return acc + math.log1p(math.exp(x - acc))


@njit(cache=True)
def _walk(S, a):  # pragma: no cover - numba
    r""":math:`\log\sum_{|c|=a}\binom ac e^{(c^\top Sc - c^\top\operatorname{diag}S)/2}`
    by a depth-first walk over the bins (field ``f_j = sum_{k assigned} S_jk c_k``)."""
    b = S.shape[0]
    c = np.zeros(b, dtype=np.int64)
    field = np.zeros((b + 1, b))       # field[j] = the field seen by bins >= j
    expo = np.zeros(b + 1)             # exponent of the bins < j
    logw = np.zeros(b + 1)             # log of a! / prod c_k! of the bins < j
    left = np.zeros(b + 1, dtype=np.int64)
    lgam = np.zeros(a + 2)
    for t in range(1, a + 2):
        lgam[t] = lgam[t - 1] + math.log(t)
    left[0] = a
    logw[0] = lgam[a]
    total = -math.inf
    j = 0
    c[0] = -1
    while j >= 0:
        c[j] += 1
        if j == b - 1:             # the last bin takes what is left
            cj = left[j]
            e = expo[j] + S[j, j] * cj * (cj - 1) * 0.5 + cj * field[j, j]
            w = logw[j] - lgam[cj] + e
            total = log_add(total, w)
            j -= 1
            continue
        cj = c[j]
        if cj > left[j]:
            j -= 1
            continue
        expo[j + 1] = expo[j] + S[j, j] * cj * (cj - 1) * 0.5 + cj * field[j, j]
        logw[j + 1] = logw[j] - lgam[cj]
        left[j + 1] = left[j] - cj
        for k in range(b):
            field[j + 1, k] = field[j, k] + S[k, j] * cj
        j += 1
        c[j] = -1
    return total


def vectors(b: int, a: int) -> float:
    """Number of count vectors of ``a`` balls in ``b`` bins."""
    return math.exp(_log_comb(b + a - 1, a))


def readonly_gram(S: np.ndarray) -> np.ndarray:
    """``S`` as a C-contiguous float64 array that the kernels see read-only.

    The matrix mechanism's cached Gram matrices are read-only and fresh ones are not;
    Numba compiles a kernel once per such variant.  Passing every matrix read-only (a
    read-only view of a writable one; nothing is copied that was not before) keeps one
    compiled signature per kernel."""
    S = np.ascontiguousarray(S, dtype=np.float64)
    if S.flags.writeable:
        S = S.view()
        S.setflags(write=False)
    return S


def exact_fixed_bin_log_moment(S: np.ndarray, a: int) -> float:
    r""":math:`\log E_Q[(P/Q)^a]` of the fixed bin, exact (up to round-off, rounded up),
    or ``inf`` when :math:`\binom{b+a-1}{a}` exceeds :data:`MAX_VECTORS`."""
    S = readonly_gram(S)
    b = S.shape[0]
    if vectors(b, a) > MAX_VECTORS or vectors(b, a) * b > 50 * MAX_VECTORS:
        return math.inf
    val = float(_walk(S, int(a))) - a * math.log(b)
    return up(max(val, 0.0), abs(val) + float(a * a * np.max(S)) + a * math.log(b))


def pair_fixed_bin_log_moment(S: np.ndarray) -> float:
    r""":math:`\log E_Q[(P/Q)^2] = \log b^{-2}\sum_{j,j'} e^{S_{jj'}}` of the fixed bin,
    exact (rounded up): the order-2 case of the multiset sum (the count vector
    ``e_j + e_{j'}`` has weight ``multinomial(2; c) exp((c^T S c - c^T diag S)/2)``,
    which is ``e^{S_jj'}`` summed over the two orderings), ``b^2`` terms for any bands."""
    S = np.asarray(S, dtype=np.float64)
    b = S.shape[0]
    top = float(S.max())
    val = top + math.log(float(np.exp(S - top).sum())) - 2.0 * math.log(b)
    # each exp and the b^2 additions: relative error of the sum below (b^2 + 8) 2^-53,
    # plus the roundings of the differences (magnitude |top| + 2 log b)
    err = (b * b + 8) * 2.0 ** -53 + 8 * 2.0 ** -53 * (1.0 + abs(top) + 2.0 * math.log(b))
    return up(max(val + 2.0 * err, 0.0), abs(top) + 2.0 * math.log(b))


def cyclic_bandwidth(S: np.ndarray) -> int:
    r"""Largest cyclic distance :math:`\min(|j-k|, b-|j-k|)` of a non-zero ``S[j, k]``."""
    b = S.shape[0]
    j, k = np.nonzero(S)
    d = np.abs(j - k)
    return int(np.max(np.minimum(d, b - d))) if d.size else 0


def band_state_table(w: int, A: int):
    """The weak compositions ``(L_0..L_{w-1}, r)`` of sums ``<= A`` (sorted by sum), the
    offset of each sum, and ``nxt[s, c]``: the state after a bin of count ``c``
    (``L`` shifted by one, ``c`` appended, ``r += L_0``; -1 beyond the sum ``A``)."""
    states: list = []

    def walk(prefix: tuple, left: int) -> None:       # weak compositions, sum <= A
        if len(prefix) == w + 1:
            states.append(prefix)
            return
        for c in range(left + 1):
            walk(prefix + (c,), left - c)
    walk((), A)
    states.sort(key=lambda t: (sum(t), t))
    arr = np.array(states, dtype=np.int64).reshape(-1, w + 1)
    index = {t: i for i, t in enumerate(states)}
    sums = arr.sum(axis=1)
    start = np.searchsorted(sums, np.arange(A + 2))
    nxt = np.full((arr.shape[0], A + 1), -1, dtype=np.int64)
    for i, t in enumerate(states):
        L, r = t[:w], t[w]
        base = L[1:]
        for c in range(A - sums[i] + 1):
            nxt[i, c] = index[base + (c,) + (r + L[0],)]
    return arr, start, nxt


@njit(cache=True, inline="always")
def band_start(S, F, w, lgam):  # pragma: no cover - numba
    r"""Log-weight of the first window's counts ``F`` (bins ``0..w-1``):
    :math:`\sum_k [S_{kk}F_k(F_k-1)/2 - \log F_k!] + \sum_{k<k'} S_{kk'}F_kF_{k'}`."""
    v0 = 0.0
    for k in range(w):
        ck = F[k]
        v0 += S[k, k] * ck * (ck - 1) * 0.5 - lgam[ck]
        for k2 in range(k + 1, w):
            v0 += S[k, k2] * ck * F[k2]
    return v0


@njit(cache=True, inline="always")
def band_wrap(S, j, w, b, F):  # pragma: no cover - numba
    """The field on bin ``j`` of the first window's counts ``F`` (wrapped distance
    ``<= w``)."""
    x = 0.0
    for k in range(w):
        if k + b - j <= w:
            x += S[j, k] * F[k]
    return x


@njit(cache=True, inline="always")
def band_field(S, j, w, st, i, wrap):  # pragma: no cover - numba
    """The field on bin ``j`` of state ``i``'s window (the last ``w`` counts) plus
    ``wrap``."""
    f = wrap
    for l in range(w):
        f += S[j, j - w + l] * st[i, l]
    return f


@njit(cache=True, inline="always")
def band_term(v, sjj, c, field, lg):  # pragma: no cover - numba
    """Log-weight after bin ``j`` takes count ``c`` (``sjj = S[j, j]``, ``lg = log c!``)
    from the value ``v``."""
    return v + sjj * c * (c - 1) * 0.5 + c * field - lg


@njit(cache=True, inline="always")
def state_total(st, i, w):  # pragma: no cover - numba
    """Total count of state ``i`` (window and the bins that left it)."""
    tot = 0
    for l in range(w + 1):
        tot += st[i, l]
    return tot


@njit(cache=True)
def _band_dp(S, w, A, st, start, nxt, lgam):  # pragma: no cover - numba
    r""":math:`\log\sum_{|c|=t}\prod_j c_j!^{-1}e^{(c^\top Sc - c^\top\operatorname{diag}S)/2}`
    for ``t = 0..A`` by the transfer over the bins of a cyclically ``w``-banded ``S``
    (``b >= 2w + 1``): the counts ``F`` of bins ``0..w-1`` are fixed in turn; the state
    is the window ``L`` of the last ``w`` counts and the total ``r`` of the bins that
    left it; bin ``j`` meets ``L`` (distance ``<= w``) and, near the end, ``F`` (wrapped
    distance ``<= w``)."""
    b = S.shape[0]
    ns = st.shape[0]
    Z = np.full(A + 1, -math.inf)
    cur = np.empty(ns)
    new = np.empty(ns)
    F = np.zeros(w, dtype=np.int64)
    for s0 in range(start[A + 1]):
        if st[s0, w] != 0:
            continue
        f = 0
        for k in range(w):
            F[k] = st[s0, k]
            f += F[k]
        for i in range(ns):
            cur[i] = -math.inf
        cur[s0] = band_start(S, F, w, lgam)
        lo = start[f]
        for j in range(w, b):
            for i in range(lo, ns):
                new[i] = -math.inf
            wrap = band_wrap(S, j, w, b, F)
            for i in range(lo, ns):
                v = cur[i]
                if v == -math.inf:
                    continue
                field = band_field(S, j, w, st, i, wrap)
                for c in range(A - state_total(st, i, w) + 1):
                    tg = nxt[i, c]
                    new[tg] = log_add(new[tg], band_term(v, S[j, j], c, field, lgam[c]))
            for i in range(lo, ns):
                cur[i] = new[i]
        for i in range(lo, ns):
            v = cur[i]
            if v == -math.inf:
                continue
            tot = state_total(st, i, w)
            Z[tot] = log_add(Z[tot], v)
    return Z


def band_transitions(b: int, w: int, A: int) -> float:
    """Work of :func:`band_fixed_bin_log_moments` (transitions plus scanned states, and
    the state table built in Python, counted 100 times)."""
    return (b * math.exp(_log_comb(A + 2 * w + 2, 2 * w + 2))
            + b * math.exp(_log_comb(A + w, w) + _log_comb(A + w + 1, w + 1))
            + 100.0 * (A + 1) * math.exp(_log_comb(A + w + 1, w + 1)))


def band_fixed_bin_log_moments(S: np.ndarray, A: int) -> np.ndarray:
    r""":math:`\log E_Q[(P/Q)^t]` of the fixed bin for ``t = 0..A``, exact (rounded up),
    by the band transfer of :func:`_band_dp`; needs ``b >= 2w + 1`` for the cyclic
    bandwidth ``w`` of ``S`` (:func:`cyclic_bandwidth`), else ``ValueError``."""
    S = readonly_gram(S)
    b = S.shape[0]
    w = max(cyclic_bandwidth(S), 1)
    if b < 2 * w + 1:
        raise ValueError(f"the band transfer needs b >= 2w + 1 bins (b={b}, w={w})")
    st, start, nxt = band_state_table(w, int(A))
    lgam = np.array([math.lgamma(c + 1.0) for c in range(A + 2)])
    Z = _band_dp(S, w, int(A), st, start, nxt, lgam)
    t = np.arange(A + 1, dtype=np.float64)
    val = lgam[:A + 1] - t * math.log(b) + Z
    scale = np.abs(val) + t * t * float(np.max(S)) + t * math.log(b)
    return np.array([up(max(x, 0.0), sc) for x, sc in zip(val, scale)])


def _log_series_product(logs: np.ndarray, a: int) -> np.ndarray:
    """Log-coefficients (degree <= a) of the product of the series whose
    log-coefficients are the rows of ``logs`` (all coefficients positive)."""
    out = np.full(a + 1, -np.inf)
    out[0] = 0.0
    for row in logs:
        new = np.full(a + 1, -np.inf)
        for d in range(a + 1):
            terms = out[:d + 1] + row[d::-1]
            m = terms.max()
            if np.isfinite(m):
                new[d] = m + math.log(np.exp(terms - m).sum())
        out = new
    return out


def split_fixed_bin_log_moment(S: np.ndarray, a: int) -> float:
    r"""Upper bound on :math:`\log E_Q[(P/Q)^a]` of the fixed bin for any ``a`` (the
    cross terms split onto the bins, module docstring); ``O(b a^2)``."""
    return float(split_fixed_bin_log_moments(S, int(a))[int(a)])


def split_fixed_bin_log_moments(S: np.ndarray, top: int) -> np.ndarray:
    r""":func:`split_fixed_bin_log_moment` at every order ``0..top`` from one product of
    the bins' series to degree ``top`` (``O(b top^2)``, the cost of the single order
    ``top``).  A coefficient of degree ``d`` of a product of truncated series takes the
    same floating-point operations whatever the truncation degree ``>= d``, so entry
    ``a`` is bit-identical to the product truncated at ``a``."""
    S = np.asarray(S, dtype=np.float64)
    top = int(top)
    b = S.shape[0]
    d = np.diag(S)
    r = S.sum(axis=1) - d
    c = np.arange(top + 1, dtype=np.float64)
    lg = np.array([math.lgamma(x + 1.0) for x in c])
    logs = ((d + r)[:, None] * (c * (c - 1.0) / 2.0)[None, :] + r[:, None] * c[None, :] / 2.0
            - lg[None, :])
    # bins with equal rows share one factor: raise it to its multiplicity by squaring
    keys, inv, counts = np.unique(np.round(np.stack([d, r], 1), 14), axis=0,
                                  return_inverse=True, return_counts=True)
    total = np.full(top + 1, -np.inf)
    total[0] = 0.0
    for g in range(keys.shape[0]):
        row = logs[np.nonzero(inv.ravel() == g)[0][0]]
        total = _log_series_product(np.vstack([total, _power(row, int(counts[g]), top)]),
                                    top)
    # the round-off scale of order a takes the largest |log coefficient| of degree <= a
    biggest = np.maximum.accumulate(np.max(np.abs(logs), axis=0))
    out = np.empty(top + 1)
    for a in range(top + 1):
        val = lg[a] - a * math.log(b) + total[a]
        out[a] = up(max(val, 0.0), abs(val) + a * math.log(b) + float(biggest[a]))
    return out


def _power(row: np.ndarray, e: int, a: int) -> np.ndarray:
    out = np.full(a + 1, -np.inf)
    out[0] = 0.0
    base = row.copy()
    while e > 0:
        if e & 1:
            out = _log_series_product(np.vstack([out, base]), a)
        e >>= 1
        if e:
            base = _log_series_product(np.vstack([base, base]), a)
    return out


def renewal_log_moment(weights: np.ndarray, b: int, p: float, kind: str,
                       warm: bool = False) -> float:
    r""":math:`\log E_\pi[e^{\sum_{i\in\pi} w_i}]` over the participation patterns of a
    sampler whose pattern columns are orthogonal, for ``kind`` ``"fixed"`` (``p = 1``:
    average over the ``b`` bins), ``"cyclic"`` (random shift, Poisson ``p``) or
    ``"bminsep"`` (renewal with gaps :math:`b-1+\mathrm{Geom}(p)`, cold or warm start).
    With :math:`w_i = a(a-1)\|Ce_i\|^2/(2\sigma^2)` it is the joint-convexity bound on
    :math:`\log E_Q[(P/Q)^a]`."""
    w = np.asarray(weights, dtype=np.float64)
    n = w.size
    if kind in ("fixed", "cyclic"):
        lq = math.log1p(-p) if p < 1.0 else -math.inf
        per = np.zeros(b)
        np.add.at(per, np.arange(n) % b, np.logaddexp(lq, math.log(p) + w))
        m = per.max()
        return up(m + math.log(np.exp(per - m).sum()) - math.log(b), abs(m) + 1.0)
    lq = math.log1p(-p) if p < 1.0 else -math.inf
    lp = math.log(p)
    ring = np.zeros(b)
    for i in range(n - 1, -1, -1):
        ring[i % b] = np.logaddexp(lq + ring[(i + 1) % b], lp + w[i] + ring[i % b])
    if not warm:
        val = ring[0]
    else:
        val = np.logaddexp.reduce(np.concatenate([[ring[0]], lp + ring[1:]])) \
            - math.log1p((b - 1) * p)
    return up(float(val), abs(float(val)) + 1.0)


def add_divergence(order: float, kappa: float, mbar_sq: float) -> float:
    r""":math:`D_a(Q\|P) \le \kappa + (a-1)\|\bar m\|^2/(2\sigma^2)`; ``mbar_sq`` is
    :math:`\|\bar m\|^2/\sigma^2`, ``kappa`` :math:`E_\pi\|C\pi\|^2/(2\sigma^2)`."""
    return up(kappa + (float(order) - 1.0) * 0.5 * mbar_sq)


def chord(order: float, log_moment) -> float:
    r""":math:`D_a` from an integer-order bound ``log_moment(k)`` on
    :math:`(k-1)D_k`: exact orders divided, others by the chord of the convex
    :math:`(a-1)D_a` between the neighbouring integers (``log_moment(1) = 0``)."""
    a = float(order)
    lo, hi = math.floor(a), math.ceil(a)
    if lo == hi:
        return log_moment(int(a)) / (a - 1.0)
    k_hi = log_moment(int(hi))
    k_lo = 0.0 if lo <= 1 else log_moment(int(lo))
    if not (math.isfinite(k_hi) and math.isfinite(k_lo)):
        return math.inf
    lo = max(lo, 1)
    val = (k_lo * (hi - a) + k_hi * (a - lo)) / (hi - lo)
    return up(val / (a - 1.0), max(k_lo, k_hi) / (a - 1.0))
