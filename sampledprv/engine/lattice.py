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
        # min and max reduce without temporaries (a NaN makes both NaN, and every
        # comparison with NaN fails): finite and non-negative iff min >= 0, max < inf
        if not (probs.min() >= 0.0 and probs.max() < np.inf):
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

    def two_point_blocks(self, max_points: int = 2048) -> tuple[np.ndarray, np.ndarray]:
        r"""A coarse law that dominates this one in convex order: ``(points, log_masses)``.

        The finite part (without the shift) is cut into at most ``max_points`` blocks;
        each block's mass is replaced by the two-point law on the block's end points with
        the same mass and mean.  For every convex function :math:`\phi` (in particular
        :math:`e^{\lambda x}` for either sign of :math:`\lambda`) the chord lies above
        :math:`\phi`, so MGFs of the coarse law are upper bounds, and because block means
        are kept they stay tight even raised to a large power."""
        n = self.probs.size
        block = max(1, -(-n // max_points))
        nb = -(-n // block)
        padded = np.zeros(nb * block)
        padded[:n] = self.probs
        blocks = padded.reshape(nb, block)
        mass = blocks.sum(axis=1)
        keep = mass > 0
        # sum p * (index in block); einsum's loop, not a (multi-threaded) BLAS call
        local = np.einsum("ij,j->i", blocks, np.arange(block, dtype=np.float64))
        safe = np.where(keep, mass, 1.0)
        w_right = np.clip(local / safe / max(block - 1, 1), 0.0, 1.0) if block > 1 \
            else np.zeros(nb)
        left = (self.offset + np.arange(nb) * block) * self.h
        right = left + (block - 1) * self.h
        pts = np.concatenate([left[keep], right[keep]])
        masses = np.concatenate([(mass * (1.0 - w_right))[keep], (mass * w_right)[keep]])
        live = masses > 0
        return pts[live], np.log(masses[live])

    def trimmed(self) -> "LatticePMF":
        """Drop leading and trailing zero bins (same distribution)."""
        nz = np.flatnonzero(self.probs > 0)
        if nz.size == 0:
            return LatticePMF(np.zeros(1), self.offset, self.h, self.shift, self.p_inf)
        lo, hi = nz[0], nz[-1] + 1
        return LatticePMF(self.probs[lo:hi], self.offset + lo, self.h, self.shift, self.p_inf)


def block_moments(pts: np.ndarray, logp: np.ndarray) -> tuple[float, float]:
    """Mean and variance of the coarse law ``(pts, exp(logp))`` of
    :meth:`LatticePMF.two_point_blocks` (normalized; ``pts`` not empty)."""
    w = np.exp(logp - logp.max())
    total = w.sum()
    mean = float(np.dot(w, pts) / total)
    return mean, float(np.dot(w, (pts - mean) ** 2) / total)


#: columns per pass of :func:`_logsumexp_rows` (bounds its temporary to 37 x 2^15 doubles)
_LSE_CHUNK = 2**15


def _logsumexp_rows(logp: np.ndarray, lam: np.ndarray, pts: np.ndarray) -> np.ndarray:
    """``log sum_j exp(logp_j + lam_i pts_j)`` for every ``i`` (numpy, one pass over
    column chunks: each chunk is summed against its own row maxima, and the chunk sums
    are rescaled to the running maxima as they are added)."""
    logp = np.asarray(logp, dtype=np.float64)
    lam = np.asarray(lam, dtype=np.float64)
    pts = np.asarray(pts, dtype=np.float64)
    m = np.full(lam.size, -np.inf)
    acc = np.zeros(lam.size)
    for a in range(0, pts.size, _LSE_CHUNK):
        blk = logp[None, a:a + _LSE_CHUNK] + lam[:, None] * pts[None, a:a + _LSE_CHUNK]
        mc = blk.max(axis=1)
        new = np.maximum(m, mc)
        ref = np.where(np.isfinite(new), new, 0.0)
        blk -= np.where(np.isfinite(mc), mc, 0.0)[:, None]
        np.exp(blk, out=blk)
        with np.errstate(invalid="ignore"):
            acc = acc * np.exp(np.where(np.isfinite(m), m - ref, -np.inf)) + \
                blk.sum(axis=1) * np.exp(np.where(np.isfinite(mc), mc - ref, -np.inf))
        m = new
    with np.errstate(divide="ignore"):
        return np.where(np.isfinite(m), m + np.log(acc), m)
