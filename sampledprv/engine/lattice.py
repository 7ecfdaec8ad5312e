r"""Distributions on a regular lattice, the common currency of the engine.

A :class:`LatticePMF` is a *sub*-probability measure on the points
:math:`x_j = (\mathrm{offset} + j) h + \mathrm{shift}`, ``j = 0 .. len(probs)-1``,
plus an atom ``p_inf`` at :math:`+\infty`.  Whatever mass is missing
(``1 - probs.sum() - p_inf``) has been set aside by the caller (mass at
:math:`-\infty`, or an out-of-window event whose probability the caller bounds),
and contributes nothing to :math:`\delta`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import logsumexp


@dataclass(frozen=True, eq=False)
class LatticePMF:
    """Sub-probability mass function on ``(offset + j) * h + shift`` plus mass at +inf.

    Attributes
    ----------
    probs : numpy.ndarray
        Non-negative float64 masses.
    offset : int
        Lattice index of ``probs[0]``.
    h : float
        Mesh (> 0).
    shift : float
        Constant added to every finite point (the mean-preserving shift; it is not a
        lattice multiple, and shifts add up under composition).
    p_inf : float
        Mass at ``+inf`` (privacy loss infinite: the output is impossible under Q).
    """

    probs: np.ndarray
    offset: int
    h: float
    shift: float = 0.0
    p_inf: float = 0.0

    def __post_init__(self) -> None:
        probs = np.ascontiguousarray(self.probs, dtype=np.float64)
        if probs.ndim != 1 or probs.size == 0:
            raise ValueError("probs must be a non-empty 1-D array")
        if not np.all(np.isfinite(probs)) or np.any(probs < 0):
            raise ValueError("probs must be finite and non-negative")
        if not (self.h > 0 and np.isfinite(self.h)):
            raise ValueError(f"h must be positive and finite, got {self.h}")
        if not 0.0 <= self.p_inf <= 1.0:
            raise ValueError(f"p_inf must lie in [0, 1], got {self.p_inf}")
        object.__setattr__(self, "probs", probs)
        object.__setattr__(self, "offset", int(self.offset))

    @property
    def finite_mass(self) -> float:
        """Total mass on finite lattice points."""
        return float(self.probs.sum())

    @property
    def values(self) -> np.ndarray:
        """The finite support points ``(offset + j) * h + shift``."""
        return (self.offset + np.arange(self.probs.size)) * self.h + self.shift

    def log_mgf_bound(self, lam: np.ndarray, max_points: int = 4096) -> np.ndarray:
        r"""Upper bound on ``log sum_j p_j exp(lam * (offset + j) * h)`` (finite part,
        *without* the shift) for each ``lam``.

        The pmf is coarsened to at most ``max_points`` blocks whose mass is moved to
        the block's right end for ``lam > 0`` and its left end for ``lam < 0``: this
        can only increase the MGF, so Chernoff bounds built on it stay valid, and it
        keeps the cost independent of the grid size."""
        lam = np.atleast_1d(np.asarray(lam, dtype=np.float64))
        n = self.probs.size
        block = max(1, -(-n // max_points))
        nb = -(-n // block)
        padded = np.zeros(nb * block)
        padded[:n] = self.probs
        mass = padded.reshape(nb, block).sum(axis=1)
        left = (self.offset + np.arange(nb) * block) * self.h
        right = left + (block - 1) * self.h
        keep = mass > 0
        if not keep.any():
            return np.full(lam.shape, -np.inf)
        logp, left, right = np.log(mass[keep]), left[keep], right[keep]
        x = np.where(lam[:, None] > 0, right[None, :], left[None, :])
        return logsumexp(logp[None, :] + lam[:, None] * x, axis=1)

    def trimmed(self) -> "LatticePMF":
        """Drop leading and trailing zero bins (same distribution)."""
        nz = np.flatnonzero(self.probs > 0)
        if nz.size == 0:
            return LatticePMF(np.zeros(1), self.offset, self.h, self.shift, self.p_inf)
        lo, hi = nz[0], nz[-1] + 1
        return LatticePMF(self.probs[lo:hi], self.offset + lo, self.h, self.shift, self.p_inf)
