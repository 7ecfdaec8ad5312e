r"""Conditional (Rao-Blackwellized) envelopes: sample what is hard, integrate what is known.

Balls-and-bins with Gaussian steps (design notes, "Batch samplers: random
allocation"): the remove loss is

.. math:: Y = \log\big(e^{V} + e^{S}\big) - \log T, \qquad
          V = \ell(x_1) \sim N(\mu^2/2, \mu^2), \quad
          S = \log\sum_{t=2}^T e^{\ell(x_t)},

with :math:`V` (the record's step) independent of :math:`S` (the other steps) and
:math:`Y` increasing in :math:`S`.  Its heavy right tail comes from :math:`V`, whose
law is known exactly; a plain histogram of :math:`Y` resolves a tail probability
:math:`p` only to a relative error of about :math:`\sqrt{\ln(1/a)/(np)}`.  Here the
sampled statistic is :math:`S` instead:

1. ``n`` draws of :math:`S` give its Clopper-Pearson envelopes
   (:func:`~.envelopes.envelope`): :math:`S_{low} \preceq S \preceq S_{up}` on an
   event of probability :math:`\ge 1 - a`.  The upper tail of :math:`S` beyond the
   window is bounded by Markov's inequality on :math:`E[e^{mS}] = E[B^m]`,
   :math:`B = e^S`, computed exactly by the multinomial expansion
   (:func:`bulk_tail`), a theorem, not a premise (it is still checked against the
   samples like every tail bound).
2. :math:`Y_{up} = \log(e^V + e^{S_{up}}) - \log T` with :math:`V` independent
   dominates :math:`Y` (monotone coupling), and its survival function is the finite
   mixture :math:`\sum_i w_i \bar\Phi\big((\log(Te^y - e^{s_i}) - \mu^2/2)/\mu\big)`
   (1 where :math:`Te^y \le e^{s_i}`), evaluated on the accountant's lattice and
   rounded up; :math:`Y_{low}` likewise from :math:`S_{low}` (its mass at
   :math:`-\infty` is :math:`B = 0`, i.e. :math:`Y = V - \log T`), rounded down.

Only the location of the bulk is sampled, so the tail of :math:`Y` is as accurate as
the normal CDF.  The envelopes hold on the same event as the :math:`S` envelopes.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import math
import threading
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np
from numba import njit
from scipy import special

from ...engine import LatticePMF
from ...core.outward import up
from ...rdp.allocation import log_multinomial_moment
from ..draws import allocation as al
from ...core.advice import AdvisedWarning, Remedy, warn_user
from ...core.progress import phase
from ..histograms.empirical import estimate_pmf
from ..histograms.histogram import LossHistogram, coarsen
from .envelopes import Envelope, compose_bounds, envelope
from .tail_sources import tail_bound
from .tails import TailBound

__all__ = ["BulkStatistic", "ConditionalRemove", "bulk_tail", "TruncationTail",
           "simulated_epsilon"]

#: largest moment order of the bulk's tail bound
_MAX_MOMENT = 64
#: merged S points (rounded outward) when mixing the normal CDFs
_S_POINTS = 4096
#: quantile of V beyond which its mass is ignored (lower end) / counted (upper end)
_V_Z = 9.0
#: rows of y per matrix-vector product of the mixture, and per normal-CDF sub-block
_Y_BLOCK = 2048
_Y_SUB = 256
#: conditional envelopes kept for repeated queries (each a few lattices of the mesh)
_ENVELOPE_CACHE = 8
#: the tail floor of the conditional envelopes is at most this one (that of a
#: 1024-fold composition), and a power of two: compositions of up to 1024 steps (an
#: Opacus run asking for epsilon at every new epoch count) share one envelope
_SHARED_FLOOR = 1e-16 / 1024


def shared_floor(floor: float) -> float:
    r"""The tail floor a conditional envelope is built with for a requested ``floor``:
    :math:`\min(10^{-16}/1024, 2^{\lfloor \log_2 \mathrm{floor} \rfloor})`.

    The floor only says where the upper envelope's tail extension stops and sends the
    rest of the bounded mass to :math:`+\infty` (:func:`~.envelopes.envelope`), so any
    floor at most the requested one gives a valid and no looser envelope; rounding it
    down to a power of two and capping it at the floor of a 1024-fold composition makes
    the envelope of a histogram the same for every composition of up to 1024 steps
    (and for every count between two powers of two beyond), so that a new epoch count
    costs an FFT, not a new envelope."""
    floor = float(floor)
    if not floor > 0.0:
        raise ValueError(f"floor must be positive, got {floor!r}")
    return min(_SHARED_FLOOR, 2.0 ** math.floor(math.log2(floor)))


@dataclass(frozen=True)
class BulkStatistic:
    r""":math:`S = \log\sum_{t=1}^{m} e^{\ell_t}` for ``m = steps - 1`` Gaussian steps
    without the record (:math:`\ell_t \sim N(-\mu^2/2, \mu^2)`), as a sampling source
    (the hooks of :mod:`sampledprv.sampled.draws.hooks`; its one law is sampled in
    both directions)."""

    count: int
    mu: float
    symmetric = True

    def _params(self) -> np.ndarray:
        return al.allocation_params(self.count, 1, al.BASE_GAUSS, self.mu, 2.0, "add")

    def loss_sampler(self, direction: str) -> tuple:
        return al.bulk_fill, self._params()

    def numpy_loss_sampler(self, direction: str):
        return al.bulk_numpy_sampler(self._params())

    def torch_loss_sampler(self, direction: str):
        """``f(generator, size)``: draws of :math:`S` on a torch device."""
        neg = al.allocation_torch_sampler(self.count, 1, al.BASE_GAUSS, self.mu, 2.0, "add")
        log_m = math.log(self.count)
        return lambda gen, size: log_m - neg(gen, size)     # -(S - log m) -> S


@functools.lru_cache(maxsize=64)
def bulk_tail(count: int, mu: float) -> TailBound:
    r"""Markov bounds :math:`P[S \ge s] \le E[B^m] e^{-ms}`, ``m = 1.._MAX_MOMENT``,
    with :math:`E[B^m] = m^{\,}\text{-ball multinomial moment}`:
    :math:`\log E[B^m] = m\log(\mathrm{count}) + \log E[\prod_b M(n_b)]`,
    :math:`M(j) = E[e^{j\ell}] = e^{j(j-1)\mu^2/2}` (:mod:`sampledprv.rdp.allocation`),
    as a :class:`~.tails.TailBound` (order :math:`m + 1`, divergence
    :math:`\log E[B^m]/m`)."""
    orders, divs = [], []
    for m in range(1, _MAX_MOMENT + 1):
        lm = np.array([0.5 * j * (j - 1) * mu * mu for j in range(m + 1)])
        val = m * math.log(count) + log_multinomial_moment(lm, count)
        orders.append(m + 1.0)
        divs.append(up(val / m, float(lm[-1]) / m + math.log(count)))
    return TailBound(np.array(orders), np.array(divs), source="proven moment bound of the "
                     "bulk of balls-and-bins (multinomial expansion)")


@dataclass(frozen=True, eq=False)
class TruncationTail:
    r"""A second bound on :math:`P[S \ge s]`, tight for the heavy tail of the bulk.

    For :math:`B = \sum_{t=1}^m X_t`, :math:`X_t = e^{\ell_t}` i.i.d. and any
    :math:`c > 0`, :math:`\theta > 0`:

    .. math:: P[B \ge b] \le m P[X \ge c]
              + e^{-\theta b} E\big[e^{\theta \min(X, c)}\big]^m

    (either some term exceeds ``c``, or the sum of the terms truncated at ``c`` reaches
    ``b``; Markov on the second).  The moment generating function of the bounded
    :math:`\min(X, c)` is bounded above by cells of :math:`z` (``X`` at each cell's
    upper end, exact normal cell probabilities).  Evaluated on a grid of ``b`` and
    used by monotonicity (the bound at the largest grid point below ``s``).
    """

    count: int
    mu: float
    grid: np.ndarray            # log b
    log_sf: np.ndarray          # log of the bound at the grid points

    @classmethod
    def build(cls, count: int, mu: float, points: int = 80) -> "TruncationTail":
        """The bound on a grid of ``points`` values of ``log b`` from ``log(count)``
        (below, the bound is 1 anyway) to where one term alone needs :math:`z > 10`."""
        return _truncation_tail(int(count), float(mu), int(points))

    @classmethod
    def _build(cls, count: int, mu: float, points: int) -> "TruncationTail":
        s_lo = math.log(count)
        s_hi = float(np.logaddexp(s_lo, 10.0 * mu - 0.5 * mu * mu)) + 1.0
        grid = s_lo + (s_hi - s_lo) * np.linspace(0.0, 1.0, points) ** 2   # fine near E[B]
        m = 0.5 * mu * mu
        z = np.arange(-12.0, 14.0 + 1e-9, 0.02)               # cells [z_i, z_{i+1}]
        x_hi = np.exp(mu * z[1:] - m)                          # X at the cells' upper ends
        cell = special.ndtr(z[1:]) - special.ndtr(z[:-1])
        below = float(special.ndtr(z[0]))                      # X <= X(z_0) there
        x0 = math.exp(mu * z[0] - m)
        top = float(special.ndtr(-z[-1]))                      # beyond the last cell: <= c
        tcs = np.geomspace(0.1, 100.0, 20)                     # theta * c
        out = np.zeros(points)
        for i, lb in enumerate(grid):
            b = math.exp(lb)
            best = 0.0
            for f in np.linspace(0.05, 1.0, 20):
                c = f * b
                p_big = count * float(special.ndtr(-(math.log(c) + m) / mu))
                if p_big >= 1.0:
                    continue
                th = tcs / c
                xm = np.minimum(x_hi, c)
                mgf = np.exp(np.outer(th, xm)) @ cell + below * np.exp(th * x0) \
                    + top * np.exp(th * c)
                val = float(np.min(count * np.log(mgf) - th * b))
                total = p_big + math.exp(min(val, 0.0))
                if total > 0.0:
                    best = min(best, math.log(min(1.0, total)))
                else:
                    # both terms underflow (small sigma: mu = 1/sigma large): the same
                    # bound in log space, log(count Phi(-x) + e^val)
                    log_big = math.log(count) + float(special.log_ndtr(
                        -(math.log(c) + m) / mu))
                    best = min(best, float(np.logaddexp(log_big, min(val, 0.0))))
            out[i] = best
        # round up for the float error of the sums above
        return cls(int(count), float(mu), grid, out + 1e-9)

    def sf(self, t: np.ndarray) -> np.ndarray:
        t = np.asarray(t, dtype=np.float64)
        j = np.searchsorted(self.grid, t, side="right") - 1     # largest grid point <= t
        out = np.ones(t.shape)
        ok = j >= 0
        out[ok] = np.exp(np.minimum(0.0, self.log_sf[j[ok]]))
        return out


@functools.lru_cache(maxsize=64)
def _truncation_tail(count: int, mu: float, points: int) -> TruncationTail:
    return TruncationTail._build(count, mu, points)


@dataclass(frozen=True, eq=False)
class _MinTail:
    """The pointwise minimum of two tail bounds (duck-typed like TailBound for
    :func:`~.envelopes.envelope`)."""

    a: TailBound
    b: TruncationTail

    def sf(self, t: np.ndarray) -> np.ndarray:
        return np.minimum(self.a.sf(t), self.b.sf(t))

    def reach(self, floor: float) -> float:
        r = self.a.reach(floor)
        ok = np.flatnonzero(self.b.log_sf <= math.log(floor))
        return min(r, float(self.b.grid[ok[0]])) if ok.size else r


def _merged(pmf: LatticePMF, points: int, up: bool) -> tuple[np.ndarray, np.ndarray, float]:
    """``(values, weights, p_inf)`` of ``pmf`` with its finite mass merged onto at most
    ``points`` points: each group of consecutive lattice points moved to its largest value
    (``up``, rounded up) or to its smallest (rounded down)."""
    v = pmf.shift + (pmf.offset + np.arange(pmf.probs.size)) * pmf.h
    w = pmf.probs
    nz = np.flatnonzero(w > 0)
    if nz.size == 0:
        return np.zeros(0), np.zeros(0), pmf.p_inf
    v, w = v[nz[0]: nz[-1] + 1], w[nz[0]: nz[-1] + 1]
    g = max(1, -(-v.size // points))
    idx = np.arange(0, v.size, g)
    at = np.minimum(idx + g - 1, v.size - 1) if up else idx
    return v[at], np.add.reduceat(w, idx), pmf.p_inf


@njit(cache=True, nogil=True)
def _place(pb, r0, t, nd, cols):  # pragma: no cover - numba
    """``pb[r0 + i, cols[j]] = t[i, j]`` where ``nd[i, j] < 0`` (``S < log(T e^y)``), else
    1 (the term is exactly 1 there): the scatter of :func:`_sf`, a copy."""
    for i in range(t.shape[0]):
        for j in range(t.shape[1]):
            pb[r0 + i, cols[j]] = t[i, j] if nd[i, j] < 0.0 else 1.0


def _sf(y: np.ndarray, s: np.ndarray, w: np.ndarray, p_top: float, mu: float,
        log_t: float) -> np.ndarray:
    r""":math:`P[\log(e^V + e^S) - \log T \ge y]` for :math:`S` on ``s`` with weights
    ``w`` (plus ``p_top`` at :math:`+\infty`), :math:`V \sim N(\mu^2/2, \mu^2)`.

    The mixture :math:`\sum_i w_i \bar\Phi(\cdot)` is a matrix-vector product over
    blocks of ``y``.  Its normal CDFs are evaluated only where they can matter: at the
    points of ``s`` with weight (a zero weight contributes exactly 0) and below
    :math:`\log(Te^y)` (above it the term is exactly 1); the other entries of the
    block's matrix hold those exact values (1, and 1 in the columns without weight,
    written once), so the sums are the same floating-point operations as for the full
    matrix.  :math:`\log(Te^y - e^S) = \log(Te^y) + \log(-\mathrm{expm1}(-d))`,
    :math:`d = \log(Te^y) - S`, takes :math:`-d` as ``S - log(T e^y)`` (the same float:
    subtraction rounds symmetrically) into buffers reused by every sub-block.
    """
    y = np.asarray(y, dtype=np.float64)
    out = np.full(y.size, float(p_top))
    m = 0.5 * mu * mu
    keep = np.flatnonzero(w != 0.0)
    s_k = s[keep]
    ordered = s_k.size < 2 or bool(np.all(s_k[1:] >= s_k[:-1]))
    p = np.ones((min(y.size, _Y_BLOCK), s.size))
    buf_nd = np.empty(_Y_SUB * s_k.size)
    buf_t = np.empty(_Y_SUB * s_k.size)
    for a in range(0, y.size, _Y_BLOCK):
        ly = y[a:a + _Y_BLOCK, None] + log_t                 # log(T e^y)
        pb = p[:ly.shape[0]]
        for b in range(0, ly.shape[0], _Y_SUB):
            lb = ly[b:b + _Y_SUB]
            # the points with S < log(T e^y) for some y of the sub-block (s sorted)
            ncol = int(np.searchsorted(s_k, lb.max(), side="left")) if ordered \
                else s_k.size
            if ncol < keep.size:                # S >= log(T e^y) on every row: 1
                pb[b:b + lb.shape[0], keep[ncol]:] = 1.0
            if ncol == 0:
                continue
            nd = buf_nd[:lb.shape[0] * ncol].reshape(lb.shape[0], ncol)
            t = buf_t[:lb.shape[0] * ncol].reshape(lb.shape[0], ncol)
            np.subtract(s_k[None, :ncol], lb, out=nd)          # -d = S - log(T e^y)
            np.minimum(nd, -1e-300, out=t)                      # -max(d, 1e-300)
            with np.errstate(divide="ignore", invalid="ignore"):
                # log(T e^y - e^S) = log(T e^y) + log1p(-e^{-(d)}), used where d > 0
                np.expm1(t, out=t)
                np.negative(t, out=t)
                np.log(t, out=t)
                np.add(lb, t, out=t)
                np.subtract(m, t, out=t)
                np.divide(t, mu, out=t)
            special.ndtr(t, out=t)
            _place(pb, b, t, nd, keep)                          # 1 where d <= 0
        out[a:a + _Y_BLOCK] += pb @ w
    return np.minimum(out, 1.0)


@dataclass(frozen=True)
class ConditionalRemove:
    """The remove direction of balls-and-bins with Gaussian steps, conditioned on the
    record's step (module docstring)."""

    steps: int
    mu: float

    @property
    def statistic(self) -> BulkStatistic:
        return BulkStatistic(self.steps - 1, self.mu)

    @property
    def statistic_tail(self) -> TailBound:
        return bulk_tail(self.steps - 1, self.mu)

    def _range(self, s_lo: float, s_hi: float) -> tuple[float, float]:
        lt = math.log(self.steps)
        m = 0.5 * self.mu * self.mu
        v_lo, v_hi = m - _V_Z * self.mu, m + _V_Z * self.mu
        return (float(np.logaddexp(v_lo, s_lo)) - lt, float(np.logaddexp(v_hi, s_hi)) - lt)

    def mesh(self, hist: LossHistogram, bins: int) -> float:
        """A power-of-two mesh putting the loss range on about ``bins`` points."""
        lo, hi = self._range(hist.lo, hist.lo + hist.h * len(hist.counts))
        return 2.0 ** math.ceil(math.log2((hi - lo) / max(bins - 2, 1)))

    def envelope(self, hist: LossHistogram, alpha: float, *, tail: TailBound,
                 floor: float, h: float, progress: "bool | None" = None) -> Envelope:
        """Envelopes of :math:`Y` on the mesh ``h`` from the histogram of :math:`S`.

        A pure function of its arguments; the last few results are kept (keyed by the
        values of every argument, the histogram's counts included), so that the queries
        of one composition, and accountants drawing the same samples, build each envelope
        once.  The cached lattices are read-only.  ``floor`` is rounded down by
        :func:`shared_floor`, so that compositions of different lengths share the
        envelope.  ``progress``: the bar of this phase (as everywhere: None shows it in a
        terminal once the build has run 2 s)."""
        floor = shared_floor(floor)
        key = _content_key((self, hist, float(alpha), tail, float(floor), float(h)))
        with _cache_lock:
            hit = _envelopes.get(key)
            if hit is not None:
                _envelopes.move_to_end(key)
                return hit
        with phase(progress, "balls-and-bins: conditional envelope (normal-CDF mixture)"):
            env = self._envelope(hist, alpha, tail=tail, floor=floor, h=h)
        for pmf in (env.upper, env.lower, env.estimate):
            pmf.probs.setflags(write=False)
        with _cache_lock:
            _envelopes[key] = env
            while len(_envelopes) > _ENVELOPE_CACHE:
                _envelopes.popitem(last=False)
        return env

    def _envelope(self, hist: LossHistogram, alpha: float, *, tail: TailBound,
                  floor: float, h: float) -> Envelope:
        if tail is not None:
            tail = _MinTail(tail, TruncationTail.build(self.steps - 1, self.mu))
        env_s = envelope(hist, alpha, tail=tail, floor=floor)
        s_up, w_up, p_up = _merged(env_s.upper, _S_POINTS, up=True)
        s_lo, w_lo, p_lo = _merged(env_s.lower, _S_POINTS, up=False)
        miss = max(0.0, 1.0 - float(w_lo.sum()) - p_lo)      # mass at S = -inf: B = 0
        s_lo = np.concatenate([[-np.inf], s_lo])
        w_lo = np.concatenate([[miss], w_lo])
        est = estimate_pmf(hist)
        s_es, w_es, p_es = _merged(est, _S_POINTS, up=True)
        lo, hi = self._range(float(min(s_lo[1:].min() if s_lo.size > 1 else hist.lo,
                                       hist.lo)),
                             float(s_up.max() if s_up.size else hist.lo))
        j0, j1 = math.floor(lo / h), math.ceil(hi / h)
        _check_work((j1 - j0 + 1) * (s_up.size + s_lo.size + s_es.size), j1 - j0 + 1, h)
        y = np.arange(j0, j1 + 1) * h
        lt = math.log(self.steps)
        sf_up = _sf(y, s_up, w_up, p_up, self.mu, lt)
        sf_up = np.minimum.accumulate(sf_up)
        up = np.empty(y.size)
        up[0] = 1.0 - sf_up[0]
        up[1:] = sf_up[:-1] - sf_up[1:]
        # the mass above the last point: the part of S_up at +inf plus V's tail there
        upper = LatticePMF(np.clip(up, 0.0, None), j0, h, 0.0, p_inf=float(sf_up[-1]))
        sf_lo = _sf(y, s_lo, w_lo, p_lo, self.mu, lt)
        sf_lo = np.minimum.accumulate(sf_lo)
        low = np.empty(y.size)
        low[:-1] = sf_lo[:-1] - sf_lo[1:]
        low[-1] = sf_lo[-1] - p_lo
        lower = LatticePMF(np.clip(low, 0.0, None), j0, h, 0.0, p_inf=float(p_lo))
        mid = np.concatenate([y - 0.5 * h, [y[-1] + 0.5 * h]])
        sf_m = np.minimum.accumulate(_sf(mid, s_es, w_es, p_es, self.mu, lt))
        e = np.empty(y.size)
        e[0] = 1.0 - sf_m[1]
        e[1:] = sf_m[1:-1] - sf_m[2:]
        estimate = LatticePMF(np.clip(e, 0.0, None), j0, h, 0.0, p_inf=float(sf_m[-1]))
        return Envelope(upper, lower, estimate, alpha)


#: normal-CDF evaluations of one conditional envelope above which it warns (about two
#: minutes on one core at the measured ~7e7 per second) and above which it is refused
#: (about four hours)
_WARN_WORK = 1e10
_REFUSE_WORK = 1e12


def _check_work(work: int, points: int, h: float) -> None:
    """Warn before a conditional envelope that will take minutes; refuse one that would
    take hours, naming the limit and the fix (the envelope's lattice has ``points``
    points of mesh ``h``, set by the accountant's ``bins``, which grow with the number of
    compositions when ``bins="auto"``)."""
    what = (f"the balls-and-bins conditional envelope needs {work:.2g} normal-CDF "
            f"evaluations ({points:,} lattice points of mesh {h:.3g} times the points of the "
            "bulk statistic's envelopes)")
    fix = [Remedy("bins", "set", float(2**15), "SampledAccountant",
                  "a coarser mesh: fewer lattice points (the rounding width k*h grows)")]
    if work > _REFUSE_WORK:
        raise ValueError(f"{what}, above the limit {_REFUSE_WORK:.0e} (hours on one core): "
                         "set SampledAccountant(bins=2**15) or smaller for a coarser mesh, or "
                         "compose fewer epochs")
    if work > _WARN_WORK:
        warn_user(AdvisedWarning(f"{what}: about {work / 7e7 / 60:.0f} minutes on one core",
                                 fix))


_envelopes: "OrderedDict[tuple, Envelope]" = OrderedDict()
_cache_lock = threading.Lock()


def _content_key(obj: object) -> object:
    """A hashable key equal for equal values: arrays by dtype, shape and a digest of their
    bytes, dataclasses by type and fields, floats by their bits (``-0.0`` vs ``0.0`` and
    NaN are told apart correctly)."""
    if isinstance(obj, np.ndarray):
        a = np.ascontiguousarray(obj)
        return ("ndarray", a.dtype.str, a.shape, hashlib.sha1(a.tobytes()).hexdigest())
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return (type(obj).__qualname__,) + tuple(
            (f.name, _content_key(getattr(obj, f.name))) for f in dataclasses.fields(obj))
    if isinstance(obj, (tuple, list)):
        return (type(obj).__name__,) + tuple(_content_key(x) for x in obj)
    if isinstance(obj, (float, np.floating)):
        return ("float", float(obj).hex())
    if obj is None or isinstance(obj, (bool, int, str, np.integer)):
        return (type(obj).__name__, obj)
    raise TypeError(f"no content key for {type(obj).__name__}")


def simulated_epsilon(mechanism: object, hists: dict, count: int, delta: float, alpha: float,
                      bins: int) -> tuple[float, float]:
    r"""``(lower, upper)`` of the certified :math:`\varepsilon(\delta)` the accountant
    would give from the histograms ``hists`` (direction -> histogram of the sampled
    quantity: the statistic where ``mechanism.conditional(d)`` exists, else the loss),
    for the planner's simulations (:mod:`.prediction`); same envelopes, alpha split and
    mesh rule as :class:`~.accountant.SampledAccountant`."""
    conds = {d: mechanism.conditional(d) for d in hists}
    tails = {d: conds[d].statistic_tail if conds[d] is not None else
             tail_bound(mechanism, d) for d in hists}
    h_q = max(hists[d].h if conds[d] is None else conds[d].mesh(hists[d], bins)
              for d in hists)
    a_h = alpha / len(hists)
    floor = 1e-16 / count
    lo = up = -math.inf
    for d, hh in hists.items():
        if conds[d] is not None:
            env = conds[d].envelope(hh, a_h, tail=tails[d], floor=floor, h=h_q)
        else:
            f = max(1, int(round(h_q / hh.h)))
            env = envelope(coarsen(hh, f), a_h, tail=tails[d], floor=floor)
        b = compose_bounds([(env, count)])
        lo_d, _, up_d = b.epsilon(delta)
        lo, up = max(lo, lo_d), max(up, up_d)
    return lo, up
