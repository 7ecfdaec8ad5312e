"""Bin privacy losses on a float64 lattice (shared by the kernels and the numpy path).

Bin ``j`` of a window ``(lo, h, bins)`` holds ``lo + j*h <= y < lo + (j+1)*h`` with
the edges computed in float64 exactly as written; losses outside the window and
non-finite ones go to five extra counters (indices below).
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["bin_losses"]

# extra counters: below, above, +inf, -inf, nan
_BELOW, _ABOVE, _POS, _NEG, _NAN = 0, 1, 2, 3, 4


@njit(cache=True, error_model="numpy")
def _bin_index(y, k, lo, h, inv_h, bins, idx):  # pragma: no cover - numba
    """Bin codes of ``y[:k]`` (straight-line, vectorized by LLVM).

    ``idx[i] = j >= 0`` for ``lo + j*h <= y < lo + (j+1)*h`` (float64 edges as
    written); negative codes ``-1 - c`` for the extra counters ``c`` (below, above,
    +inf, -inf, NaN).  ``floor((y - lo)/h)`` is within one bin of the answer when the
    window satisfies the check of ``_check_window``, so one correction step each way
    suffices.
    """
    top = bins - 1
    hi = lo + bins * h
    for i in range(k):
        v = y[i]
        jf = np.floor((v - lo) * inv_h)
        jf = jf if jf >= 0.0 else 0.0          # also maps NaN to 0
        jf = jf if jf <= top else float(top)
        j = np.int64(jf)
        j -= np.int64(v < lo + j * h)
        j += np.int64(v >= lo + (j + 1) * h)
        j = -1 - _BELOW if v < lo else j
        j = -1 - _NEG if v == -np.inf else j
        j = -1 - _ABOVE if v >= hi else j
        j = -1 - _POS if v == np.inf else j
        j = -1 - _NAN if v != v else j
        idx[i] = j


@njit(cache=True)
def _count(idx, k, hist, t, extra) -> int:  # pragma: no cover - numba
    """Add the codes ``idx[:k]`` to ``hist[t]`` / ``extra[t]``; index of the first NaN
    (or -1)."""
    first_nan = -1
    for i in range(k):
        j = idx[i]
        if j >= 0:
            hist[t, j] += 1
        else:
            extra[t, -1 - j] += 1
            if j == -1 - _NAN and first_nan < 0:
                first_nan = i
    return first_nan


@njit(cache=True)
def bin_losses(y: np.ndarray, lo: float, h: float, hist: np.ndarray,
               extra: np.ndarray) -> int:  # pragma: no cover - numba
    """Add the losses ``y`` to ``hist[0]`` / ``extra[0]`` (same binning as the kernels);
    return the index of the first NaN (or -1)."""
    k = y.shape[0]
    idx = np.empty(k, dtype=np.int64)
    _bin_index(y, k, lo, h, 1.0 / h, hist.shape[1], idx)
    return _count(idx, k, hist, 0, extra)
