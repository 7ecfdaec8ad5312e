r"""Empirical privacy random variables: histograms of privacy-loss samples.

An :class:`EmpiricalPRV` holds, for each direction, a
:class:`~sampledprv.sampled.histograms.histogram.LossHistogram` of ``n`` i.i.d. draws of
the privacy loss ``Y``.  Like the histograms, two of them on identical windows merge
with ``+`` (the histogram of the union of the runs).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

import numpy as np

from ...engine import LatticePMF
from .histogram import LossHistogram

__all__ = ["EmpiricalPRV", "estimate_pmf"]


def estimate_pmf(hist: LossHistogram) -> LatticePMF:
    """Point estimate of the PRV: bin midpoints with the empirical frequencies.

    Draws below (above) the window are placed half a bin below (above) it; ``+inf``
    draws form the atom at infinity; ``-inf`` draws are dropped (they add nothing to
    delta).  Midpoints preserve the mean up to :math:`O(h^2)` for smooth laws.
    """
    n = float(hist.n)
    c = np.asarray(hist.counts, dtype=np.float64)
    probs = np.concatenate([[hist.below], c, [hist.above]]) / n
    return LatticePMF(probs, 0, hist.h, shift=hist.lo - 0.5 * hist.h,
                      p_inf=hist.pos_inf / n)


def _moments(hist: LossHistogram) -> tuple[float, float]:
    c = np.asarray(hist.counts, dtype=np.float64)
    m = c.sum()
    if m <= 0:
        return hist.lo, hist.h
    x = hist.lo + (np.arange(c.size) + 0.5) * hist.h
    mean = float(np.dot(c, x) / m)
    return mean, float(math.sqrt(max(np.dot(c, (x - mean) ** 2) / m, 0.0)))


@dataclass(frozen=True)
class EmpiricalPRV:
    r"""Histograms of privacy-loss samples in both directions.

    Attributes
    ----------
    remove : LossHistogram
        Draws of :math:`\log p/q` under ``P``.
    add : LossHistogram or None
        Draws of :math:`\log q/p` under ``Q``; ``None`` for a symmetric mechanism (the add
        PRV has the law of the remove PRV).
    name : str
        What was sampled.

    ``a + b`` merges two runs on identical windows (the histogram of the union).
    """

    remove: LossHistogram
    add: Optional[LossHistogram] = None
    name: str = ""

    @property
    def symmetric(self) -> bool:
        return self.add is None

    @property
    def n(self) -> int:
        """Number of draws per direction (the smaller one if they differ)."""
        return min(self.remove.n, self.add.n) if self.add is not None else self.remove.n

    @property
    def window(self) -> tuple[float, float]:
        """``(lo, hi)`` of the remove histogram."""
        return self.remove.lo, self.remove.lo + self.remove.h * len(self.remove.counts)

    def histogram(self, direction: str) -> LossHistogram:
        """The histogram of ``direction`` ("remove" or "add")."""
        if direction == "remove" or (direction == "add" and self.add is None):
            return self.remove
        if direction == "add":
            return self.add  # type: ignore[return-value]
        raise ValueError(f"direction must be 'remove' or 'add', got {direction!r}")

    def directions(self) -> tuple[str, ...]:
        return ("remove",) if self.symmetric else ("remove", "add")

    def __add__(self, other: "EmpiricalPRV") -> "EmpiricalPRV":
        if not isinstance(other, EmpiricalPRV):
            return NotImplemented
        if self.symmetric != other.symmetric:
            raise ValueError("cannot merge a symmetric EmpiricalPRV with an asymmetric one")
        add = None if self.add is None else self.add + other.add  # type: ignore[operator]
        return EmpiricalPRV(self.remove + other.remove, add, self.name or other.name)

    def moments(self, direction: str) -> tuple[float, float]:
        """Mean and standard deviation of the in-window draws (bin midpoints)."""
        return _moments(self.histogram(direction))

    def summary(self) -> str:
        parts = []
        for d in self.directions():
            hh = self.histogram(d)
            parts.append(f"{d}: n={hh.n:,}, window=[{hh.lo:.4g}, {hh.lo + hh.h * len(hh.counts):.4g}),"
                         f" h={hh.h:.3g}, below={hh.below}, above={hh.above}, +inf={hh.pos_inf}")
        return f"EmpiricalPRV({self.name}; " + "; ".join(parts) + ")"
