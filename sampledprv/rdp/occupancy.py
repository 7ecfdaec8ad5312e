r"""Exact occupancy moments of independent uniform ``k``-subsets, by dynamic programming.

For ``a`` independent uniformly random ``k``-subsets :math:`S_1, \dots, S_a` of the
steps :math:`\{1, \dots, T\}` and a weight :math:`M(c) > 0` on the number
:math:`c_t = \#\{i : t \in S_i\}` of subsets that contain step :math:`t`, this module
computes

.. math:: E\Big[\prod_{t=1}^{T} M(c_t)\Big]

exactly (up to floating-point round-off, bounded and rounded outward by the caller).
It is the remove-direction Renyi moment of random allocation
(:mod:`sampledprv.rdp.allocation`): :math:`E_Q[(P/Q)^a] = E[\prod_t M(c_t)]`.

**Method (column by column, unnormalised).**  Write the subsets as the rows of an
``a x T`` 0/1 matrix with row sums ``k``; the weight is a product over its columns, and
:math:`E = \binom Tk^{-a}\sum_{\text{matrices}}\prod_t M(c_t)`.  Build the matrix column
by column and keep, for the first ``t`` columns, the *occupancy vector*
:math:`n = (n_0, \dots, n_k)` (:math:`n_r` = rows with ``r`` ones so far,
:math:`\sum_r n_r = a`; rows with ``k`` ones take no more).  With
:math:`u_t(n)` the weighted number of labelled ``a x t`` matrices with profile ``n``,

.. math:: u_t(n') = \sum_{n, m \to n'} u_{t-1}(n)\, M\big(\textstyle\sum_r m_r\big)
          \prod_{r<k} \binom{n_r}{m_r},

where :math:`m_r \le n_r` rows of level ``r`` take a one in column ``t`` and
:math:`n'_r = n_r - m_r + m_{r-1}`; :math:`u_0 = \delta_{(a, 0, \dots, 0)}`.  Every
column uses the same transition weights, so they are computed once (a table of
:math:`\binom{a+2k}{2k}` pairs :math:`(n, m)`, grouped by destination).

**Meeting in the middle.**  The weight does not depend on the order of the columns
nor on the labels of the rows.  Split the columns at :math:`h = \lfloor T/2\rfloor`: a
matrix is a left part with profile ``n`` and a right part whose row sums are
:math:`k - r_i`, i.e. whose profile is the reversal :math:`\bar n_r = n_{k-r}`; summed
over the right parts with *given* row sums the weight is
:math:`u_{T-h}(\bar n)` divided by the number :math:`a!/\prod_r n_r!` of labelled row-sum
vectors with that profile.  Hence

.. math:: E = \binom Tk^{-a}\sum_n u_h(n)\,u_{T-h}(\bar n)\,
          \frac{\prod_r n_r!}{a!},

and only :math:`\lceil T/2\rceil` columns are swept (:math:`u_{T-h}` is :math:`u_h`
advanced by one more column when ``T`` is odd).  The sweep is compiled with Numba.

**Logarithms.**  Every term is non-negative (no cancellation).  Each state's value is
kept as a logarithm and the terms arriving in one state are summed by log-sum-exp
shifted by their largest one, so nothing overflows; a term is lost to underflow only
when it is below :math:`e^{-745}` times the largest term arriving in the same state,
and paths that meet in a state have the same future, so such a term is negligible.
(Normalising a column across all states would not be sound: a path that is small now
may collect the largest weights later.)

**Round-off.**  Each log term of a column is a sum of at most :math:`2k + 4` rounded
numbers of magnitude at most :math:`\Lambda` (the largest :math:`|\text{log term}|`
met, tracked), so its absolute error is below :math:`(2k+4)\,\epsilon\,(1+\Lambda)`
with :math:`\epsilon = 2^{-53}`; the shifted sum of :math:`g` terms in :math:`(0, 1]`
with at least one equal to 1 has relative error below :math:`(g+2)\epsilon` (plain
recursive summation plus the rounding of ``exp``), hence its logarithm an absolute
error below :math:`(g+3)\epsilon`, with :math:`g` the largest number of terms into one
state (:math:`g_{\max}`); the errors of the :math:`\lceil T/2\rceil` columns and of the
final sum (:math:`\binom{a+k}{k}` terms) add.  The result is returned raised by
:math:`8\,\epsilon\,[T((2k+8)(1+\Lambda) + g_{\max}) + \binom{a+k}{k} + (a + 4)(1 +
\Lambda)]`, more than four times that bound (callers round up once more).
"""


from __future__ import annotations

import math
import threading
from collections import OrderedDict
from typing import Tuple

import numpy as np
from numba import njit

__all__ = ["occupancy_log_moment", "transition_count", "affordable", "MAX_TRANSITIONS",
           "MAX_TABLE"]

#: Largest ``ceil(steps / 2) * transitions`` evaluated (about two seconds of compiled
#: work); larger orders are left to the caller's other bounds.
MAX_TRANSITIONS = 2.0e8

#: Largest transition table kept in memory (16 bytes a row while it is built).
MAX_TABLE = 4.0e6
_TABLES_LOCK = threading.Lock()

_EPS = 2.0 ** -53


def transition_count(order: int, selected: int) -> int:
    r"""Transitions per column of the recursion, :math:`\binom{a+2k}{2k}`."""
    return math.comb(int(order) + 2 * int(selected), 2 * int(selected))


def _work(order: int, steps: int, selected: int) -> int:
    return -(-int(steps) // 2) * transition_count(order, selected)


def affordable(order: int, steps: int, selected: int) -> bool:
    """Whether :func:`occupancy_log_moment` runs at this order within its budgets
    (:data:`MAX_TRANSITIONS` evaluations, a table of at most :data:`MAX_TABLE` rows)."""
    return (transition_count(order, selected) <= MAX_TABLE
            and _work(order, steps, selected) <= MAX_TRANSITIONS)


def _states(a: int, k: int) -> np.ndarray:
    out: list = []

    def rec(prefix: list, left: int, levels: int) -> None:
        if levels == 1:
            out.append(tuple(prefix + [left]))
            return
        for x in range(left, -1, -1):
            rec(prefix + [x], left - x, levels - 1)
    rec([], a, k + 1)
    return np.array(out, dtype=np.int64).reshape(-1, k + 1)


@njit(cache=True)
def _build(states, sorted_keys, key_index, radix, lg, k, total):  # pragma: no cover (jit)
    r"""One row per pair (state ``n``, movers ``m``): source, destination, the log of
    :math:`\prod_{r<k}\binom{n_r}{m_r}` and the count :math:`\sum_r m_r`."""
    ns = states.shape[0]
    src = np.empty(total, dtype=np.int32)
    dst = np.empty(total, dtype=np.int32)
    lbin = np.empty(total, dtype=np.float64)
    cnt = np.empty(total, dtype=np.int32)
    m = np.zeros(k + 1, dtype=np.int64)
    j = 0
    for s in range(ns):
        for r in range(k + 1):
            m[r] = 0
        while True:
            key = 0
            lb = 0.0
            c = 0
            prev = 0
            for r in range(k + 1):
                mr = m[r]
                key += (states[s, r] - mr + prev) * radix[r]
                if r < k:
                    lb += (lg[states[s, r]] - lg[mr]) - lg[states[s, r] - mr]
                c += mr
                prev = mr
            lo, hi = 0, sorted_keys.size - 1          # the destination's index
            while lo < hi:
                mid = (lo + hi) // 2
                if sorted_keys[mid] < key:
                    lo = mid + 1
                else:
                    hi = mid
            src[j] = s
            dst[j] = key_index[lo]
            lbin[j] = lb
            cnt[j] = c
            j += 1
            r = 0                                     # next mover vector (odometer)
            while r < k:
                if m[r] < states[s, r]:
                    m[r] += 1
                    break
                m[r] = 0
                r += 1
            if r == k:
                break
    return src, dst, lbin, cnt


@njit(cache=True)
def _group(src, dst, lbin, cnt, ns):  # pragma: no cover (jit)
    """The rows sorted by destination (counting sort) and the group boundaries."""
    heads = np.zeros(ns + 1, dtype=np.int64)
    for i in range(dst.size):
        heads[dst[i] + 1] += 1
    for i in range(ns):
        heads[i + 1] += heads[i]
    pos = heads[:-1].copy()
    s2 = np.empty_like(src)
    l2 = np.empty_like(lbin)
    c2 = np.empty_like(cnt)
    for i in range(dst.size):
        p = pos[dst[i]]
        s2[p] = src[i]
        l2[p] = lbin[i]
        c2[p] = cnt[i]
        pos[dst[i]] += 1
    return s2, l2, c2, heads


@njit(cache=True)
def _sweep(log_u, src, base, heads, columns):  # pragma: no cover (jit)
    """``columns`` columns of the recursion from ``log_u``; also the largest
    ``|log term|`` met."""
    ns = heads.size - 1
    largest = 0.0
    cur = log_u.copy()
    new = np.empty(ns)
    for _ in range(columns):
        for d in range(ns):
            top = -np.inf
            for i in range(heads[d], heads[d + 1]):
                v = cur[src[i]]
                if v > -np.inf:
                    x = v + base[i]
                    if x > top:
                        top = x
            if top == -np.inf:
                new[d] = -np.inf
                continue
            acc = 0.0
            for i in range(heads[d], heads[d + 1]):
                v = cur[src[i]]
                if v > -np.inf:
                    acc += math.exp((v + base[i]) - top)
            if abs(top) > largest:
                largest = abs(top)
            new[d] = top + math.log(acc)
        cur, new = new, cur
    return cur, largest


#: The tables kept between calls, least recently used first, and their total rows.  An
#: RDP curve asks orders 2..64 in turn, so a cache that counts entries (8 of them) missed
#: on every call of every curve; this one counts rows, at most :data:`CACHE_ROWS` (16
#: bytes each: 512 MiB at most, what 8 tables of :data:`MAX_TABLE` rows took before).
_TABLES: "OrderedDict[Tuple[int, int], Tuple[np.ndarray, ...]]" = OrderedDict()
CACHE_ROWS = 32_000_000


def _table(a: int, k: int) -> Tuple[np.ndarray, ...]:
    """``(states, src, lbin, cnt, heads, start, reverse)`` of the recursion (rows grouped
    by destination; ``reverse[s]`` is the index of the reversed profile), cached by
    ``(a, k)`` within :data:`CACHE_ROWS` rows in all."""
    key = (int(a), int(k))
    with _TABLES_LOCK:
        hit = _TABLES.get(key)
        if hit is not None:
            _TABLES.move_to_end(key)
            return hit
    table = _build_table(*key)
    with _TABLES_LOCK:
        _TABLES[key] = table
        _TABLES.move_to_end(key)
        rows = sum(t[1].size for t in _TABLES.values())
        while rows > CACHE_ROWS and len(_TABLES) > 1:
            _, old = _TABLES.popitem(last=False)
            rows -= old[1].size
    return table


def _build_table(a: int, k: int) -> Tuple[np.ndarray, ...]:
    """The table of :func:`_table`, built afresh."""
    states = _states(a, k)
    ns = states.shape[0]
    radix = (a + 1) ** np.arange(k, -1, -1, dtype=np.int64)
    keys = states @ radix
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    lg = np.array([math.lgamma(x + 1.0) for x in range(a + 1)])
    total = transition_count(a, k)
    src, dst, lbin, cnt = _build(states, sorted_keys, order.astype(np.int64), radix, lg, k,
                                 total)
    src, lbin, cnt, heads = _group(src, dst, lbin, cnt, ns)
    start = int(np.flatnonzero(keys == a * radix[0])[0])
    reverse = order[np.searchsorted(sorted_keys, states[:, ::-1] @ radix)]
    return states, src, lbin, cnt, heads, start, reverse


def occupancy_log_moment(log_m: np.ndarray, steps: int, selected: int) -> float:
    r""":math:`\log E[\prod_{t \le T} M(c_t)]` for ``a = len(log_m) - 1`` independent
    uniform ``selected``-subsets of ``steps`` steps (exact up to round-off, raised by
    the margin of the module notes); ``log_m[c] = log M(c)`` for ``c = 0..a``.

    Raises
    ------
    ValueError
        If the recursion is not :func:`affordable` (more than :data:`MAX_TRANSITIONS`
        transition evaluations or a table over :data:`MAX_TABLE` rows): use a bound.
    """
    log_m = np.asarray(log_m, dtype=np.float64)
    a, k, T = log_m.size - 1, int(selected), int(steps)
    if a < 1 or k < 1 or k > T:
        raise ValueError(f"need order >= 1 and 1 <= selected <= steps, got order={a}, "
                         f"selected={k}, steps={T}")
    if not affordable(a, T, k):
        raise ValueError(f"the exact occupancy moment at order {a}, selected={k}, steps={T} "
                         f"needs {_work(a, T, k):.3g} transition evaluations on a table of "
                         f"{transition_count(a, k):.3g} rows (limits {MAX_TRANSITIONS:.3g} "
                         f"and {MAX_TABLE:.3g}); use a bound at this order")
    states, src, lbin, cnt, heads, start, reverse = _table(a, k)
    base = lbin + log_m[cnt]
    log_u = np.full(states.shape[0], -np.inf)
    log_u[start] = 0.0
    half = T // 2
    left, big1 = _sweep(log_u, src, base, heads, half)
    right, big2 = (_sweep(left, src, base, heads, 1) if T - half > half else (left, 0.0))
    lg = np.array([math.lgamma(x + 1.0) for x in range(a + 1)])
    terms = left + right[reverse] + (np.sum(lg[states], axis=1) - math.lgamma(a + 1.0))
    top = float(np.max(terms))
    log_binom = math.lgamma(T + 1.0) - math.lgamma(k + 1.0) - math.lgamma(T - k + 1.0)
    val = top + math.log(float(np.sum(np.exp(terms - top)))) - a * log_binom
    largest = max(big1, big2, abs(top), a * log_binom, float(np.max(np.abs(base))))
    g_max = int(np.max(np.diff(heads)))
    margin = 8.0 * _EPS * (T * ((2 * k + 8) * (1.0 + largest) + g_max)
                           + states.shape[0] + (a + 4) * (1.0 + largest))
    return float(val) + margin
