r"""Online composition: spectra multiplied in place, privacy curve read by Plancherel sums.

A composition whose grid is fixed in advance (mesh ``h``, FFT length ``n``, chosen for a
planned *horizon*) can grow one mechanism at a time without any FFT: the composed
lattice law's spectrum is the product of the components' spectra, so adding ``c``
copies of a component multiplies the running spectrum :math:`X` by :math:`\phi^c`
(:math:`O(n)`).  The privacy curve is then read off the spectrum directly (Koskela and
Honkela, "Computing differential privacy guarantees for heterogeneous compositions
using FFT", Lemma 5: Plancherel's theorem).

**Plancherel sums.**  Let the composed law be read on the window of lattice indices
``A .. A+n-1`` (values :math:`s_l = (A + l) h + \text{shift}`), with masses
:math:`p_l = x_{(c + l) \bmod n}`, ``c = A - origin``, where ``x`` is the circular array
whose DFT is :math:`X`.  For ``eps`` in :math:`[s_{m-1}, s_m)`

.. math:: \delta(\varepsilon) = p_\infty + T_A(m) - e^{\varepsilon - s_m} T_B(m),\quad
          T_A(m) = \sum_{l \ge m} p_l,\quad T_B(m) = \sum_{l \ge m} p_l e^{-(l-m)h}.

Both are inner products of ``p`` with geometric sequences whose DFTs are closed forms,
so with :math:`Y_k = X_k \omega^{ck}`, :math:`\omega = e^{2\pi i/n}`, :math:`r = e^{-h}`,

.. math::
   n T_A(m) = X_0 (n - m) + \sum_{k \ne 0} \frac{Y_k (\omega^{mk} - 1)}{1 - \omega^k},\qquad
   n T_B(m) = \sum_k \frac{Y_k (\omega^{mk} - r^{n-m})}{1 - r\omega^k}.

Each evaluation is one pass over the ``n/2 + 1`` non-redundant frequencies with a table
of the ``n``-th roots of unity (no transcendental function in the loop).  The curve at
the lattice points, :math:`d_j = \delta(s_{j-1})`, is non-increasing, and one
evaluation at ``m = j`` gives both :math:`d_j = p_\infty + T_A - r T_B` and
:math:`d_{j+1} = p_\infty + T_A - T_B`; ``epsilon(delta)`` is found by a safeguarded
secant search in :math:`\log d` (a handful of evaluations, warm-started from the
previous answer), then inverted exactly on its segment.

**Certified terms** are the ones of a rebuild on the same mesh: the discretization
(Hoeffding with the current number of composed mechanisms, window truncation) does not
depend on how the convolution is computed, the aliasing bound is Chernoff's with the
log-MGFs of the components *added* as they arrive (the MGF of a sum is the product of
the MGFs), and the round-off estimate is the FFT one of
:mod:`sampledprv.engine.compose` plus the summation error of the Plancherel sums
(blocked summation: :math:`(b + N/b + 10)\,u \sum_k |\text{terms}|`).

When the composed law no longer fits the ``n`` points (its Chernoff window is wider),
:class:`Outgrown` is raised and the caller re-plans.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from .compose import _EPS, _power, roundoff_estimate
from .curve import LatticePoints, PrivacyCurve
from .fft import irfft, rfft
from .lattice import LatticePMF, _logsumexp_rows

__all__ = ["OnlineComposition", "Outgrown"]

_BLOCK = 256
#: queries on one unchanged state after which the curve is materialized (one inverse FFT)
_MATERIALIZE_AFTER = 8


class Outgrown(Exception):
    """The composition no longer fits the planned grid; re-plan with a wider one."""


@lru_cache(maxsize=8)
def _roots(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Real and imaginary parts of the ``n``-th roots of unity."""
    w = np.exp(2j * np.pi * np.arange(n) / n)
    return np.ascontiguousarray(w.real), np.ascontiguousarray(w.imag)


@lru_cache(maxsize=8)
def _kernels(n: int, h: float) -> tuple[np.ndarray, np.ndarray]:
    r"""Weighted closed-form DFTs of the geometric test sequences: ``g_k a_k`` and
    ``g_k b_k`` with :math:`a_k = 1/(1-\omega^k)` (``a_0 = 0``),
    :math:`b_k = 1/(1 - e^{-h}\omega^k)` and the Hermitian weights ``g_k`` (1 at ``k = 0``
    and at ``n/2``, else 2), for ``k = 0 .. n//2``."""
    k = np.arange(n // 2 + 1)
    g = np.full(k.size, 2.0)
    g[0] = 1.0
    if n % 2 == 0:
        g[-1] = 1.0
    # 1 - omega^k must not be formed from a rounded omega: for small k its real part
    # 1 - cos(2 pi k / n) ~ 2e-13 (n = 8e6) keeps only a few digits, and the Plancherel
    # weights (up to n / (2 pi k)) turn that into a 1e-11 error of the total mass.
    # Closed forms: 1/(1 - e^{i t}) = 1/2 + (i/2) cot(t/2), and
    # 1 - r e^{i t} = (1 - r) + 2 r sin^2(t/2) - i r sin(t), r = e^{-h}.
    half = np.pi * k / n                     # t / 2, exact to an ulp
    s_half = np.sin(half)
    a = np.zeros(k.size, dtype=np.complex128)
    a[1:] = g[1:] * (0.5 + 0.5j * (np.cos(half[1:]) / s_half[1:]))
    r = math.exp(-h)
    denom = (-math.expm1(-h) + 2.0 * r * s_half ** 2) - 1j * r * np.sin(2.0 * half)
    b = g / denom
    return a, b


def _plancherel_loop(x, wa, wb, w_re, w_im, n, k_live, rotations):  # pragma: no cover - compiled
    """``Re sum_{k < k_live} x_k (wa_k, wb_k) omega^(m k)`` for every ``m`` in ``rotations``.

    Blocked summation (blocks of 256); the twiddles are taken from the table at each
    block start and advanced by a complex recurrence inside the block."""
    out_a = np.empty(rotations.size)
    out_b = np.empty(rotations.size)
    for j in range(rotations.size):
        m = rotations[j] % n
        sr = w_re[m]
        si = w_im[m]
        acc_a = 0.0
        acc_b = 0.0
        k0 = 0
        while k0 < k_live:
            k1 = min(k0 + 256, k_live)
            idx = (m * k0) % n
            zr = w_re[idx]
            zi = w_im[idx]
            ba = 0.0
            bb = 0.0
            for k in range(k0, k1):
                pa = x[k] * wa[k]
                pb = x[k] * wb[k]
                ba += pa.real * zr - pa.imag * zi
                bb += pb.real * zr - pb.imag * zi
                zr, zi = zr * sr - zi * si, zr * si + zi * sr
            acc_a += ba
            acc_b += bb
            k0 = k1
        out_a[j] = acc_a
        out_b[j] = acc_b
    return out_a, out_b


def _trim_loop(x, wa, wb, k_live, thresh, n):  # pragma: no cover - compiled
    """Zero the top run of entries with ``|x_k| <= thresh``; returns the new live length
    and the bound ``sum |x_k| (|wa_k| + |wb_k|) / n`` on what the dropped entries could
    contribute to any Plancherel sum (now and later: spectra only shrink in modulus)."""
    dropped = 0.0
    while k_live > 1:
        v = abs(x[k_live - 1])
        if v > thresh:
            break
        dropped += v * (abs(wa[k_live - 1]) + abs(wb[k_live - 1]))
        x[k_live - 1] = 0.0
        k_live -= 1
    return k_live, dropped / n


def _sums_loop(x, wa, wb, k_live):  # pragma: no cover - compiled
    """``sum |x_k| (|wa_k| + |wb_k|)`` and the spectral norms ``sum g_k |x_k|`` and
    ``sum g_k |x_k|^2`` (``g_0 = 1``, else 2: the full Hermitian spectrum)."""
    abs_sum = 0.0
    l1 = 0.0
    sq = 0.0
    for k in range(k_live):
        v = abs(x[k])
        g = 1.0 if k == 0 else 2.0
        abs_sum += v * (abs(wa[k]) + abs(wb[k]))
        l1 += v * g
        sq += v * v * g
    return abs_sum, l1, sq


@lru_cache(maxsize=1)
def _compiled() -> tuple:
    """The three loops compiled by Numba, on first use (importing Numba costs about a
    second and 100 MiB, which accountants that never update online should not pay)."""
    import numba
    jit = numba.njit(cache=True, nogil=True)
    return jit(_plancherel_loop), jit(_trim_loop), jit(_sums_loop)


def _plancherel(*args):
    return _compiled()[0](*args)


def _trim(*args):
    return _compiled()[1](*args)


def _sums(*args):
    return _compiled()[2](*args)


#: spectrum entries below this modulus are dropped (their effect is bounded and added)
_DROP = 1e-30


class OnlineComposition:
    r"""Running composition of lattice laws on a fixed grid (one direction).

    Parameters
    ----------
    h : float
        Common mesh of every component.
    n : int
        FFT length (the window holds ``n`` lattice points).
    lam : numpy.ndarray
        Positive Chernoff exponents at which the log-MGFs are accumulated.
    tail_mass : float
        Target aliasing bound per side used to place the window.
    eps_min : float
        Smallest ``eps`` that will be queried (as in :class:`PrivacyCurve`).
    """

    def __init__(self, h: float, n: int, lam: np.ndarray, tail_mass: float,
                 eps_min: float) -> None:
        self.h = float(h)
        self.n = int(n)
        self.lam = np.asarray(lam, dtype=np.float64)
        self.log_tail = math.log(tail_mass)
        self.eps_min = float(eps_min)
        self.spectrum = np.zeros(self.n // 2 + 1, dtype=np.complex128)
        self.spectrum[:] = 1.0                      # the point mass at 0
        self.origin = 0
        self.shift = 0.0
        self.count = 0
        # p_inf = exp(log_good) * -expm1(log_ratio) as in compose._composed_p_inf
        self.log_good = 0.0
        self.log_ratio = 0.0
        self.p_inf_rel = 10.0
        self.log_m_pos = np.zeros_like(self.lam)
        self.log_m_neg = np.zeros_like(self.lam)
        self.mean = self.lo_support = self.hi_support = 0.0
        self.k_live = self.spectrum.size
        self.dropped_error = 0.0
        self._wa, self._wb = _kernels(self.n, self.h)
        self._components: dict[object, tuple[np.ndarray, np.ndarray, np.ndarray, float]] = {}
        self._state: dict | None = None
        self._hint: float | None = None            # last epsilon answer (warm start)

    # ---- growing --------------------------------------------------------------------
    def add(self, key: object, pmf: LatticePMF, count: int) -> None:
        """Multiply in ``count`` copies of ``pmf`` (cached under ``key``)."""
        if not math.isclose(pmf.h, self.h, rel_tol=1e-12):
            raise ValueError("all components must share the mesh h")
        if key not in self._components:
            pmf = pmf.trimmed()
            if pmf.probs.size > self.n:
                raise Outgrown(f"one component spans {pmf.probs.size:,} points > n={self.n:,}")
            phi = rfft(pmf.probs, self.n)
            pts, logp = pmf.two_point_blocks()
            lp = _logsumexp_rows(logp, self.lam, pts) if pts.size else np.zeros_like(self.lam)
            ln = _logsumexp_rows(logp, -self.lam, pts) if pts.size else np.zeros_like(self.lam)
            if pts.size:
                w = np.exp(logp - logp.max())
                stats = (float(np.dot(w, pts) / w.sum()), float(pts.min()), float(pts.max()))
            else:
                stats = (0.0, 0.0, 0.0)
            self._components[key] = (phi, lp, ln, (pmf, stats, pmf.finite_mass))
        phi, lp, ln, (pmf, stats, finite) = self._components[key]
        count = int(count)
        k = self.k_live
        self.spectrum[:k] *= _power(phi[:k].copy(), count)   # _power overwrites its input
        self.k_live, dropped = _trim(self.spectrum, self._wa, self._wb, k, _DROP, self.n)
        self.dropped_error += dropped
        self.origin += count * pmf.offset
        self.shift += count * pmf.shift
        self.count += count
        good = finite + pmf.p_inf
        if good <= 0.0:
            self.log_good = -math.inf
        else:
            self.log_good += count * math.log(good)
            if pmf.p_inf >= good:
                self.log_ratio = -math.inf
            elif pmf.p_inf > 0:
                self.log_ratio += count * math.log1p(-pmf.p_inf / good)
        self.p_inf_rel += count * (math.log2(max(pmf.probs.size, 2)) + 20.0)
        self.log_m_pos += count * lp
        self.log_m_neg += count * ln
        self.mean += count * stats[0]
        self.lo_support += count * stats[1]
        self.hi_support += count * stats[2]
        self._state = None

    # ---- window and certified terms ---------------------------------------------------
    @property
    def p_inf(self) -> float:
        """Composed mass at ``+inf``, with full relative accuracy."""
        if self.log_good == -math.inf:
            return 0.0
        return float(math.exp(self.log_good) * -math.expm1(self.log_ratio))

    @property
    def p_inf_error(self) -> float:
        """Round-off bound of :attr:`p_inf` (as :func:`compose._composed_p_inf`)."""
        rel = self.p_inf_rel + abs(self.log_good) + (
            abs(self.log_ratio) if math.isfinite(self.log_ratio) else 0.0)
        return self.p_inf * rel * _EPS

    def _spill(self, lower: float, upper: float) -> tuple[float, float]:
        lam = self.lam
        up = float(np.min(np.exp(np.minimum(self.log_m_pos - lam * upper, 0.0)))) \
            if upper < self.hi_support else 0.0
        down = float(np.min(np.exp(np.minimum(self.log_m_neg + lam * lower, 0.0)))) \
            if lower > self.lo_support else 0.0
        return up, down

    def _prepared(self) -> dict:
        if self._state is not None:
            return self._state
        h, n = self.h, self.n
        with np.errstate(invalid="ignore"):
            upper = float(np.min((self.log_m_pos - self.log_tail) / self.lam))
            lower = float(-np.min((self.log_m_neg - self.log_tail) / self.lam))
        upper = min(max(upper, self.mean), self.hi_support)
        lower = max(min(lower, self.mean), self.lo_support)
        n_lo, n_hi = int(np.floor(lower / h)), int(np.ceil(upper / h))
        width = n_hi - n_lo + 1
        if width > n:
            raise Outgrown(f"the composed window needs {width:,} points > n={n:,}")
        a = n_lo - (n - width) // 2
        spill_up, spill_down = self._spill(a * h - 0.5 * h, (a + n - 1) * h + 0.5 * h)
        w_re, w_im = _roots(n)
        c = (a - self.origin) % n
        k = self.k_live
        sa, sb = _plancherel(self.spectrum, self._wa, self._wb, w_re, w_im, n, k,
                             np.array([c], dtype=np.int64))
        abs_sum, l1, sq = _sums(self.spectrum, self._wa, self._wb, k)
        x0 = float(self.spectrum[0].real)
        # blocked sums with a 256-step twiddle recurrence: (6 * 256 + N / 256 + 10) u
        gamma = (6 * _BLOCK + k / _BLOCK + 10) * _EPS
        eval_error = gamma * (abs_sum + abs(x0) * n) / n
        # the rebuild's estimate (its l1 counts the zero frequency twice)
        fft_error = roundoff_estimate(self.count, n, l1 + abs(x0), math.sqrt(sq))
        self._state = dict(a=a, c=c, s_a=float(sa[0]), s_b=float(sb[0]), x0=x0,
                           spill_upper=spill_up, spill_lower=spill_down,
                           numeric_error=(fft_error + 2.0 * eval_error + self.dropped_error
                                          + self.p_inf_error),
                           queries=0, curve=None, memo={}, p_inf=self.p_inf,
                           rot=np.zeros(1, dtype=np.int64))
        return self._state

    @property
    def spill_upper(self) -> float:
        return self._prepared()["spill_upper"]

    @property
    def spill_lower(self) -> float:
        return self._prepared()["spill_lower"]

    @property
    def numeric_error(self) -> float:
        """Round-off estimate: FFT/products (as a rebuild) plus the Plancherel sums."""
        return self._prepared()["numeric_error"]

    def check(self) -> None:
        """Raise :class:`Outgrown` if the composition no longer fits the grid."""
        self._prepared()

    # ---- evaluation -----------------------------------------------------------------
    def _tails(self, m: int) -> tuple[float, float]:
        """``(T_A(m), T_B(m))`` for ``0 <= m < n`` (memoized per composition state)."""
        st = self._state
        memo = st["memo"]
        if m in memo:
            return memo[m]
        n = self.n
        w_re, w_im = _roots(n)
        rot = st["rot"]
        rot[0] = (st["c"] + m) % n
        ua, ub = _plancherel(self.spectrum, self._wa, self._wb, w_re, w_im, n, self.k_live, rot)
        t_a = (st["x0"] * (n - m) + float(ua[0]) - st["s_a"]) / n
        t_b = (float(ub[0]) - math.exp(-self.h * (n - m)) * st["s_b"]) / n
        memo[m] = out = (max(t_a, 0.0), max(t_b, 0.0))
        return out

    def top_value(self) -> float:
        """The largest lattice point of the window."""
        self._prepared()
        return self._value(self.n - 1)

    def _value(self, l: float) -> float:
        return (self._state["a"] + l) * self.h + self.shift

    def _materialized(self, count: bool = True) -> PrivacyCurve | None:
        st = self._prepared()
        st["queries"] += int(count)
        if st["curve"] is None and st["queries"] > _MATERIALIZE_AFTER:
            arr = irfft(self.spectrum, self.n)
            probs = np.clip(np.roll(arr, -st["c"]), 0.0, None)
            st["curve"] = PrivacyCurve(LatticePoints(st["a"], self.h, self.shift, self.n),
                                       probs, self.p_inf, eps_min=self.eps_min)
        return st["curve"]

    def delta(self, eps: float) -> float:
        """:math:`\\delta(\\varepsilon)` of the composed lattice law, in ``O(n)``."""
        return self._delta(eps, count=True)

    def _delta(self, eps: float, count: bool) -> float:
        curve = self._materialized(count)
        if curve is not None:
            return curve.delta(eps)
        p_inf = self._state["p_inf"]
        m = int(math.floor((eps - self.shift) / self.h - self._state["a"])) + 1
        m = max(m, 0)
        while m < self.n and self._value(m) <= eps:       # floating-point guard
            m += 1
        if m >= self.n:
            return p_inf
        t_a, t_b = self._tails(m)
        d = p_inf + t_a - math.exp(eps - self._value(m)) * t_b
        return float(min(max(d, p_inf), p_inf + t_a))

    def rounding_bound(self, eps: float) -> float:
        r"""Bound on the floating-point error of :meth:`delta` at ``eps`` beyond the sums'
        error (in :attr:`numeric_error`): the factor :math:`e^{\varepsilon - s_m}` and the
        lattice point :math:`s_m` carry a few ulps of :math:`1 + |\varepsilon| + |s_m|`
        relative error, times :math:`T_B \le T_A`."""
        st = self._prepared()
        if st["curve"] is not None:
            return st["curve"].rounding_bound(eps)
        m = max(int(math.floor((eps - self.shift) / self.h - self._state["a"])) + 1, 0)
        if m >= self.n:
            return 0.0
        t_a, _ = self._tails(m)
        return _EPS * (16.0 + 4.0 * (abs(eps) + abs(self._value(m)))) * (st["p_inf"] + t_a)

    def epsilon(self, delta: float) -> float:
        """``inf{eps >= 0 : delta(eps) <= delta}`` by a secant search over lattice
        segments (``O(n)`` per step, a few steps), exact within the segment."""
        curve = self._materialized()
        if curve is not None:
            return curve.epsilon(delta)
        p_inf = self._state["p_inf"]
        if delta < p_inf:
            return math.inf
        if delta <= 0:
            return math.inf
        n, h, r = self.n, self.h, math.exp(-self.h)
        m0 = int(math.floor((max(0.0, self.eps_min) - self.shift) / h - self._state["a"])) + 1
        m0 = min(max(m0, 0), n - 1)
        # d_j = delta(s_{j-1}) is non-increasing; find j with d_j > delta >= d_{j+1}
        cache: dict[int, tuple[float, float]] = {}

        def ev(j: int) -> tuple[float, float, float, float]:
            if j not in cache:
                cache[j] = self._tails(j)
            t_a, t_b = cache[j]
            return p_inf + t_a - r * t_b, p_inf + t_a - t_b, t_a, t_b

        if self._delta(max(0.0, self.eps_min), count=False) <= delta:
            return 0.0
        lo, hi = m0, n - 1           # the answer lies in [lo, hi]
        d_lo, d_hi = math.nan, math.nan   # d_lo = d(lo) > delta, d_hi = d(hi + 1) <= delta
        if self._hint is not None and math.isfinite(self._hint):
            j = int(math.floor((self._hint - self.shift) / h - self._state["a"])) + 1
        else:
            j = (lo + hi) // 2
        for it in range(200):
            j = min(max(j, lo), hi)
            d_j, d_next, t_a, t_b = ev(j)
            if d_j > delta >= d_next or (j == m0 and delta >= d_next):
                if t_b <= 0:
                    eps = self._value(j)
                else:
                    rem = p_inf + t_a - delta
                    eps = self._value(j) + (math.log(rem / t_b) if rem > 0 else -math.inf)
                    eps = max(eps, self._value(j) - h) if j > 0 else eps
                eps = max(0.0, eps)
                self._hint = eps
                return eps
            step = self._secant(d_j, d_next, delta, p_inf)
            if d_next > delta:       # answer to the right
                lo, d_lo = j + 1, d_next
            else:                    # d_j <= delta: answer to the left
                hi, d_hi = j - 1, d_j
            if lo > hi:
                break
            guess = j + step
            if step == 0 or not lo <= guess <= hi:
                guess = self._interpolate(lo, d_lo, hi, d_hi, delta, p_inf)
            j = guess
        # the bracket closed without a crossing (only at the window's top): the last point
        if lo >= n:
            return max(0.0, self._value(n - 1))
        if lo == hi + 1:
            # d(lo) > delta >= d(lo) up to round-off: the curve is flat at delta within its
            # rounding error (delta just above p_inf); either end of the closed bracket
            # is the answer within that error, which the callers' bound-corrected checks
            # (inverse_high / inverse_low) then settle
            return max(0.0, self._value(lo - 1))
        raise RuntimeError("online epsilon search did not converge; this is a bug")

    @staticmethod
    def _interpolate(lo: int, d_lo: float, hi: int, d_hi: float, target: float,
                     p_inf: float) -> int:
        """Regula falsi in ``log(d - p_inf)`` between the bracket ends, else bisection."""
        a, b, t = d_lo - p_inf, d_hi - p_inf, target - p_inf
        if a > 0 and b > 0 and t > 0 and a > b and hi > lo:
            frac = math.log(a / t) / math.log(a / b)
            guess = lo + int(round(frac * (hi + 1 - lo)))
            # keep a margin so that the bracket shrinks by at least an eighth
            margin = max(1, (hi - lo) // 8)
            return min(max(guess, lo + margin), hi - margin) if hi - lo > 2 else guess
        return (lo + hi) // 2

    @staticmethod
    def _secant(d_j: float, d_next: float, target: float, p_inf: float) -> int:
        """Index step predicted from the local slope of ``log(d - p_inf)``."""
        a, b, t = d_j - p_inf, d_next - p_inf, target - p_inf
        if a <= 0 or b <= 0 or t <= 0 or b >= a:
            return 0
        slope = math.log(b / a)          # < 0 per index
        step = math.log(t / a) / slope
        if not math.isfinite(step):
            return 0
        return int(round(max(min(step, 1e9), -1e9)))
