r"""Adaptive rejection sampling (ARS) for log-concave 1-D densities given only ``log p``.

Derivative-free ARS (Gilks 1992).  For a concave :math:`h = \log p` and abscissae
:math:`x_0 < \dots < x_{K-1}`, the chord :math:`L_{i,i+1}` through
:math:`(x_i, h(x_i))` and :math:`(x_{i+1}, h(x_{i+1}))` lies *below* :math:`h` on
:math:`[x_i, x_{i+1}]` and *above* it outside.  Hence

* on :math:`[x_i, x_{i+1}]`: :math:`h \le \min(L_{i-1,i}, L_{i+1,i+2})` (those that exist),
* on :math:`(-\infty, x_0]`: :math:`h \le L_{0,1}`; on :math:`[x_{K-1}, \infty)`:
  :math:`h \le L_{K-2,K-1}`,

a piecewise-linear upper hull :math:`u \ge h`, i.e. a piecewise-exponential envelope
that is sampled exactly by inversion; a candidate ``x`` is accepted when
:math:`\log U \le h(x) - u(x)`.  The chords themselves form a lower squeeze on
:math:`[x_0, x_{K-1}]`, whose mass bounds the acceptance rate from below.  The setup
adds abscissae (where the envelope exceeds the squeeze most) until that bound reaches
``target_acceptance``; sampling then uses the fixed envelope (still exact).

If ``log p`` is not concave the hull can dip below ``h``: every draw checks
:math:`h(x) \le u(x)` and raises :class:`ValueError` naming ``x`` otherwise.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np
from numba import njit

from .rng import uniform, uniform_open

__all__ = ["AdaptiveRejectionSampler"]

_TOL = 1e-9


def _eval(logp: Callable, x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    try:
        h = np.asarray(logp(x), dtype=np.float64)
        if h.shape != x.shape:
            raise TypeError
    except Exception:  # noqa: BLE001 - scalar-only logp (e.g. numba-jitted): point by point
        h = np.array([float(logp(float(v))) for v in x.ravel()]).reshape(x.shape)
    if np.isnan(h).any():
        bad = x[np.isnan(h)][0]
        raise ValueError(f"logp returned NaN at x = {bad!r}; it must return a number "
                         "(or -inf outside the support) everywhere")
    if (h == np.inf).any():
        raise ValueError(f"logp returned +inf at x = {float(x[h == np.inf][0])!r}")
    return h


class AdaptiveRejectionSampler:
    r"""Exact sampler of the density :math:`\propto e^{\log p(x)}`, log-concave on ``support``.

    Parameters
    ----------
    logp : callable
        Log-density up to a constant.  Vectorized numpy callables are evaluated on
        arrays, scalar ones point by point; a Numba-jitted scalar ``logp`` also enables
        :meth:`njit_sampler`.
    support : (float, float)
        Interval where ``p > 0`` (may be infinite on either side).
    init : float, optional
        A point inside the support with finite ``logp`` (default: 0 clipped inside).
    target_acceptance : float
        Setup stops when the squeeze guarantees this acceptance rate.
    max_points : int
        Maximal number of abscissae.

    Attributes
    ----------
    acceptance_bound : float
        Lower bound on the acceptance rate of the final envelope.
    """

    def __init__(self, logp: Callable, *, support: tuple[float, float] = (-math.inf, math.inf),
                 init: float | None = None, target_acceptance: float = 0.95,
                 max_points: int = 96) -> None:
        lo, hi = float(support[0]), float(support[1])
        if not lo < hi:
            raise ValueError(f"support must be an interval (lo < hi), got {support!r}")
        self.logp, self.lo, self.hi = logp, lo, hi
        x0 = 0.0 if init is None else float(init)
        if not lo < x0 < hi:
            x0 = (lo + hi) / 2 if math.isfinite(lo) and math.isfinite(hi) else (
                lo + 1.0 if math.isfinite(lo) else hi - 1.0)
        h0 = float(_eval(logp, np.array([x0]))[0])
        if not math.isfinite(h0):
            raise ValueError(f"logp({x0}) = {h0}; pass init= a point where the density is > 0")
        xs = self._bracket(x0, h0)
        for _ in range(max_points):
            self._build(xs)
            if self.acceptance_bound >= target_acceptance or len(self._x) >= max_points:
                break
            xs = np.sort(np.append(self._x, self._refine_point()))
        self._finalize()

    # ------------------------------------------------------------------ setup
    def _bracket(self, x0: float, h0: float) -> np.ndarray:
        """Points around the mode: on each side, step out (doubling, or halving the
        distance to a finite edge) until logp is 3 below the best value seen."""
        pts, vals = [x0], [h0]
        for direction in (-1.0, 1.0):
            edge = self.lo if direction < 0 else self.hi
            w, last = 1.0, x0
            for _ in range(200):
                x = x0 + direction * w
                if (x - edge) * direction >= 0:        # beyond a finite edge
                    x = 0.5 * (last + edge)
                    if abs(x - edge) <= 1e-12 * max(1.0, abs(edge)):
                        break
                h = float(_eval(self.logp, np.array([x]))[0])
                if not math.isfinite(h):
                    break
                pts.append(x)
                vals.append(h)
                last = x
                if h < max(vals) - 3.0:
                    break
                w *= 2.0
        pts_a = np.unique(np.array(pts))
        grid = np.linspace(pts_a.min(), pts_a.max(), 9)
        return np.unique(np.concatenate([pts_a, grid]))

    def _build(self, xs: np.ndarray) -> None:
        h = _eval(self.logp, xs)
        keep = np.isfinite(h)
        xs, h = xs[keep], h[keep]
        self._x, self._h = xs, h
        slopes = np.diff(h) / np.diff(xs)
        if np.any(np.diff(slopes) > 1e-9 * (1 + np.abs(slopes[1:]))):
            i = int(np.flatnonzero(np.diff(slopes) > 0)[0])
            raise ValueError(f"logp is not concave near x = {float(xs[i + 1])!r}: adaptive rejection "
                             "sampling needs a log-concave density")
        pieces = []   # (a, b, value at a, slope); a may be -inf (anchored at b then)
        k = xs.size
        if math.isfinite(self.lo) or slopes[0] > 0:
            pieces.append((self.lo, xs[0], None, slopes[0]))
        else:
            raise ValueError("logp does not decrease to the left; give a finite support")
        for i in range(k - 1):
            lines = []
            if i >= 1:
                lines.append(i - 1)
            if i + 2 <= k - 1:
                lines.append(i + 1)
            a, b = xs[i], xs[i + 1]
            if len(lines) == 1:
                pieces.append((a, b, None, slopes[lines[0]], lines[0]))
                continue
            l1, l2 = lines
            # intersection of the two chords
            s1, s2 = slopes[l1], slopes[l2]
            v1 = h[l1] + s1 * (a - xs[l1])
            v2 = h[l2] + s2 * (a - xs[l2])
            z = a + (v2 - v1) / (s1 - s2) if s1 != s2 else b
            z = min(max(z, a), b)
            pieces.append((a, z, None, s1, l1))
            pieces.append((z, b, None, s2, l2))
        if not (math.isfinite(self.hi) or slopes[-1] < 0):
            raise ValueError("logp does not decrease to the right; give a finite support")
        pieces.append((xs[-1], self.hi, None, slopes[-1]))
        # value of the hull line at each piece (through the chord's left point)
        a_arr, b_arr, c_arr, s_arr = [], [], [], []
        for p in pieces:
            a, b, s = p[0], p[1], p[3]
            li = p[4] if len(p) == 5 else (0 if p is pieces[0] else k - 2)
            anchor = b if not math.isfinite(a) else a
            c = h[li] + s * (anchor - xs[li])
            a_arr.append(a)
            b_arr.append(b)
            c_arr.append(c)
            s_arr.append(s)
        a, b, c, s = map(np.array, (a_arr, b_arr, c_arr, s_arr))
        shift = np.max(c)
        c = c - shift
        mass = np.array([_piece_mass(ai, bi, ci, si) for ai, bi, ci, si in zip(a, b, c, s)])
        sq = sum(_piece_mass(xs[i], xs[i + 1], h[i] - shift, slopes[i]) for i in range(k - 1))
        self._pieces = (a, b, c, s, shift)
        self._mass = mass
        self.acceptance_bound = float(sq / mass.sum())
        self._sq = np.array([_piece_mass(xs[i], xs[i + 1], h[i] - shift, slopes[i])
                             for i in range(k - 1)])
        if not (np.isfinite(mass).all() and mass.sum() > 0):
            raise ValueError("the ARS envelope is not integrable; give a finite support "
                             "or check that exp(logp) is integrable")

    def _refine_point(self) -> float:
        """New abscissa where envelope minus squeeze mass is largest."""
        a, b, c, s, _ = self._pieces
        xs = self._x
        best, point = -1.0, 0.0
        for j in (0, a.size - 1):               # tails
            if self._mass[j] > best:
                best = self._mass[j]
                if not math.isfinite(a[j]):
                    point = b[j] - 1.0 / abs(s[j])
                elif not math.isfinite(b[j]):
                    point = a[j] + 1.0 / abs(s[j])
                else:
                    point = 0.5 * (a[j] + b[j])
        for i in range(xs.size - 1):            # interior intervals
            inside = (a >= xs[i]) & (b <= xs[i + 1]) & np.isfinite(a) & np.isfinite(b)
            gap = self._mass[inside].sum() - self._sq[i]
            if gap > best:
                best, point = gap, 0.5 * (xs[i] + xs[i + 1])
        return float(point)

    def _finalize(self) -> None:
        a, b, c, s, shift = self._pieces
        self._cum = np.cumsum(self._mass) / self._mass.sum()
        self._cum[-1] = 1.0
        self._shift = shift

    # ------------------------------------------------------------------ sampling
    def _hull(self, x: np.ndarray, j: np.ndarray) -> np.ndarray:
        a, b, c, s, _ = self._pieces
        anchor = np.where(np.isfinite(a[j]), a[j], b[j])
        return c[j] + s[j] * (x - anchor)

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        """``size`` exact draws, vectorized with the numpy ``rng``."""
        a, b, c, s, shift = self._pieces
        out = np.empty(0)
        while out.size < size:
            m = int((size - out.size) / max(self.acceptance_bound, 0.05)) + 16
            j = np.searchsorted(self._cum, rng.random(m), side="right")
            j = np.minimum(j, self._cum.size - 1)
            x = _piece_inverse(a[j], b[j], s[j], rng.random(m))
            h = _eval(self.logp, x) - shift
            u = self._hull(x, j)
            bad = h > u + _TOL * (1 + np.abs(u))
            if bad.any():
                xb = float(x[bad][0])
                raise ValueError(f"logp exceeds its ARS hull at x = {xb!r}: the density is "
                                 "not log-concave there")
            acc = np.log(rng.random(m)) <= h - u
            out = np.concatenate([out, x[acc]])
        return out[:size]

    def njit_sampler(self) -> Callable:
        """A Numba ``draw(state) -> float`` (needs a jitted scalar ``logp``)."""
        if not hasattr(self.logp, "py_func"):
            raise TypeError("njit_sampler needs a numba-jitted scalar logp")
        a, b, c, s, shift = self._pieces
        cum = self._cum
        logp = self.logp
        anchor = np.where(np.isfinite(a), a, b)
        lo_inf = ~np.isfinite(a)

        @njit
        def draw(state):  # pragma: no cover - numba
            while True:
                j = np.searchsorted(cum, uniform(state), side="right")
                if j >= cum.shape[0]:
                    j = cum.shape[0] - 1
                x = _inv1(a[j], b[j], s[j], uniform_open(state), lo_inf[j])
                u = c[j] + s[j] * (x - anchor[j])
                hx = logp(x) - shift
                if hx > u + _TOL * (1.0 + abs(u)):
                    raise ValueError("logp exceeds its ARS hull (not log-concave) at x =", x)
                if math.log(uniform_open(state)) <= hx - u:
                    return x
        return draw


def _piece_mass(a: float, b: float, c: float, s: float) -> float:
    """Integral of exp(c + s (x - anchor)) over [a, b], anchor = a (b if a = -inf)."""
    if not math.isfinite(a):      # (-inf, b], s > 0, anchored at b
        return math.exp(c) / s
    if not math.isfinite(b):      # [a, inf), s < 0
        return math.exp(c) / -s
    w = b - a
    if abs(s * w) < 1e-12:
        return math.exp(c) * w
    return math.exp(c) * math.expm1(s * w) / s


def _piece_inverse(a, b, s, u):
    """Vectorized inverse CDF inside pieces (anchors as in :func:`_piece_mass`)."""
    a, b, s, u = map(np.asarray, (a, b, s, u))
    out = np.empty(np.broadcast(a, u).shape)
    left = ~np.isfinite(a)
    with np.errstate(all="ignore"):
        # [a, b] or [a, inf): x = a + log1p(u expm1(s w)) / s
        w = b - a
        small = np.abs(s * np.where(np.isfinite(w), w, 1.0)) < 1e-12
        gen = a + np.log1p(u * np.expm1(s * w)) / s
        flat = a + u * w
        out = np.where(small & np.isfinite(w), flat, gen)
        # (-inf, b]: x = b + log(u) / s
        out = np.where(left, b + np.log(u) / s, out)
    return out


@njit(cache=True)
def _inv1(a, b, s, u, left):  # pragma: no cover - numba
    if left:
        return b + math.log(u) / s
    w = b - a
    if math.isfinite(w) and abs(s * w) < 1e-12:
        return a + u * w
    return a + math.log1p(u * math.expm1(s * w)) / s
