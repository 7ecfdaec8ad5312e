r"""Certified bounds from histograms of privacy-loss samples: the envelope method.

Envelope method (``certify="envelope"``, see ``docs/concepts.md``, "What certified means")
------------------------------------------------------------------------------------------
For one histogram with edges :math:`t_j = lo + j h` (``j = 0..b``) let
:math:`T_j = \#\{Y \ge t_j\}` and :math:`p_j = P[Y \ge t_j]`.  One-sided Clopper-Pearson
bounds at level ``a`` each give :math:`U_j \ge p_j` (``j = 0..b``), :math:`D_j \le p_j`
(``j = 0..b``) and :math:`D_\infty \le P[Y = +\infty]`; with ``a = alpha_h / (2b + 3)`` all
hold at once with probability :math:`\ge 1 - \alpha_h` (union bound).  On that event

* :math:`Y_{up}` -- mass :math:`1 - U_0` at :math:`t_0`, :math:`U_{j-1} - U_j` at :math:`t_j`,
  :math:`U_b` at :math:`+\infty` -- is stochastically larger than ``Y`` (``Y`` rounded up,
  unseen tail to :math:`+\infty`);
* :math:`Y_{low}` -- mass :math:`D_j - D_{j+1}` at :math:`t_j`, :math:`D_b - D_\infty` at
  :math:`t_b`, :math:`D_\infty` at :math:`+\infty`, the rest at :math:`-\infty` -- is
  stochastically smaller.

:math:`y \mapsto (1 - e^{\varepsilon - y})_+` is increasing and stochastic order is
preserved by independent sums, so
:math:`\delta_{\sum Y_{low}}(\varepsilon) \le \delta(\varepsilon) \le \delta_{\sum Y_{up}}(\varepsilon)`.
The sums are computed by :func:`~sampledprv.engine.compose_lattices`; the Chernoff
bounds on aliased mass and the floating-point error bound are added to the upper bound
and subtracted from the lower one.
"""

from __future__ import annotations

import hashlib
import math
import os
import threading
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Optional, Sequence

import numpy as np

from ...engine import ComposedPMF, LatticePMF, compose_lattices
from ...engine.curve import PrivacyCurve
from ...core.progress import Progress
from ..histograms.empirical import estimate_pmf
from ..histograms.histogram import LossHistogram, tail_counts

if TYPE_CHECKING:  # pragma: no cover
    from .tails import TailBound

__all__ = ["cp_upper", "cp_lower", "tests_per_histogram", "Envelope", "envelope",
           "lower_envelope", "ComposedBounds", "compose_bounds", "composition_steps"]


#: Clopper-Pearson quantiles per task of the thread pool (about 0.1 s of scipy each)
_CP_CHUNK = 8192


#: every this many sorted counts one quantile is boost's (an anchor); the others start
#: from the log-linear interpolation between anchors and take Halley steps
_ANCHOR_EVERY = 32
#: Halley steps from the interpolated start (then the step must be below
#: ``_CONVERGED`` times the distance to the nearer end of (0, 1), else that quantile
#: restarts from boost's)
_HALLEY_STEPS = 4
_CONVERGED = 1e-14
#: the outward margin of every quantile, relative to the nearer end of (0, 1) (plus two
#: units in the last place, and ``2^-52`` absolute on the upper side, where the tail is
#: evaluated at ``1 - x``): it covers the incomplete beta function's own relative error
#: in the tail (about 1e-11 of it against 30-40-digit binomial sums), which 1e-11 in ``x``
#: outweighs (it moves the tail by about 5e-8 of it at ``n = 1e5``)
_MARGIN = 1e-11


def _quantiles(upper: bool, level: float, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    r"""The ``level`` quantiles of :math:`\mathrm{Beta}(a_i, b_i)` from the top (``upper``)
    or the bottom, rounded outward (up, resp. down) by :data:`_MARGIN`: ``a`` is
    increasing (the counts are sorted), so the quantiles are too.

    Every :data:`_ANCHOR_EVERY`-th one (and the last) starts from boost's inverse
    incomplete beta (scipy's ``betainccinv`` / ``betaincinv``, about 3-5 us each), the
    others from the log-linear interpolation of the anchors in ``a``; all take
    :data:`_HALLEY_STEPS` Halley steps on :math:`g(x) = \log T(x) - \log(\text{level})`,
    with :math:`T(x) = P[X > x]` (upper) or :math:`P[X \le x] = I_x(a, b)` (lower), the
    incomplete beta function (about 0.2 us), and :math:`g' = \mp r`,
    :math:`g'' = -r(q + r)` (upper) or :math:`r(q - r)` (lower), where :math:`r = f/T`,
    :math:`f` the beta density and :math:`q = (a-1)/x - (b-1)/(1-x)`.  Above, the steps
    evaluate :math:`T` fast as :math:`I_{1-x}(b, a)` at the rounded :math:`1 - x`, and
    the last one accurately as the complementary function at :math:`x` (about 1 us).
    Where the last step is not below ``1e-14`` of :math:`\min(x, 1 - x)` (or the iterate
    is not finite and inside (0, 1)) the quantile restarts from boost's with two more
    steps, and is boost's as it is if those do not converge either.

    Boost's own inverse misses its level by up to 1e-9 of it at ``n = 1e5`` and by up to
    2e-6 at ``n = 1e8`` (its tails, summed in 30-40 digits, exceed the level by that
    much); the Halley steps solve to the accuracy of the incomplete beta function of the
    tail's side, which agrees with those sums to about 1e-11 of the tail.
    :data:`_MARGIN` (relative to :math:`\min(x, 1 - x)`, plus two units in the last place,
    and ``2^-52`` absolute on the upper side) covers that error and the double nearest a
    root near 1.  Measured: 4-5x faster than boost alone; every rounded quantile's tail
    at most its level (``tests/test_cold_start.py`` at ``n`` from 1e3 to 1e8, and 400
    random cases with ``n`` up to 3e8 and levels down to 1e-170; below, boost's inverse
    is not finite at small ``n``, and neither is this one's)."""
    from scipy import special  # noqa: PLC0415 - keep the import lazy, like scipy.stats
    exact = special.betainccinv if upper else special.betaincinv
    m = a.size
    anchors = (np.arange(m) if m < 2 * _ANCHOR_EVERY else
               np.unique(np.concatenate([np.arange(0, m, _ANCHOR_EVERY), [m - 1]])))
    at = exact(a[anchors], b[anchors], level)
    lbeta = special.betaln(a, b)
    target = math.log(level)

    def halley(x: np.ndarray, i: np.ndarray, steps: int) -> tuple[np.ndarray, np.ndarray]:
        """``steps`` Halley steps from ``x`` (not modified) for the quantiles ``i``; the
        last evaluates the tail accurately at ``x`` (above: the complementary function,
        not the fast one at the rounded ``1 - x``).  Returns the iterate and where it
        converged."""
        ai, bi, li = a[i], b[i], lbeta[i]
        step = np.full(i.size, np.inf)
        with np.errstate(all="ignore"):
            for it in range(steps):
                y = 1.0 - x
                if not upper:
                    tail = special.betainc(ai, bi, x)
                elif it < steps - 1:
                    tail = special.betainc(bi, ai, y)
                else:
                    tail = special.betaincc(ai, bi, x)
                log_tail = np.log(tail)
                g = log_tail - target
                r = np.exp((ai - 1.0) * np.log(x) + (bi - 1.0) * np.log1p(-x) - li - log_tail)
                q = (ai - 1.0) / x - (bi - 1.0) / y
                d1, d2 = (-r, -r * (q + r)) if upper else (r, r * (q - r))
                step = 2.0 * g * d1 / (2.0 * d1 * d1 - g * d2)
                x = x - step
            ok = (np.isfinite(x) & (x > 0.0) & (x < 1.0)
                  & (np.abs(step) <= _CONVERGED * np.minimum(x, 1.0 - x)))
        return x, ok

    if anchors.size == m:
        start = at
    else:
        with np.errstate(all="ignore"):
            start = np.exp(np.interp(a, a[anchors], np.log(at)))
    x, ok = halley(start, np.arange(m), _HALLEY_STEPS)
    bad = np.flatnonzero(~ok)
    if bad.size:
        # boost's quantile, refined by two steps where they converge (its own error
        # reaches 1e-6 of the level at n = 1e8), else boost's as it is
        x0 = exact(a[bad], b[bad], level)
        x1, ok1 = halley(x0, bad, 2)
        x[bad] = np.where(ok1, x1, x0)
    # outward by _MARGIN of the nearer end of (0, 1) (near 1 the root is found, and
    # known, to a relative accuracy in 1 - x, which x itself would overstate) and by two
    # units in the last place (near 1 the double nearest the root may be on the wrong
    # side of it by one)
    pad = _MARGIN * np.minimum(x, 1.0 - x) + 2.0 * np.spacing(x)
    if upper:
        return np.minimum(x + pad + 2.0 ** -52, 1.0)
    return np.maximum(x - pad, 0.0)


def _beta_quantile(upper: bool, level: float, a: np.ndarray, b: np.ndarray,
                   progress: Optional[bool], desc: str) -> np.ndarray:
    """:func:`_quantiles` in chunks of :data:`_CP_CHUNK` on a thread pool: the point of
    ``Beta(a, b)`` with ``level`` of the mass above it (``upper``) or below it.

    The upper quantile is solved at ``level`` itself, not as the lower quantile at
    ``1 - level``: for the levels of the envelopes' tests (``alpha`` split over tens of
    thousands of tests, about 1e-14) ``1 - level`` rounds to a double whose distance
    from 1 differs from ``level`` by up to 1% (and the test's failure probability with
    it; until the twenty-first round the upper envelope was solved that way).

    The quantiles dominate the envelopes of large histograms; the ufuncs release the
    GIL, so chunks run on all cores.  The chunks are fixed slices of the sorted counts,
    whatever the number of threads: the values do not depend on it.  A bar shows when
    the run is expected to last more than 2 s (``progress`` as in
    :class:`~sampledprv.core.progress.Progress`).
    """
    m = a.size
    if m <= _CP_CHUNK:
        return _quantiles(upper, level, a, b)
    starts = range(0, m, _CP_CHUNK)
    workers = max(1, min(len(starts), os.cpu_count() or 1))
    bar = Progress(progress, m, desc, unit="test")
    out = np.empty(m)
    try:
        with ThreadPoolExecutor(workers, thread_name_prefix="sampledprv-cp") as ex:
            def one(s: int) -> int:
                out[s:s + _CP_CHUNK] = _quantiles(upper, level, a[s:s + _CP_CHUNK],
                                                  b[s:s + _CP_CHUNK])
                return min(_CP_CHUNK, m - s)
            for k in ex.map(one, starts):
                bar.update(k)
    finally:
        bar.close()
    return out


#: Clopper-Pearson quantile arrays kept for repeated queries (keyed by side, ``n``, level
#: and the digest of the distinct counts): the envelopes of one histogram are built again
#: by every query of a composition and by accountants that draw the same samples
_CP_MEMO: "OrderedDict[tuple, np.ndarray]" = OrderedDict()
_CP_MEMO_SIZE = 16
#: ... holding at most this many quantiles in all (32 MiB); a longer array is not kept
_CP_MEMO_FLOATS = 2**22
#: arrays shorter than this are recomputed (their quantiles cost less than the key)
_CP_MEMO_LEAST = 64
_cp_lock = threading.Lock()


def _memo_ppf(side: str, uk: np.ndarray, n: int, a: float, compute) -> np.ndarray:
    """``compute()`` (the quantiles of the distinct counts ``uk``), or the same array from
    an earlier call with equal arguments (a pure function of them: bit-identical)."""
    if uk.size < _CP_MEMO_LEAST:
        return compute()
    key = (side, int(n), float(a).hex(), uk.size,
           hashlib.sha1(np.ascontiguousarray(uk).tobytes()).hexdigest())
    with _cp_lock:
        hit = _CP_MEMO.get(key)
        if hit is not None:
            _CP_MEMO.move_to_end(key)
            return hit
    out = compute()
    if out.size > _CP_MEMO_FLOATS:
        return out
    out.setflags(write=False)
    with _cp_lock:
        _CP_MEMO[key] = out
        while len(_CP_MEMO) > _CP_MEMO_SIZE or \
                sum(v.size for v in _CP_MEMO.values()) > _CP_MEMO_FLOATS:
            _CP_MEMO.popitem(last=False)
    return out


def cp_upper(k: np.ndarray, n: int, a: float, progress: Optional[bool] = False) -> np.ndarray:
    """One-sided Clopper-Pearson upper bound: ``P[p <= U] >= 1 - a`` for ``k ~ Bin(n, p)``.

    ``progress``: a bar for long runs (see :func:`_beta_quantile`); off by default."""
    k = np.asarray(k, dtype=np.float64)
    out = np.ones_like(k)
    m = k < n
    uk, inv = np.unique(k[m], return_inverse=True)     # tail counts repeat: ppf once each
    out[m] = _memo_ppf("upper", uk, n, a, lambda: _beta_quantile(
        True, a, uk + 1.0, n - uk, progress, "Clopper-Pearson upper envelope"))[inv]
    return out


def cp_lower(k: np.ndarray, n: int, a: float, progress: Optional[bool] = False) -> np.ndarray:
    """One-sided Clopper-Pearson lower bound: ``P[p >= D] >= 1 - a``."""
    k = np.asarray(k, dtype=np.float64)
    out = np.zeros_like(k)
    m = k > 0
    uk, inv = np.unique(k[m], return_inverse=True)
    out[m] = _memo_ppf("lower", uk, n, a, lambda: _beta_quantile(
        False, a, uk, n - uk + 1.0, progress, "Clopper-Pearson lower envelope"))[inv]
    return out


def tests_per_histogram(bins: int) -> int:
    """Number of one-sided tests in one envelope (``2 * bins + 3``)."""
    return 2 * int(bins) + 3


@dataclass(frozen=True, eq=False)
class Envelope:
    """Upper / lower stochastic envelopes and the point estimate of one histogram."""

    upper: LatticePMF
    lower: LatticePMF
    estimate: LatticePMF
    alpha: float


def envelope(hist: LossHistogram, alpha: float, *, tail: Optional["TailBound"] = None,
             floor: float = 1e-16, max_extend: Optional[int] = None,
             progress: Optional[bool] = None) -> Envelope:
    r"""Envelopes of ``hist`` valid simultaneously with probability ``>= 1 - alpha``.

    ``tail`` (a :class:`~.tails.TailBound`: Renyi/Chernoff bounds and
    a loss range) tightens the upper envelope: at every threshold the tail bound is
    :math:`\min(U_j, C(t_j))`, :math:`C` the deterministic tail bound; beyond the window
    the lattice is continued with :math:`\min(U_b, C(t_j))` (mass rounded up to the next
    lattice point) until :math:`C \le` ``floor`` or the end of the loss range, at most
    ``max_extend`` points (default ``4 * bins``); only what is left goes to
    :math:`+\infty`.  Valid on the same event, provided the tail bound is true.  The
    lower envelope does not use it.  ``progress``: tqdm bars for the Clopper-Pearson
    quantiles when they take more than about 2 s (``None``: on a terminal only).
    """
    n = int(hist.n)
    bins = len(hist.counts)
    a = alpha / tests_per_histogram(bins)
    t = tail_counts(hist)
    u = np.minimum.accumulate(cp_upper(t, n, a, progress))     # nonincreasing, U_0..U_b
    if tail is not None:
        edges = hist.lo + hist.h * np.arange(bins + 1)
        u = np.minimum(u, tail.sf(edges))
        top = edges[-1]
        reach = tail.reach(floor)
        cap = 4 * bins if max_extend is None else int(max_extend)
        m = 0 if not (top < reach < math.inf) else \
            min(cap, int(math.ceil((reach - top) / hist.h)) + 1)
        if m > 0:
            ext = top + hist.h * np.arange(1, m + 1)
            u = np.concatenate([u, np.minimum(u[-1], tail.sf(ext))])
        u = np.minimum.accumulate(u)
    up = np.empty(u.size)
    up[0] = 1.0 - u[0]
    up[1:] = u[:-1] - u[1:]
    upper = LatticePMF(np.clip(up, 0.0, None), 0, hist.h, shift=hist.lo, p_inf=float(u[-1]))
    return Envelope(upper, lower_envelope(hist, alpha, t, progress), estimate_pmf(hist),
                    alpha)


def lower_envelope(hist: LossHistogram, alpha: float,
                   tails: Optional[np.ndarray] = None,
                   progress: Optional[bool] = None) -> LatticePMF:
    r"""The lower envelope :math:`Y_{low}` of :func:`envelope` alone (same tests, same
    level ``alpha / (2 bins + 3)`` each): mass :math:`D_j - D_{j+1}` at :math:`t_j`,
    :math:`D_b - D_\infty` at :math:`t_b`, :math:`D_\infty` at :math:`+\infty`."""
    n = int(hist.n)
    bins = len(hist.counts)
    a = alpha / tests_per_histogram(bins)
    t = tail_counts(hist) if tails is None else tails
    d = np.minimum.accumulate(cp_lower(t, n, a, progress))     # nonincreasing, D_0..D_b
    d_inf = float(min(cp_lower(np.array([hist.pos_inf]), n, a)[0], d[-1]))
    low = np.empty(bins + 1)
    low[:-1] = d[:-1] - d[1:]
    low[-1] = d[-1] - d_inf
    return LatticePMF(np.clip(low, 0.0, None), 0, hist.h, shift=hist.lo, p_inf=d_inf)


def _err(c: ComposedPMF) -> float:
    return c.spill_upper + c.spill_lower + c.numeric_error


@dataclass(frozen=True, eq=False)
class ComposedBounds:
    """Composed upper envelope, lower envelope and estimate of one direction."""

    up: ComposedPMF
    low: ComposedPMF
    est: ComposedPMF
    details: dict = field(default_factory=dict)

    @cached_property
    def _curves(self) -> tuple[PrivacyCurve, PrivacyCurve, PrivacyCurve]:
        """Curves of (low, est, up), built once (O(N)); each query is then O(log N)."""
        return tuple(PrivacyCurve(c.values, c.probs, c.p_inf)  # type: ignore[return-value]
                     for c in (self.low, self.est, self.up))

    def delta(self, eps: float) -> tuple[float, float, float]:
        """``(lower, estimate, upper)`` bounds on ``delta(eps)``."""
        c_low, c_est, c_up = self._curves
        lo = c_low.delta(eps) - _err(self.low)
        up = c_up.delta(eps) + _err(self.up)
        est = c_est.delta(eps)
        lo, up = max(lo, 0.0), min(up, 1.0)
        return lo, min(max(est, lo), up), up

    def epsilon(self, delta: float) -> tuple[float, float, float]:
        """``(lower, estimate, upper)`` bounds on ``epsilon(delta)``."""
        c_low, c_est, c_up = self._curves
        eu = _err(self.up)
        up = c_up.epsilon(delta - eu) if delta > eu else math.inf
        lo = c_low.epsilon(delta + _err(self.low))
        est = c_est.epsilon(delta)
        lo = min(lo, up)
        return lo, min(max(est, lo), up), up

    def tail_bound(self, a: float) -> float:
        r"""Upper bound on :math:`P[|\sum Y| \ge a]` from the envelopes (``a > 0``)."""
        v = self.up.values
        p_hi = float(self.up.probs[v >= a].sum()) + self.up.p_inf + _err(self.up)
        v = self.low.values
        missing = max(0.0, 1.0 - float(self.low.probs.sum()) - self.low.p_inf)
        p_lo = float(self.low.probs[v <= -a].sum()) + missing + _err(self.low)
        return min(1.0, p_hi + p_lo)


def compose_bounds(components: Sequence[tuple[Envelope, int]], *, tail_mass: float = 1e-16,
                   max_size: int = 2**24, bar: Optional[Progress] = None) -> ComposedBounds:
    """Compose the envelopes (and estimates) of independent components by FFT.

    ``bar`` (a :class:`~sampledprv.core.progress.Progress`) counts the transforms:
    :func:`composition_steps` of them.
    """
    kw = dict(tail_mass=tail_mass, max_size=max_size,
              on_step=None if bar is None else bar.update)
    up = compose_lattices([(e.upper, c) for e, c in components], **kw)
    low = compose_lattices([(e.lower, c) for e, c in components], **kw)
    est = compose_lattices([(e.estimate, c) for e, c in components], **kw)
    det = {"spill_upper": up.spill_upper + up.spill_lower, "numeric_error": up.numeric_error,
           "p_inf_upper": up.p_inf, "grid_points": int(up.probs.size)}
    return ComposedBounds(up, low, est, det)


def composition_steps(n_components: int) -> int:
    """Transforms that :func:`compose_bounds` reports for ``n_components`` components
    (three compositions: upper, lower, estimate; one step per component and one for the
    inverse transform each)."""
    return 3 * (n_components + 1)

