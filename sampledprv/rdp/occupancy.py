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
step is renormalised (its log-scale carried separately), so neither overflow nor
underflow of the total can occur.

**Round-off.**  Each transition weight is an exponential of a sum of at most
:math:`2k + 2` logarithms of magnitude below about :math:`a(\log T + \max\log M)`, so
its relative error is below :math:`10^{-13}` for every size this module accepts
(:data:`MAX_TRANSITIONS`); the sums are of non-negative terms.  Over ``T`` steps the
relative error of the moment is below :math:`2 T \cdot 10^{-13}`; callers round the
logarithm up by :math:`10^{-11}\max(|x|, T)`, which covers it with a wide margin.
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
    """``(src, dst, c, log_binom, moved, stayed, n_states, start, end)`` of the recursion:
    one row per pair (state ``n``, movers ``m``); ``moved[:, r] = m_r`` and
    ``stayed[:, r] = n_r - m_r`` for the levels ``r < k``."""
    states = _states(a, k)
    index = {s: i for i, s in enumerate(states)}
    src, dst, cnt, lb, moved, stayed = [], [], [], [], [], []
    lg = [math.lgamma(x + 1.0) for x in range(a + 1)]
    for s in states:
        ms = [()]
        for r in range(k):
            ms = [m + (x,) for m in ms for x in range(s[r] + 1)]
        for m in ms:
            new = list(s)
            for r in range(k):
                new[r] -= m[r]
                new[r + 1] += m[r]
            src.append(index[s])
            dst.append(index[tuple(new)])
            cnt.append(sum(m))
            lb.append(sum(lg[s[r]] - lg[m[r]] - lg[s[r] - m[r]] for r in range(k)))
            moved.append(m)
            stayed.append(tuple(s[r] - m[r] for r in range(k)))
    start = index[tuple([a] + [0] * k)]
    end = index[tuple([0] * k + [a])]
    return (np.array(src, dtype=np.intp), np.array(dst, dtype=np.intp),
            np.array(cnt, dtype=np.intp), np.array(lb, dtype=np.float64),
            np.array(moved, dtype=np.float64).reshape(-1, k),
            np.array(stayed, dtype=np.float64).reshape(-1, k), len(states), start, end)


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
    src, dst, cnt, lb, moved, stayed, n_states, start, end = _transitions(a, k)
    base = lb + log_m[cnt]
    top = float(np.max(base))
    base = base - top                        # every column gains log-scale ``top``
    level = np.arange(k, dtype=np.float64)
    v = np.zeros(n_states)
    v[start] = 1.0
    log_scale = 0.0
    for t in range(1, T + 1):
        remaining = T - t + 1
        need = k - level                     # elements still to come at each level
        log_p = np.log(np.minimum(need, remaining) / remaining)
        # 1 - p = 0 (a level that must take every remaining step): a finite stand-in
        # whose product with a positive count underflows to weight 0 and with 0 is 0
        q = (remaining - need) / remaining
        log_q = np.where(q > 0.0, np.log(np.where(q > 0.0, q, 1.0)), -1e300)
        w = np.exp(base + moved @ log_p + stayed @ log_q)
        nv = np.bincount(dst, weights=v[src] * w, minlength=n_states)
        s = float(nv.sum())
        if not s > 0.0:
            return -math.inf
        log_scale += top + math.log(s)
        v = nv / s
    return float(log_scale + math.log(v[end])) if v[end] > 0 else -math.inf
