r"""The sampling window: choosing ``(lo, h, bins)`` for a run, and checking one.

Bins.  Bin ``j`` holds the losses ``y`` with ``lo + j*h <= y < lo + (j+1)*h``, the
edges computed in float64 exactly as written; the kernels correct the index after
``floor((y - lo)/h)`` by one step, which is exact when
``max(|lo|, |lo + bins*h|) <= 2**40 * h`` (:func:`check_window`).

:func:`choose_window` places the window where an ``n``-draw run puts its draws: from
the analytic tail when :mod:`sampledprv.mechanisms.relations` knows the mechanism, else from a pilot
sample of the numpy path.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from . import _numpy_histogram as _np_hist
from ...mechanisms.relations import privacy_loss

__all__ = ["choose_window", "check_window"]

_PILOT = 1 << 16   #: most draws of the pilot sample when the law is not known
_PILOT_MIN = 1 << 13   #: fewest draws of the pilot sample
_PILOT_PER_DRAW = 4    #: pilot draws per draw of the run, between the two
_MAX_EDGE_RATIO = float(2 ** 40)  #: max(|lo|, |hi|) / h (exact one-step bin correction)


@functools.lru_cache(maxsize=256)
def _analytic_window(mechanism: object, direction: str, tail: float) -> tuple:
    try:
        law = privacy_loss(mechanism, direction)
    except TypeError:  # not an analytic spec
        return None, None
    lo, hi = float(law.lower_point(tail)), float(law.upper_point(tail))
    return (lo, hi) if math.isfinite(lo) and math.isfinite(hi) else (None, None)


def choose_window(mechanism: object, direction: str, n: int, bins: int,
                  rng: np.random.Generator,
                  loss_range: tuple[float, float] = (-math.inf, math.inf)
                  ) -> tuple[float, float, int]:
    r"""``(lo, h, bins)`` covering the draws of an ``n``-sample run.

    The upper/lower ends are where about ``0.01/n`` of the mass lies beyond: from the
    analytic law when :mod:`sampledprv.mechanisms.relations` knows the mechanism, else
    extrapolated from a pilot sample of :math:`\min(2^{16}, \max(2^{13}, 4n))` draws
    (a run of a few thousand draws does not pay for a pilot many times its size) by an
    exponential tail through the pilot's 0.01 and ``10/pilot`` quantiles (conservative
    for tails lighter than exponential).  The pilot's generator is not the run's, so the
    window does not depend on the run's draws.
    The ends are clipped to a declared ``loss_range`` (the window then ends above its
    upper end, so every draw above the window is outside the range).
    ``h`` is a power of two and ``lo`` a multiple of ``h``.
    """
    tail = 0.01 / n
    try:
        lo, hi = _analytic_window(mechanism, direction, tail)
    except TypeError:  # unhashable user object: no cached analytic window
        lo = hi = None
    if lo is None:
        pilot = min(_PILOT, max(_PILOT_MIN, _PILOT_PER_DRAW * int(n)))
        y = _np_hist.numpy_loss_sampler(mechanism, direction)(rng, pilot)
        y = np.sort(y[np.isfinite(y)])
        if y.size == 0:
            lo, hi = -1.0, 1.0
        else:
            p1, p2 = 0.01, 10.0 / y.size
            qs = np.quantile(y, [p2, p1, 1 - p1, 1 - p2])
            fold = math.log(p1 / p2)
            reach = math.log(p2 / tail) / fold
            lo = min(y[0], qs[0] - (qs[1] - qs[0]) * reach)
            hi = max(y[-1], qs[3] + (qs[3] - qs[2]) * reach)
    span = max(hi - lo, 1e-6 * max(abs(lo), abs(hi), 1.0), 1e-9)
    lo, hi = lo - 0.02 * span, hi + 0.02 * span
    r_lo, r_hi = loss_range
    if r_lo < r_hi:
        lo, hi = max(lo, r_lo), min(hi, r_hi)
        if not lo < hi:           # the draws' window misses the range: use the range
            lo, hi = (r_lo, r_hi) if math.isfinite(r_lo) and math.isfinite(r_hi) \
                else (min(lo, hi), max(lo, hi) + 1e-9)
    h = 2.0 ** math.ceil(math.log2((hi - lo) / (bins - 2)))
    lo = math.floor(lo / h) * h
    nb = int(math.ceil((hi - lo) / h)) + 1
    return lo, h, nb


def check_window(n: int, lo: float, h: float, bins: int) -> tuple[int, float, float, int]:
    """Validate ``n`` draws on the window ``[lo, lo + bins*h)``: ``(n, lo, h, bins)`` as
    ``int, float, float, int``, or a :class:`ValueError` naming the argument."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"n must be an integer >= 0, got {n!r}")
    lo, h = float(lo), float(h)
    if not math.isfinite(lo):
        raise ValueError(f"lo must be finite, got {lo!r}")
    if not (h > 0 and math.isfinite(h)):
        raise ValueError(f"h (bin width) must be a positive finite number, got {h!r}")
    if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)) or bins < 1:
        raise ValueError(f"bins must be an integer >= 1, got {bins!r}")
    if not math.isfinite(lo + bins * h):
        raise ValueError(f"the window end lo + bins*h = {lo + bins * h} is not finite")
    if max(abs(lo), abs(lo + bins * h)) > _MAX_EDGE_RATIO * h:
        raise ValueError(
            f"bin width h={h!r} is too small for a window reaching "
            f"{max(abs(lo), abs(lo + bins * h))!r}: float64 bin edges need "
            f"max(|lo|, |lo + bins*h|) <= 2**40 * h; use a larger h or a window closer to 0")
    return int(n), lo, h, int(bins)
