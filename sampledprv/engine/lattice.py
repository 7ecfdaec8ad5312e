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
        *without* the shift) for each ``lam`` (either sign).

        The pmf is cut into at most ``max_points`` blocks; each block's mass is replaced by
        the two-point law on the block's end points with the same mass and mean.  Since
        :math:`e^{\lambda x}` is convex, the chord lies above it, so this can only increase
        the MGF (Chernoff bounds built on it stay valid); and because block means are
        kept the bound stays tight even raised to a large power (an error that only moved
        mass by a block width would compound ``count`` times)."""
        lam = np.atleast_1d(np.asarray(lam, dtype=np.float64))
        n = self.probs.size
        block = max(1, -(-n // max_points))
        nb = -(-n // block)
        padded = np.zeros(nb * block)
        padded[:n] = self.probs
        blocks = padded.reshape(nb, block)
        mass = blocks.sum(axis=1)
        keep = mass > 0
        if not keep.any():
            return np.full(lam.shape, -np.inf)
        local = blocks @ np.arange(block, dtype=np.float64)      # sum p * (index in block)
        with np.errstate(invalid="ignore", divide="ignore"):
            frac = np.where(keep, local / np.where(keep, mass, 1.0), 0.0)
        width = max(block - 1, 1)
        w_right = np.clip(frac / width, 0.0, 1.0) if block > 1 else np.zeros(nb)
        left = (self.offset + np.arange(nb) * block) * self.h
        right = left + (block - 1) * self.h
        m_left = (mass * (1.0 - w_right))[keep]
        m_right = (mass * w_right)[keep]
        pts = np.concatenate([left[keep], right[keep]])
        with np.errstate(divide="ignore"):
            logp = np.log(np.concatenate([m_left, m_right]))
        live = np.isfinite(logp)
        pts, logp = pts[live], logp[live]
        return logsumexp(logp[None, :] + lam[:, None] * pts[None, :], axis=1)

    def trimmed(self) -> "LatticePMF":
        """Drop leading and trailing zero bins (same distribution)."""
        nz = np.flatnonzero(self.probs > 0)
        if nz.size == 0:
            return LatticePMF(np.zeros(1), self.offset, self.h, self.shift, self.p_inf)
        lo, hi = nz[0], nz[-1] + 1
        return LatticePMF(self.probs[lo:hi], self.offset + lo, self.h, self.shift, self.p_inf)
