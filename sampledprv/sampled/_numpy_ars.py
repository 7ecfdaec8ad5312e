r"""Exact rejection sampling of a 1-D log-concave density from its log-density alone.

Used by :class:`~sampledprv.sampled.inputs.LogDensityPair` when no sampler is given
(and the compiled adaptive rejection sampler is unavailable).  The envelope is the
derivative-free upper hull of Gilks (1992): for a concave :math:`f = \log p` and
abscissae :math:`x_1 < \dots < x_m`, the chord :math:`L_j` through
:math:`(x_j, f(x_j)), (x_{j+1}, f(x_{j+1}))` lies above :math:`f` outside
:math:`[x_j, x_{j+1}]`.  Hence on :math:`[x_i, x_{i+1}]` the bound
:math:`u = \min(L_{i-1}, L_{i+1})` holds, :math:`L_1` bounds the left tail and
:math:`L_{m-1}` the right tail.  ``exp(u)`` is piecewise exponential, sampled exactly
by inversion; a candidate ``x`` is accepted with probability :math:`e^{f(x) - u(x)}`.
The draws are exact whenever ``p`` is log-concave; a candidate with :math:`f(x) > u(x)`
proves that it is not, and raises :class:`ValueError` naming ``x``.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

__all__ = ["log_concave_sampler"]


def _range(logf: Callable[[np.ndarray], np.ndarray], drop: float = 40.0) -> tuple[float, float]:
    """An interval outside which ``logf`` has fallen ``drop`` below its maximum."""
    x = np.concatenate([-(2.0 ** np.arange(-4, 40))[::-1], [0.0], 2.0 ** np.arange(-4, 40)])
    f = np.asarray(logf(x), dtype=np.float64)
    if not np.isfinite(f).any():
        raise ValueError("logp is -inf or NaN on a wide grid around 0; pass sample_p")
    j = int(np.nanargmax(np.where(np.isfinite(f), f, -np.inf)))
    top = f[j]
    for _ in range(3):   # refine around the mode
        xs = np.linspace(x[max(j - 1, 0)], x[min(j + 1, x.size - 1)], 201)
        fs = np.asarray(logf(xs), dtype=np.float64)
        k = int(np.nanargmax(np.where(np.isfinite(fs), fs, -np.inf)))
        x, f, j, top = xs, fs, k, fs[k]
    mode = float(x[j])
    lo = hi = None
    for s in 2.0 ** np.arange(-20, 60):
        if lo is None and not (logf(np.array([mode - s]))[0] > top - drop):
            lo = mode - s
        if hi is None and not (logf(np.array([mode + s]))[0] > top - drop):
            hi = mode + s
        if lo is not None and hi is not None:
            return lo, hi
    raise ValueError("logp does not decay away from its mode; it is not a log-concave "
                     "density: pass sample_p")


def log_concave_sampler(logf: Callable[[np.ndarray], np.ndarray], *, points: int = 64,
                        name: str = "logp") -> Callable[[np.random.Generator, int], np.ndarray]:
    """``sample(rng, size)`` drawing exactly from the density ``exp(logf)`` (log-concave)."""
    lo, hi = _range(logf)
    x = np.linspace(lo, hi, points)
    f = np.asarray(logf(x), dtype=np.float64)
    if not np.all(np.isfinite(f[1:-1])):
        raise ValueError(f"{name} is not finite inside its support; pass a sampler")
    slope = np.diff(f) / np.diff(x)                    # chord j on [x_j, x_{j+1}]
    icpt = f[:-1] - slope * x[:-1]
    if not (slope[0] > 0 and slope[-1] < 0):
        raise ValueError(f"{name} is not log-concave (no decaying tails); pass a sampler")
    # pieces: (left, right, slope, intercept) of u on each linear stretch
    pieces = [(-np.inf, x[0], slope[0], icpt[0])]
    for i in range(points - 1):
        cands = [j for j in (i - 1, i + 1) if 0 <= j < points - 1]
        if len(cands) == 1:
            j = cands[0]
            pieces.append((x[i], x[i + 1], slope[j], icpt[j]))
            continue
        a, b = cands
        if slope[a] == slope[b]:
            j = a if icpt[a] <= icpt[b] else b
            pieces.append((x[i], x[i + 1], slope[j], icpt[j]))
            continue
        z = (icpt[b] - icpt[a]) / (slope[a] - slope[b])     # lines cross at z
        z = min(max(z, x[i]), x[i + 1])
        # left of z the steeper-rising line a is lower iff slope[a] > slope[b]
        first, second = (a, b) if slope[a] > slope[b] else (b, a)
        pieces.append((x[i], z, slope[first], icpt[first]))
        pieces.append((z, x[i + 1], slope[second], icpt[second]))
    pieces.append((x[-1], np.inf, slope[-1], icpt[-1]))
    L, R, S, C = (np.array(v, dtype=np.float64) for v in zip(*pieces))
    shift = float(np.max(f))

    def log_mass(l: np.ndarray, r: np.ndarray, s: np.ndarray, c: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            flat = np.abs(s) < 1e-12
            ea, eb = c - shift + s * l, c - shift + s * r
            lm = np.where(s > 0, eb + np.log1p(-np.exp(ea - eb)) - np.log(np.abs(s)),
                          ea + np.log1p(-np.exp(eb - ea)) - np.log(np.abs(s)))
            return np.where(flat, c - shift + s * l + np.log(np.maximum(r - l, 1e-300)), lm)

    lm = log_mass(L, R, S, C)
    lm = np.where(R > L, lm, -np.inf)
    w = np.exp(lm - np.max(lm))
    cdf = np.cumsum(w) / w.sum()

    def u_at(xx: np.ndarray, k: np.ndarray) -> np.ndarray:
        return C[k] + S[k] * xx

    def sample(rng: np.random.Generator, size: int) -> np.ndarray:
        out = np.empty(size)
        done = 0
        while done < size:
            m = int((size - done) * 1.3) + 16
            k = np.minimum(np.searchsorted(cdf, rng.random(m), side="right"), len(L) - 1)
            v = rng.random(m)
            s, l, r = S[k], L[k], R[k]
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                # inverse CDF of exp(s x) on [l, r]
                xl = np.where(s > 0, r + np.log(v + (1 - v) * np.exp(s * (l - r))) / s,
                              l + np.log1p(-v * (1 - np.exp(s * (r - l)))) / s)
                xf = l + v * (r - l)
            xx = np.where(np.abs(s) < 1e-12, xf, xl)
            fx = np.asarray(logf(xx), dtype=np.float64)
            ux = u_at(xx, k)
            bad = fx > ux + 1e-9 * (1.0 + np.abs(ux))
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                raise ValueError(f"{name} is not log-concave: at w = {xx[i]!r} it exceeds its "
                                 "chord envelope; pass a sampler (sample_p/sample_q)")
            acc = xx[rng.random(m) < np.exp(np.minimum(fx - ux, 0.0))]
            take = min(acc.size, size - done)
            out[done:done + take] = acc[:take]
            done += take
        return out
    return sample
