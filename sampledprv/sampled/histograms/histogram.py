r"""The loss histogram: counts of privacy-loss draws on a window, and exact operations on it.

A :class:`LossHistogram` holds the counts of ``n`` i.i.d. draws of the privacy loss
``Y`` on the bins ``[lo + j h, lo + (j+1) h)``, plus the draws below and above the
window and at :math:`\pm\infty` (nothing is dropped).  Histograms are additive: the
histogram of the union of two independent runs on the same window is the sum of their
histograms (``+``), so shards and runs on separate machines merge exactly.
:func:`tail_counts` and :func:`coarsen` are exact integer operations on the counts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["LossHistogram", "tail_counts", "coarsen"]


@dataclass(frozen=True)
class LossHistogram:
    """Counts of ``n`` privacy-loss samples on the window ``[lo, lo + bins*h)``.

    Attributes
    ----------
    counts : numpy.ndarray
        ``int64``, shape ``(bins,)``; bin ``j`` counts losses ``y`` with
        ``lo + j*h <= y < lo + (j+1)*h`` (float64 edges as written).
    below, above : int
        Finite losses ``y < lo`` and ``y >= lo + bins*h``.
    pos_inf, neg_inf : int
        Losses equal to ``+inf`` / ``-inf`` (``-inf`` has probability zero under ``P``
        for a valid pair; counted anyway).
    n : int
        Total draws, ``counts.sum() + below + above + pos_inf + neg_inf``.
    lo, h : float
        Window start and bin width.
    """

    counts: np.ndarray
    below: int
    above: int
    pos_inf: int
    neg_inf: int
    n: int
    lo: float
    h: float

    @property
    def bins(self) -> int:
        """Number of bins."""
        return int(self.counts.shape[0])

    @property
    def hi(self) -> float:
        """End of the window, ``lo + bins*h``."""
        return self.lo + self.bins * self.h

    def __add__(self, other: "LossHistogram") -> "LossHistogram":
        """Histogram of the union of two independent runs (same ``lo``, ``h``, ``bins``)."""
        if not isinstance(other, LossHistogram):
            return NotImplemented
        if (other.lo != self.lo or other.h != self.h or other.bins != self.bins):
            raise ValueError(
                f"cannot merge histograms on different windows: (lo={self.lo}, h={self.h}, "
                f"bins={self.bins}) vs (lo={other.lo}, h={other.h}, bins={other.bins}); "
                "sample both with the same lo, h and bins")
        return LossHistogram(self.counts + other.counts, self.below + other.below,
                             self.above + other.above, self.pos_inf + other.pos_inf,
                             self.neg_inf + other.neg_inf, self.n + other.n, self.lo, self.h)


def tail_counts(hist: LossHistogram) -> np.ndarray:
    r"""``T[j] = #{draws with Y >= lo + j h}`` for ``j = 0..bins`` (``+inf`` included).

    ``T[0] = n - below - neg_inf`` and ``T[bins] = above + pos_inf``.
    """
    c = np.asarray(hist.counts, dtype=np.int64)
    t = np.empty(c.size + 1, dtype=np.int64)
    t[-1] = hist.above + hist.pos_inf
    t[:-1] = t[-1] + np.cumsum(c[::-1])[::-1]
    return t


def coarsen(hist: LossHistogram, factor: int) -> LossHistogram:
    """Merge groups of ``factor`` consecutive bins (from ``lo``; the last group is padded).

    The coarse edges are a subset of the fine ones, so every count is exact.
    """
    factor = int(factor)
    if factor < 1:
        raise ValueError(f"factor must be a positive integer, got {factor}")
    if factor == 1:
        return hist
    c = np.asarray(hist.counts, dtype=np.int64)
    # group sums without padding (memory proportional to the fine histogram, whatever
    # the factor)
    step = min(factor, max(c.size, 1))          # a factor beyond the size: one group
    merged = np.add.reduceat(c, np.arange(0, c.size, step)) if c.size else c
    return LossHistogram(merged, hist.below, hist.above,
                         hist.pos_inf, hist.neg_inf, hist.n, hist.lo, hist.h * factor)
