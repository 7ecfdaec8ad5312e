r"""Grid sizes predicted before anything proportional to a grid is allocated.

The analytic accountant discretizes every privacy-loss law on a mesh ``h`` and
composes the lattices by FFT.  Both steps allocate arrays proportional to a grid: the
discretization one of ``(b - a) / h`` points per law (its window ``[a, b]``), the
composition one of the composed window's length.  Both lengths are predicted here
from quantities that cost a few hundred scalar CDF evaluations and a 2,048-point
lattice per law, so that an impossible request fails in milliseconds with the
grid-size error instead of after gigabytes of work:

* the window of a law is found exactly as :func:`sampledprv.engine.discretize.discretize`
  finds it (bisection on its tails), so that length is exact;
* the composed window comes from the same Chernoff bound
  (:func:`sampledprv.engine.compose._chernoff_window`) applied to each law discretized
  on a coarse mesh (the window's width over 2,048).  The coarse lattice differs from
  the fine one by rounding noise of a 2,048th of the law's window, so the prediction
  agrees with the final length to well under a percent; the FFT step still checks the
  exact length before it allocates.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from ..core.law import LossDistribution
from .compose import GridTooLargeError, _chernoff_window
from .discretize import discretize
from .fft import next_fast_len
from .lattice import LatticePMF, _logsumexp_rows, block_moments

#: points of the coarse lattice used for the prediction
_COARSE_POINTS = 2048
#: early refusal only when the prediction exceeds the limit by this factor (the exact
#: check before the FFT stays authoritative)
_MARGIN = 1.02


def window(dist: LossDistribution, tau: float) -> tuple[float, float]:
    """The discretization window ``[a, b]`` of ``dist`` for tail budget ``tau``."""
    return dist.lower_point(tau), dist.upper_point(tau)


def window_points(span: tuple[float, float], h: float) -> int:
    """Number of lattice points :func:`discretize` allocates for the window ``span``
    on mesh ``h``."""
    a, b = span
    i0 = math.floor(a / h + 0.5)
    i1 = max(math.floor(b / h + 0.5), i0)
    return int(i1 - i0 + 1)


def check_composition(laws: Sequence[tuple[LossDistribution, int]], h: float, tau: float,
                      tail_mass: float, max_size: int, *, mesh_out: float | None = None) -> int:
    """Predicted FFT length of composing ``count`` copies of each law, discretized on
    mesh ``h`` with tail budget ``tau``, over a window with Chernoff spill
    ``tail_mass`` per side, on the output mesh ``mesh_out`` (``h`` unless the lattices
    are regridded first).

    Raises
    ------
    GridTooLargeError
        When one law's window alone has more than ``max_size`` points on mesh ``h``
        (exact), or when the predicted composed length exceeds ``max_size`` by more
        than 2 percent.
    """
    mesh_out = h if mesh_out is None else mesh_out
    spans = [window(dist, tau) for dist, _ in laws]
    longest = max(window_points(span, h) for span in spans)
    if longest > max_size:
        raise GridTooLargeError(longest, max_size)
    width = max(b - a for a, b in spans)
    coarse_h = max(h, width / _COARSE_POINTS) if width > 0 else h
    # only the lattices' shapes count here (a common shift moves both window ends)
    coarse = [(discretize(dist, coarse_h, tau, shift_bound=False).pmf.trimmed(), int(c))
              for dist, c in laws]
    lower, upper, _ = _chernoff_window(coarse, math.log(tail_mass))
    composed = int(math.ceil((upper - lower + 2.0 * coarse_h) / mesh_out)) + 1
    predicted = max(composed, longest if mesh_out == h else 0)
    if predicted > _MARGIN * max_size:
        raise GridTooLargeError(next_fast_len(predicted), max_size)
    return predicted


def law_shape(dist: LossDistribution, tau: float) -> tuple[float, float]:
    """Width of the discretization window of ``dist`` for tail budget ``tau`` and the
    standard deviation of its 2,048-point coarse lattice (the inputs of the multi-level
    planner's cost model; no grid is allocated)."""
    a, b = window(dist, tau)
    width = b - a
    coarse_h = max(width / _COARSE_POINTS, 1e-12)
    pmf = discretize(dist, coarse_h, tau, shift_bound=False).pmf.trimmed()   # its spread
    pts, logp = pmf.two_point_blocks()
    if pts.size == 0:
        return width, 0.0
    return width, math.sqrt(block_moments(pts, logp)[1])


def composed_width(pmfs: Sequence[LatticePMF], n_max: int, tail: float = 1e-17):
    """``width(n)``: the Chernoff window (loss units) of the ``n``-fold composition of
    the widest of ``pmfs`` (coarse lattices), from evaluations at ``n = 4^e`` up to
    ``n_max`` interpolated linearly in ``log2 n`` (for the multi-level planner's cost
    model).  Each law's log-MGF is evaluated once, on a grid of ``lambda`` wide enough
    for every ``n`` (the ``n``-fold log-MGF is ``n`` times it)."""
    log_tail = math.log(tail)
    ns = []
    for e in range(0, 64, 2):
        ns.append(2 ** e)
        if ns[-1] > 2 * n_max:
            break
    table = [0.0] * len(ns)
    for pmf in pmfs:
        pts, logp = pmf.two_point_blocks()
        if pts.size == 0:
            continue
        mean, var = block_moments(pts, logp)
        sd = max(math.sqrt(var), pmf.h)
        lo_support, hi_support = float(pts.min()), float(pts.max())
        lam = np.geomspace(1e-3 / (sd * math.sqrt(ns[-1])), 1e3 / sd, 96)
        log_m_pos = _logsumexp_rows(logp, lam, pts)
        log_m_neg = _logsumexp_rows(logp, -lam, pts)
        for i, n in enumerate(ns):
            with np.errstate(invalid="ignore"):
                upper = float(np.min((n * log_m_pos - log_tail) / lam))
                lower = float(-np.min((n * log_m_neg - log_tail) / lam))
            upper = min(max(upper, n * mean), n * hi_support)
            lower = max(min(lower, n * mean), n * lo_support)
            table[i] = max(table[i], upper - lower + 2 * pmf.h)
    table.append(2.0 * table[-1] - table[-2] if len(table) > 1 else table[-1])

    def width(n: float) -> float:
        x = 0.5 * math.log2(max(n, 1))
        i = min(int(x), len(table) - 2)
        return table[i] + (x - i) * (table[i + 1] - table[i])

    return width


__all__ = ["window", "window_points", "check_composition", "law_shape", "composed_width"]
