r"""Exact occupancy moments of independent uniform ``k``-subsets, by dynamic programming.

For ``a`` independent uniformly random ``k``-subsets :math:`S_1, \dots, S_a` of the
steps :math:`\{1, \dots, T\}` and a weight :math:`M(c) > 0` on the number
:math:`c_t = \#\{i : t \in S_i\}` of subsets that contain step :math:`t`, this module
computes

.. math:: E\Big[\prod_{t=1}^{T} M(c_t)\Big]

exactly (up to floating-point round-off, bounded and rounded outward by the caller).
It is the remove-direction Renyi moment of random allocation
(:mod:`sampledprv.rdp.allocation`): :math:`E_Q[(P/Q)^a] = E[\prod_t M(c_t)]`.

**Method.**  Reveal the subsets step by step.  A uniform ``k``-subset read in the
order :math:`t = 1, \dots, T` is a Markov chain on the number ``r`` of its elements
seen so far: step :math:`t` belongs to it with probability :math:`(k - r)/(T - t + 1)`
(sequential sampling without replacement), and the ``a`` chains are independent.  The
joint state after step ``t`` is therefore the *occupancy vector*
:math:`n = (n_0, \dots, n_k)`, :math:`n_r` = number of subsets with ``r`` elements so
far (:math:`\sum_r n_r = a`; the subsets are exchangeable, so which subset is where
does not matter).  At step ``t`` the :math:`m_r` subsets of level ``r`` that contain
``t`` are independent :math:`\mathrm{Binomial}(n_r, (k-r)/(T-t+1))` draws,
:math:`c_t = \sum_r m_r`, and the state moves to :math:`n_r - m_r + m_{r-1}`.  The
forward recursion

.. math:: v_t(n') = \sum_{n, m \to n'} v_{t-1}(n)\, M\big(\textstyle\sum_r m_r\big)
          \prod_{r<k} \binom{n_r}{m_r} p_r^{m_r} (1-p_r)^{n_r-m_r}

from :math:`v_0 = \delta_{(a, 0, \dots, 0)}` ends in :math:`v_T((0, \dots, 0, a))`,
the moment.  There are :math:`\binom{a+k}{k}` states and :math:`\binom{a+2k}{2k}`
transitions per step (the pairs :math:`(n, m)`), so the cost is
:math:`O(T\binom{a+2k}{2k})`; every term is non-negative (no cancellation), and each
state's value is kept as a logarithm, and the terms arriving in one state are summed
by log-sum-exp shifted by their largest one, so nothing overflows; a term is lost to
underflow only when it is below :math:`e^{-745}` times the largest term arriving in the
same state, and paths that meet in a state have the same future, so such a term is
negligible.  (Normalising a step across all states would not be sound: a path that is
small now may collect the largest weights later.)

**Round-off.**  Each log term of a step is a sum of at most :math:`2k + 4` rounded
numbers of magnitude at most :math:`\Lambda` (the largest :math:`|\text{log term}|`
met, tracked), so its absolute error is below :math:`(2k+4)\,\epsilon\,(1+\Lambda)`
with :math:`\epsilon = 2^{-52}`; the log-sum-exp of non-negative terms adds a few
:math:`\epsilon`, and the errors of ``T`` steps add.  The result is returned raised by
:math:`8 (2k+8)\,T\,\epsilon\,(1+\Lambda)`, a margin of more than four times that
bound (callers round up once more).
"""

from __future__ import annotations

import functools
import math
from typing import Tuple

import numpy as np

__all__ = ["occupancy_log_moment", "transition_count", "MAX_TRANSITIONS"]

#: Largest ``steps * transitions`` evaluated (about a second of numpy work); larger
#: orders are left to the caller's other bounds.
MAX_TRANSITIONS = 1.0e7


def transition_count(order: int, selected: int) -> int:
    r"""Transitions per step of the recursion, :math:`\binom{a+2k}{2k}`."""
    return math.comb(int(order) + 2 * int(selected), 2 * int(selected))


def _states(a: int, k: int) -> list:
    out: list = []

    def rec(prefix: list, left: int, levels: int) -> None:
        if levels == 1:
            out.append(tuple(prefix + [left]))
            return
        for x in range(left, -1, -1):
            rec(prefix + [x], left - x, levels - 1)
    rec([], a, k + 1)
    return out


@functools.lru_cache(maxsize=32)
def _transitions(a: int, k: int) -> Tuple[np.ndarray, ...]:
    """``(src, dst, c, log_binom, moved, stayed, n_states, start, end, heads)`` of the
    recursion: one row per pair (state ``n``, movers ``m``); ``moved[:, r] = m_r`` and
    ``stayed[:, r] = n_r - m_r`` for the levels ``r < k``; rows grouped by destination
    (``heads`` are the first rows of the groups).

    Built with whole-array operations: each state is expanded level by level into its
    movers ``m_r = 0..n_r`` (``m_0`` varying slowest, so the rows come in the order of
    the states and then of the mover vectors read lexicographically), and a destination
    is found by its mixed-radix key among the sorted keys of the states."""
    states = np.array(_states(a, k), dtype=np.int64).reshape(-1, k + 1)
    n_states = states.shape[0]
    lg = np.array([math.lgamma(x + 1.0) for x in range(a + 1)])
    src = np.arange(n_states, dtype=np.intp)
    moved = np.zeros((n_states, 0), dtype=np.int64)
    for r in range(k):                       # expand every row by m_r = 0..n_r
        width = states[src, r] + 1
        rows = np.repeat(np.arange(src.size), width)
        first = np.cumsum(width) - width
        m_r = np.arange(rows.size, dtype=np.int64) - np.repeat(first, width)
        src, moved = src[rows], np.column_stack([moved[rows], m_r])
    n = states[src]
    new = n.copy()
    new[:, :k] -= moved
    new[:, 1:] += moved
    radix = (a + 1) ** np.arange(k, -1, -1, dtype=np.int64)
    keys = states @ radix
    order_keys = np.argsort(keys, kind="stable")
    dst = order_keys[np.searchsorted(keys[order_keys], new @ radix)].astype(np.intp)
    stayed = n[:, :k] - moved
    lb = np.zeros(src.size)
    for r in range(k):                       # the same sum, term by term, as before
        lb = lb + ((lg[n[:, r]] - lg[moved[:, r]]) - lg[stayed[:, r]])
    cnt = moved.sum(axis=1).astype(np.intp)
    start = int(np.flatnonzero(keys == a * radix[0])[0])
    end = int(np.flatnonzero(keys == a)[0])
    order = np.argsort(dst, kind="stable")   # grouped by destination
    dst_sorted = dst[order]
    # every state has an incoming transition (from itself with no movers): no empty group
    heads = np.flatnonzero(np.r_[True, dst_sorted[1:] != dst_sorted[:-1]])
    return (src[order], dst_sorted, cnt[order], lb[order],
            moved.astype(np.float64)[order], stayed.astype(np.float64)[order], n_states,
            start, end, heads)


def occupancy_log_moment(log_m: np.ndarray, steps: int, selected: int) -> float:
    r""":math:`\log E[\prod_{t \le T} M(c_t)]` for ``a = len(log_m) - 1`` independent
    uniform ``selected``-subsets of ``steps`` steps (exact up to round-off, see the
    module notes); ``log_m[c] = log M(c)`` for ``c = 0..a``.

    Raises
    ------
    ValueError
        If the recursion would exceed :data:`MAX_TRANSITIONS` (``steps`` times
        :func:`transition_count`): use a bound instead.
    """
    log_m = np.asarray(log_m, dtype=np.float64)
    a, k, T = log_m.size - 1, int(selected), int(steps)
    if a < 1 or k < 1 or k > T:
        raise ValueError(f"need order >= 1 and 1 <= selected <= steps, got order={a}, "
                         f"selected={k}, steps={T}")
    if T * transition_count(a, k) > MAX_TRANSITIONS:
        raise ValueError(f"the exact occupancy moment at order {a}, selected={k}, steps={T} "
                         f"needs {T * transition_count(a, k):.3g} transition evaluations "
                         f"(limit {MAX_TRANSITIONS:.3g}); use a bound at this order")
    src, dst, cnt, lb, moved, stayed, n_states, start, end, heads = _transitions(a, k)
    base = lb + log_m[cnt]
    level = np.arange(k, dtype=np.float64)
    log_v = np.full(n_states, -np.inf)
    log_v[start] = 0.0
    largest = 0.0                            # largest |log term| met (round-off scale)
    for t in range(1, T + 1):
        remaining = T - t + 1
        need = k - level                     # elements still to come at each level
        log_p = np.log(np.minimum(need, remaining) / remaining)
        # 1 - p = 0 (a level that must take every remaining step): a finite stand-in
        # whose product with a positive count underflows to weight 0 and with 0 is 0
        q = (remaining - need) / remaining
        log_q = np.where(q > 0.0, np.log(np.where(q > 0.0, q, 1.0)), -1e300)
        lc = log_v[src] + base + moved @ log_p + stayed @ log_q
        # log-sum-exp within each destination state, shifted by its largest term: paths
        # that meet in one state have the same future, so a term below e^-745 of the
        # largest one into its state is negligible (a global shift would not be: a path
        # small now may collect the largest weights later)
        top = np.maximum.reduceat(lc, heads)
        finite = lc[lc > -1e200]             # not the -1e300 stand-ins of impossible moves
        if finite.size:
            largest = max(largest, float(np.max(np.abs(finite))))
        safe = np.where(np.isfinite(top), top, 0.0)
        sums = np.add.reduceat(np.exp(lc - np.repeat(safe, np.diff(np.r_[heads, lc.size]))),
                               heads)
        with np.errstate(divide="ignore"):
            log_v = np.where(np.isfinite(top), safe + np.log(sums), -np.inf)
    # round-off (module notes): each log term carries at most 2k + 4 rounded operations on
    # numbers of magnitude <= largest, each step's log-sum-exp a few more; T steps
    return float(log_v[end]) + 8.0 * (2 * k + 8) * T * 2.3e-16 * (1.0 + largest)
