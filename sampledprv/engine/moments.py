r"""First moments of a law's continuous part over cells, with a bound on their error.

The mean-preserving discretization (:mod:`sampledprv.engine.discretize`) and the
randomized rounding of the tail cells (:mod:`sampledprv.engine.core_tail`) need, for a
cell :math:`[a, b]` with midpoint :math:`c`, the first moment
:math:`M = \int_a^b (y - c)\,dF(y)`; the law only offers its CDF.  With the half-cell
masses :math:`m_-, m_+` and :math:`D = m_+ - m_-`, Simpson's rule gives
:math:`\hat M = \tfrac{w}{3} D` (``w = b - a``).

**Bracket.** Where the density is monotone on the cell, :math:`F` is convex or concave
there, so the midpoint rule and the two-panel trapezoid rule bracket
:math:`\int_a^b F`; since :math:`M = \tfrac w2 (F(a) + F(b)) - \int_a^b F`, the moment
lies between :math:`\tfrac w4 D` and :math:`\tfrac w2 D`, and
:math:`|M - \hat M| \le \tfrac w6 |D|`.

**Turning cells.** A cell holding a turning point of the density (a local extremum, a
jump that reverses the direction) is only bounded by
:math:`M \in [-\tfrac w2 m_-, \tfrac w2 m_+]`, i.e. :math:`|M - \hat M| \le \tfrac w3 (m_- + m_+)`.
Average densities over consecutive intervals of a monotone density are monotone, so a
turning point lies in a cell within one cell of a local extremum (ties included) of the
sequence of half-cell average densities; those cells, and the first and last cell of a
run, are the *turning candidates*.

**Assumption** (stated in the design notes, "Coupling bound"): the density of the
continuous part is piecewise monotone, with monotone pieces longer than a cell, so
that every turning point is seen by the half-cell sequence.  Every family's law in
``tests/test_discretize_mean.py`` is checked against references with 64 sub-cells.

**Round-off.** Each half-cell mass is a difference of two CDF (or survival-function)
values with relative error at most ``cdf_error(dist)`` (the law's ``cdf_ulps`` ulps of 1);
the moment estimate and the bracket change
by at most ``w`` times the sum of those errors.
"""

from __future__ import annotations

import numpy as np

from ..core.law import LossDistribution

def cdf_error(dist: LossDistribution) -> float:
    """Relative accuracy of ``dist``'s CDF and survival-function values: its declared
    ``cdf_ulps`` times ``2^-52`` (8 for the Gaussian family, measured at most 5; 32
    for the Generalized Gaussian, measured at most 15; ``tests/test_law_accuracy.py``).
    Until the fifteenth round one constant of 4 ulps served every law."""
    return float(dist.cdf_ulps) * float(np.finfo(np.float64).eps)


def interior_extrema(seq: np.ndarray) -> np.ndarray:
    """Positions ``1 .. len(seq) - 2`` where ``seq`` has a local extremum, ties
    included (the differences on both sides do not have one strict sign)."""
    d = np.diff(seq)
    return np.flatnonzero(d[:-1] * d[1:] <= 0.0) + 1


def with_neighbours(cells: np.ndarray) -> np.ndarray:
    """The boolean mask ``cells`` widened by one cell on each side."""
    out = cells.copy()
    out[1:] |= cells[:-1]
    out[:-1] |= cells[1:]
    return out


def subdivisions(budget: int, cells: int, least: int, most: int) -> int:
    """Sub-cells per cell so that ``cells`` of them stay within ``budget`` sub-cells,
    between ``least`` and ``most``."""
    return int(min(most, max(least, budget // max(1, cells))))


def turning_candidates(density: np.ndarray) -> np.ndarray:
    """Boolean mask over *cells* (pairs of consecutive half cells of ``density``, the
    half cells' average densities in order): True where a turning point of a piecewise
    monotone density may lie (see the module docstring)."""
    flag_half = np.zeros(density.size, dtype=bool)
    flag_half[0] = flag_half[-1] = True
    flag_half[interior_extrema(density)] = True
    return with_neighbours(flag_half.reshape(-1, 2).any(axis=1))


def cell_moments(dist: LossDistribution, lo: np.ndarray, hi: np.ndarray, sub: int,
                 upper: bool, turning: str
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    r"""Masses, first moments about the midpoints, and moment error bounds of the cells
    ``[lo_i, hi_i]``, each computed on ``sub`` equal sub-cells (Simpson on each sub-cell,
    the bracket or turning bound on each, summed).

    ``upper`` takes survival-function differences (accurate in the upper tail), else
    CDF differences.  ``turning`` says where the density may turn: ``"run"`` when the
    cells follow each other in order (``hi_i = lo_{i+1}``; candidates found on the whole
    run of sub-cells), ``"cell"`` for separate cells (candidates in each cell apart, its
    end sub-cells always among them), ``"none"`` for cells known to hold no turning
    point (the density is monotone on each).
    Returns ``(mass, moment, bound, mass_error)``, ``mass_error`` bounding the sum of the
    masses' rounding (as :func:`~sampledprv.engine.discretize.discretize` counts it)."""
    lo = np.asarray(lo, dtype=np.float64)
    hi = np.asarray(hi, dtype=np.float64)
    n = lo.size
    if n == 0:
        z = np.zeros(0)
        return z, z, z, 0.0
    width = hi - lo
    frac = np.arange(2 * sub + 1) / (2.0 * sub)
    edges = lo[:, None] + width[:, None] * frac[None, :]
    edges[:, -1] = hi
    if upper:
        vals = dist.sf_cont(edges.ravel()).reshape(n, 2 * sub + 1)
        halves = vals[:, :-1] - vals[:, 1:]
    else:
        vals = dist.cdf_cont(edges.ravel()).reshape(n, 2 * sub + 1)
        halves = vals[:, 1:] - vals[:, :-1]
    clipped = float(-halves[halves < 0].sum())
    np.clip(halves, 0.0, None, out=halves)
    m_lo, m_up = halves[:, 0::2], halves[:, 1::2]
    p_sub = m_lo + m_up
    ws = width / sub
    centre_offset = ws[:, None] * (np.arange(sub)[None, :] + 0.5) - 0.5 * width[:, None]
    diff = m_up - m_lo
    moment = ((ws[:, None] / 3.0) * diff + p_sub * centre_offset).sum(axis=1)
    bracket = (ws / 6.0) * np.abs(diff).sum(axis=1)
    density = halves / (0.5 * ws[:, None])
    if turning == "run":
        flags = turning_candidates(density.ravel()).reshape(n, sub)
    elif turning == "cell":
        flags = np.stack([turning_candidates(row) for row in density])
    elif turning == "none":
        flags = np.zeros((n, sub), dtype=bool)
    else:
        raise ValueError(f"turning must be 'run', 'cell' or 'none', got {turning!r}")
    crude = (ws / 3.0) * np.where(flags, p_sub, 0.0).sum(axis=1)
    ulps = cdf_error(dist)
    rounding = width * 2.0 * ulps * vals.sum(axis=1)
    mass_error = 2.0 * ulps * float(vals.max()) + clipped
    return p_sub.sum(axis=1), moment, bracket + crude + rounding, mass_error


__all__ = ["cell_moments", "interior_extrema", "subdivisions", "turning_candidates",
           "with_neighbours"]
