r"""The privacy curve of a lattice distribution, exactly and stably.

For a sub-probability measure :math:`p` on sorted finite points :math:`s_j` plus an
atom :math:`p_\infty` at :math:`+\infty`,

.. math:: \delta(\varepsilon) = p_\infty + \sum_{s_j > \varepsilon} p_j\,(1 - e^{\varepsilon - s_j}),

the hockey-stick divergence when the measure is the law of the privacy loss under
``P``.  :meth:`PrivacyCurve.epsilon` inverts it exactly: on each segment between
consecutive support points :math:`\delta = P_m - e^{\varepsilon} Q_m` with
:math:`Q_m = \sum_{j \ge m} p_j e^{-s_j}`; ``Q_m`` is accumulated in log space, so
losses beyond 745 (where ``exp(-s)`` underflows) are handled.
"""

from __future__ import annotations

import math
import threading
from functools import lru_cache

import numpy as np


#: row length of :func:`_tail_sums`: a row is summed in float64 (relative error at most
#: ``_BLOCK`` ulps), the carries between rows in the extended type
_BLOCK = 256
#: largest spread of loss values inside one row of the ``log_q`` sums (no term of a
#: row underflows against the row's reference exponent)
_SPAN = 600.0
#: points per vectorized pass (bounds the temporaries to a few MiB)
_PASS = 2**18
#: finished rows a curve keeps for repeated reads (a bisection reads few rows often)
_ROWS_KEPT = 64
#: numpy's extended type resolves at least 2^-63 relative (x86-64, aarch64 Linux)
_EXTENDED = float(np.finfo(np.longdouble).eps) <= 2.0 ** -60


def _suffix(x: np.ndarray) -> np.ndarray:
    """Suffix sums along the rows of a 2-D array."""
    return np.cumsum(x[:, ::-1], axis=1)[:, ::-1]


def _tail_sums(values, probs: np.ndarray, p_inf: float) -> "_ArrayTails | _RowTails":
    """Suffix sums ``tail_p[j] = p_inf + sum_{i>=j} p_i`` and ``log_q[j] = log sum_{i>=j}
    p_i exp(-s_i)``, each to a relative error of a few float64 ulps, read through
    ``.at(j)``.  The row-wise path keeps three numbers per row (the carries into it and
    its reference) and finishes a point's sums inside its row on demand, with the same
    float operations as a full table would (so the same numbers, at 24 bytes per row
    instead of 16 per point).

    The terms are non-negative and summed in rows of ``B <= _BLOCK`` points: inside a
    row the recursive float64 sum errs by at most ``B`` ulps of the row's suffix; the
    carries across rows are chained from the right in numpy's extended type (64-bit
    mantissa), so ``n / B`` rows add less than one float64 ulp for ``n < 2^11 B``.  In
    all the relative error is below ``(B + 2)`` ulps (see
    :meth:`PrivacyCurve.rounding_bound`).  ``log_q`` is summed against each row's smallest
    loss as reference exponent (a row spreads at most ``_SPAN``, so no term underflows
    against it; each term ``p e^{ref - s}`` is rounded once, to an ulp) and the carry is
    rescaled between references by an extended exponential.  Where numpy has no
    extended type, the compensated (Kahan) Numba loop :func:`_tail_sums_kahan` computes
    the same sums."""
    lattice = isinstance(values, LatticePoints)
    if lattice and (not _EXTENDED or values.h * _BLOCK * (1.0 + 1e-6) > _SPAN):
        values, lattice = values.array(), False   # short rows: as for stored points
    if not _EXTENDED:
        return _ArrayTails(*_tail_sums_kahan(values, probs, p_inf))
    n = values.size
    if lattice:            # consecutive points differ by h up to roundings: rows of 256
        gap = values.h
    else:
        gap = float(np.max(np.diff(values))) if n > 1 else 0.0
    rowlen = _BLOCK if gap * _BLOCK <= _SPAN else int(_SPAN // gap)
    if rowlen < 16:        # support points tens of nats apart: few of them, plain loop
        return _ArrayTails(*_tail_sums_sparse(values, probs, p_inf))
    return _RowTails(values, probs, p_inf, rowlen, lattice)


class _ArrayTails:
    """``tail_p`` and ``log_q`` as full tables (the sparse and compensated paths)."""

    def __init__(self, tail_p: np.ndarray, log_q: np.ndarray) -> None:
        self.tail_p, self.log_q = tail_p, log_q

    def at(self, j: int) -> tuple[float, float]:
        return float(self.tail_p[j]), float(self.log_q[j])


class _RowTails:
    """``tail_p`` and ``log_q`` kept per row of :func:`_tail_sums` and finished inside
    the row on demand (``O(row length)`` per point).

    The row carries are chained from the top (the largest losses) down, one pass of
    ``_PASS`` points at a time, and only as far down as a query has needed so far: a
    curve queried at small ``delta`` (its upper tail) never sums the bulk below.  The
    passes run in the same order with the same operations whether done at once or on
    demand, so the numbers do not depend on the order of the queries."""

    def __init__(self, values, probs: np.ndarray, p_inf: float, rowlen: int,
                 lattice: bool) -> None:
        self.values, self.probs, self.p_inf, self.rowlen = values, probs, float(p_inf), rowlen
        self.lattice = lattice
        self.n = n = int(probs.size)
        n_rows = -(-n // rowlen)
        self.after = np.empty(n_rows)          # float64 carries of tail_p into each row
        self.carry_q = np.empty(n_rows)        # float64 carries of the q sums, against ref
        self.ref = np.empty(n_rows)            # each row's reference exponent (first loss)
        self._step = rowlen * max(1, _PASS // rowlen)
        self._next = ((n - 1) // self._step) * self._step if n else -1  # next pass start
        self._done_row = n_rows                # rows >= this one are summed
        ld = np.longdouble
        self._carry_p = ld(p_inf)
        self._carry_qx = ld(0.0)               # sum over later points of p e^{ref_next - s}
        self._ref_next = ld(0.0)
        self._lock = threading.Lock()
        self._rows: dict[int, tuple[list, list]] = {}   # finished rows, recently read

    def __getstate__(self) -> dict:
        """Pickling and copying: the lock is left out (a fresh one on restore), under
        the lock so that no pass is half done (an online accountant keeps its curves)."""
        with self._lock:
            state = dict(self.__dict__)
        state.pop("_lock")
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def _ensure(self, row: int) -> None:
        """Sum passes from the top down until ``row`` is covered."""
        if row >= self._done_row:
            return
        with self._lock:
            while row < self._done_row:
                self._pass()

    def _pass(self) -> None:
        ld = np.longdouble
        rowlen, probs, values = self.rowlen, self.probs, self.values
        a = self._next
        b = min(a + self._step, self.n)
        m = b - a
        rows = -(-m // rowlen)
        r0 = a // rowlen
        p = np.zeros(rows * rowlen)
        p[:m] = probs[a:b]
        s = np.full(rows * rowlen, values[b - 1])
        s[:m] = values.array(a, b) if self.lattice else values[a:b]
        p, s = p.reshape(rows, rowlen), s.reshape(rows, rowlen)
        ref = s[:, 0].copy()
        # tail_p: row suffix sums plus the exclusive suffix of the row totals
        tot = _suffix(p)[:, 0].astype(ld)
        carry_p = self._carry_p
        after = np.empty(rows, dtype=ld)
        after[-1] = carry_p
        after[:-1] = carry_p + np.cumsum(tot[:0:-1])[::-1]
        self.after[r0:r0 + rows] = after.astype(np.float64)
        self._carry_p = after[0] + tot[0]
        # log_q: rows against their own reference, carries rescaled row to row
        row_q = _suffix(p * np.exp(ref[:, None] - s))[:, 0].astype(ld)
        refl = ref.astype(ld)
        carry_q, ref_next = self._carry_qx, self._ref_next
        # C_r = sum_{r' > r} row_q[r'] e^{ref_r - ref_r'} + carry_q e^{ref_r - ref_next},
        # against the pass's smallest reference (the extended type spans e^{+-11356})
        if float(refl[-1] - refl[0]) < 11000.0:
            w = row_q * np.exp(refl[0] - refl)
            rest = np.empty(rows, dtype=ld)
            rest[-1] = carry_q * np.exp(refl[0] - ref_next) if carry_q > 0 else ld(0.0)
            rest[:-1] = rest[-1] + np.cumsum(w[:0:-1])[::-1]
            cq = rest * np.exp(refl - refl[0])
        else:                                   # references too far apart: row by row
            cq = np.empty(rows, dtype=ld)
            c = carry_q * np.exp(refl[-1] - ref_next) if carry_q > 0 else ld(0.0)
            for r in range(rows - 1, -1, -1):
                cq[r] = c
                if r:
                    c = (c + row_q[r]) * np.exp(refl[r - 1] - refl[r])
        self._carry_qx, self._ref_next = cq[0] + row_q[0], refl[0]
        self.carry_q[r0:r0 + rows] = cq.astype(np.float64)
        self.ref[r0:r0 + rows] = ref
        self._done_row = r0
        self._next = a - self._step

    def at(self, j: int) -> tuple[float, float]:
        if j >= self.n:
            return self.p_inf, -math.inf
        r = j // self.rowlen
        self._ensure(r)
        row = self._rows.get(r)
        if row is None:
            a, b = r * self.rowlen, min((r + 1) * self.rowlen, self.n)
            p = self.probs[a:b]
            s = self.values.array(a, b) if isinstance(self.values, LatticePoints) \
                else self.values[a:b]
            tail_p = np.cumsum(p[::-1])[::-1] + self.after[r]
            sq = np.cumsum((p * np.exp(self.ref[r] - s))[::-1])[::-1] + self.carry_q[r]
            with np.errstate(divide="ignore"):
                log_q = np.log(sq) - self.ref[r]
            row = (tail_p.tolist(), log_q.tolist())
            if len(self._rows) >= _ROWS_KEPT:      # queries revisit few rows: keep some
                self._rows.clear()
            self._rows[r] = row
        i = j - r * self.rowlen
        return row[0][i], row[1][i]


def _tail_sums_sparse(values: np.ndarray, probs: np.ndarray, p_inf: float
                      ) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_tail_sums` for support points tens of nats apart (few of them): a loop
    with ``math.fsum``-exact partial sums and ``log_q`` accumulated in log space."""
    n = values.size
    tail_p = np.empty(n + 1)
    log_q = np.empty(n + 1)
    tail_p[n] = p_inf
    log_q[n] = -np.inf
    parts = [float(p_inf)]
    for j in range(n - 1, -1, -1):
        parts.append(float(probs[j]))
        tail_p[j] = math.fsum(parts)
        term = math.log(probs[j]) - values[j] if probs[j] > 0 else -math.inf
        log_q[j] = np.logaddexp(log_q[j + 1], term)
    return tail_p, log_q


def _tail_sums_kahan(values: np.ndarray, probs: np.ndarray, p_inf: float
                     ) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_tail_sums` by the compensated loop :func:`_kahan_loop`, compiled by Numba
    on first use (only where numpy has no extended type: Numba costs about a second
    and 100 MiB to load, which the analytic path otherwise never pays)."""
    return _compiled_kahan_loop()(values, probs, p_inf)


@lru_cache(maxsize=1)
def _compiled_kahan_loop():  # pragma: no cover - platforms without an extended type
    import numba
    return numba.njit(cache=True, nogil=True)(_kahan_loop)


def _kahan_loop(values, probs, p_inf):  # pragma: no cover - compiled
    """Compensated (Kahan) suffix sums: tail_p[j] = p_inf + sum_{i>=j} p_i and
    log_q[j] = log sum_{i>=j} p_i exp(-s_i).  The second sum is accumulated against a
    fixed reference exponent that is moved only every 600 units of s (so no term
    overflows), which keeps its relative error at a few ulps instead of N ulps."""
    n = values.size
    tail_p = np.empty(n + 1)
    log_q = np.empty(n + 1)
    tail_p[n] = p_inf
    log_q[n] = -np.inf
    s_sum, c_sum = p_inf, 0.0
    ref = values[n - 1] if n > 0 else 0.0    # reference exponent: Q = exp(-ref) * acc
    acc, c_acc = 0.0, 0.0
    for j in range(n - 1, -1, -1):
        # Kahan for tail_p
        y = probs[j] - c_sum
        t = s_sum + y
        c_sum = (t - s_sum) - y
        s_sum = t
        tail_p[j] = s_sum
        if ref - values[j] > 600.0:
            # move the reference down to values[j]: acc *= exp(values[j] - ref)
            scale = np.exp(values[j] - ref)
            acc *= scale
            c_acc *= scale
            ref = values[j]
        term = probs[j] * np.exp(ref - values[j])
        y = term - c_acc
        t = acc + y
        c_acc = (t - acc) - y
        acc = t
        log_q[j] = np.log(acc) - ref if acc > 0 else -np.inf
    return tail_p, log_q



_UNIT = float(np.finfo(np.float64).eps)


class LatticePoints:
    """The sorted points ``(offset + j) h + shift``, ``j = 0 .. size - 1``, computed on
    demand instead of stored (the same float operations as
    :attr:`~sampledprv.engine.compose.ComposedPMF.values`, so the same numbers).

    Supports what :class:`PrivacyCurve` and :func:`_tail_sums` need: ``size``, integer
    and contiguous-slice indexing, and :meth:`searchsorted`."""

    __slots__ = ("offset", "h", "shift", "size")

    def __init__(self, offset: int, h: float, shift: float, size: int) -> None:
        if not (h > 0 and math.isfinite(h)):
            raise ValueError(f"h must be positive and finite, got {h}")
        self.offset, self.h, self.shift, self.size = int(offset), float(h), float(shift), \
            int(size)

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, key):
        if isinstance(key, slice):
            start, stop, step = key.indices(self.size)
            if step != 1:
                raise IndexError("LatticePoints supports contiguous slices only")
            return LatticePoints(self.offset + start, self.h, self.shift,
                                 max(stop - start, 0))
        j = int(key)
        if j < 0:
            j += self.size
        if not 0 <= j < self.size:
            raise IndexError(f"index {key} out of range for {self.size} points")
        return float(np.float64(self.offset + j) * self.h + self.shift)

    def array(self, start: int = 0, stop: int | None = None) -> np.ndarray:
        """The points ``start .. stop - 1`` as an array."""
        stop = self.size if stop is None else stop
        return (self.offset + np.arange(start, stop)) * self.h + self.shift

    def searchsorted(self, x: float, side: str = "right") -> int:
        """``numpy.searchsorted`` of the materialized points (exact: the guess from the
        formula is corrected against the computed points)."""
        if self.size == 0:
            return 0
        # (plain-Python clip: np.clip on a scalar costs microseconds, and a query runs
        # this several times)
        guess = min(max(math.floor((x - self.shift) / self.h) - self.offset, -1),
                    self.size) if math.isfinite(x) else (self.size if x > 0 else 0)

        def before(j: int) -> bool:         # does point j come before x?
            v = self[j]
            return v <= x if side == "right" else v < x

        j = max(0, min(guess, self.size))
        while j > 0 and not before(j - 1):
            j -= 1
        while j < self.size and before(j):
            j += 1
        return j


def _searchsorted(values, x: float, side: str = "right") -> int:
    if isinstance(values, LatticePoints):
        return values.searchsorted(x, side)
    return int(np.searchsorted(values, x, side=side))


class PrivacyCurve:
    r"""Exact ``delta(eps)`` and ``eps(delta)`` of a lattice sub-probability measure.

    Tail sums are precomputed once (:math:`O(N)`), after which each query costs
    :math:`O(\log N)`.  Only points above ``eps_min`` are kept (queries need
    ``eps >= eps_min``), which bounds memory to the part of the curve that matters.

    Parameters
    ----------
    values : numpy.ndarray or LatticePoints
        Sorted (increasing) finite support points (a :class:`LatticePoints` for a
        lattice law: the points are then computed on demand, never stored).
    probs : numpy.ndarray
        Their non-negative masses.
    p_inf : float
        Mass at ``+inf``.
    eps_min : float
        Smallest ``eps`` that will be queried.
    """

    def __init__(self, values: "np.ndarray | LatticePoints", probs: np.ndarray,
                 p_inf: float, eps_min: float = -1.0) -> None:
        if not isinstance(values, LatticePoints):
            values = np.ascontiguousarray(values, dtype=np.float64)
        i0 = _searchsorted(values, eps_min, side="right")
        self.values = values[i0:]
        p = np.asarray(probs, dtype=np.float64)[i0:]
        self.p_inf = float(p_inf)
        self.eps_min = float(eps_min)
        # tail_p[j] = p_inf + sum_{i >= j} p_i ; log_q[j] = log sum_{i >= j} p_i e^{-s_i}
        self._tails = _tail_sums(self.values, np.ascontiguousarray(p), self.p_inf)

    def _delta_at(self, j: int) -> float:
        """``delta(s_j)``, non-increasing in ``j`` (evaluated on demand: a table of it
        would cost another 8 bytes per point for a bisection of ~25 steps)."""
        with np.errstate(over="ignore", invalid="ignore"):
            tail_p, log_q = self._tails.at(j)
            return float(tail_p - np.exp(self.values[j] + log_q))

    def delta(self, eps: float) -> float:
        """``p_inf + sum_{s > eps} p (1 - exp(eps - s))``."""
        if eps < self.eps_min:
            raise ValueError(f"eps={eps} is below this curve's eps_min={self.eps_min}")
        j = _searchsorted(self.values, eps, side="right")
        if j >= self.values.size:
            return self.p_inf
        tail_p, log_q = self._tails.at(j)
        d = tail_p - np.exp(eps + log_q)
        return float(min(max(d, self.p_inf), tail_p))

    def rounding_bound(self, eps: float) -> float:
        r"""Bound on the floating-point error of :meth:`delta` at ``eps``.

        :meth:`delta` returns :math:`T_j - e^{\varepsilon} Q_j` with :math:`T_j` the
        blocked tail sum (relative error at most ``B + 2`` ulps, ``B = _BLOCK``) and
        :math:`e^{\varepsilon}Q_j \le T_j` evaluated through ``exp(eps + log Q_j)``,
        whose relative error is ``B + 3`` ulps (the sum and its terms) plus a few ulps of
        :math:`1 + |\varepsilon| + |\log Q_j|`; the lattice points themselves are
        rounded to a relative ulp, which moves the curve by at most
        :math:`2u(1 + |\varepsilon|) T_j`.  The result is
        :math:`u\,(16 + 2B + 4(|\varepsilon| + |\log Q_j|))\,T_j` with ``u`` the unit
        round-off: it is absolute, and relative to the tail mass beyond ``eps`` (about
        ``1e-13`` times :math:`\delta` where only the mass at :math:`+\infty` is
        left)."""
        j = _searchsorted(self.values, eps, side="right")
        if j >= self.values.size:
            return 0.0                      # delta is the stored p_inf itself
        tail_p, lq = self._tails.at(j)
        scale = abs(eps) + (abs(lq) if np.isfinite(lq) else 0.0)
        return float(_UNIT * (16.0 + 2.0 * _BLOCK + 4.0 * scale) * tail_p)

    def epsilon(self, delta: float) -> float:
        """``inf{eps >= 0 : delta(eps) <= delta}``; ``inf`` when ``delta < p_inf``."""
        if delta < self.p_inf:
            return np.inf
        # smallest j with delta(s_j) <= delta (non-increasing in j; delta(s_n) = p_inf):
        # galloping down from the top (steps growing by a quarter: an overshoot of at
        # most a quarter of the distance), then bisection, so that a small delta only
        # touches the upper tail (the row sums are finished from the top down on demand)
        n = int(self.values.size)
        lo, hi, step = 0, n, 1
        while hi - step >= 0:
            if self._delta_at(hi - step) <= delta:
                hi -= step
                step += max(1, step // 4)
            else:
                lo = hi - step + 1
                break
        while lo < hi:
            mid = (lo + hi) // 2
            if self._delta_at(mid) <= delta:
                hi = mid
            else:
                lo = mid + 1
        j = lo
        eps0 = max(0.0, self.eps_min)
        # delta(eps0) <= delta is only possible when s_j is at most the first point
        # above eps0 (otherwise delta(eps0) >= delta(s_(j-1)) > delta)
        if j <= _searchsorted(self.values, eps0, side="right") and self.delta(eps0) <= delta:
            return 0.0
        if j >= self.values.size:
            return float(self.values[-1]) if self.values.size else 0.0
        tail_p, log_q = self._tails.at(j)
        rem = tail_p - delta
        if rem <= 0:
            return float(self.values[j])
        return max(0.0, float(np.log(rem) - log_q))


def delta_of_eps(values: np.ndarray, probs: np.ndarray, p_inf: float, eps: float) -> float:
    """Functional form of :meth:`PrivacyCurve.delta` (``values`` sorted)."""
    return PrivacyCurve(values, probs, p_inf).delta(eps)


def eps_of_delta(values: np.ndarray, probs: np.ndarray, p_inf: float, delta: float) -> float:
    """Functional form of :meth:`PrivacyCurve.epsilon` (``values`` sorted)."""
    return PrivacyCurve(values, probs, p_inf).epsilon(delta)
