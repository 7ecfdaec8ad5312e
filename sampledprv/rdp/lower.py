r"""Certified **lower** bounds on Renyi divergences: from an exact loss law, and from samples.

Both bound the moment :math:`M_\alpha = E_Y[e^{(\alpha-1)Y}]` of a privacy loss ``Y`` in
one direction (``remove``: :math:`Y = \log p/q` under ``P``; ``add``: :math:`Y = \log q/p`
under ``Q``), so that :math:`D_\alpha = \log M_\alpha / (\alpha - 1)` in that direction
(:math:`M_\alpha = E_Q[(P/Q)^\alpha]` for the remove direction).

* :func:`pair_renyi_lower` -- from the exact laws of the loss under ``P`` and under ``Q``
  (:func:`sampledprv.mechanisms.laws.loss_pair`: every built-in spec,
  :class:`~sampledprv.FinitePair` included).  The outcomes are grouped into cells by
  their loss (a fine grid, every atom its own cell); the Renyi divergence of the
  quantized pair, :math:`\frac{1}{\alpha-1}\log\sum_i m_i^\alpha n_i^{1-\alpha}`
  with :math:`m_i, n_i` the cells' masses under ``P`` and ``Q``, is a lower bound by the
  data-processing inequality, for any partition.  Cells are dropped (only lowering it)
  where masses cannot be computed accurately, and every term is rounded down for the
  relative error of its masses.  Exact for atomic laws up to that rounding.
* :func:`sampled_moment_lower` -- from i.i.d. samples of ``Y``: for a constant ``c``
  fixed before sampling, :math:`Z = \min(e^{(\alpha-1)Y}, c)/c \in [0, 1]` has
  :math:`E Z \le M_\alpha / c` however heavy the tail of :math:`e^{(\alpha-1)Y}` is, and
  the empirical Bernstein bound (Maurer & Pontil 2009, Thm 4, applied to ``1 - Z``)

  .. math:: E Z \ \ge\ \bar Z_n - \sqrt{2 V_n \log(2/\beta)/n} - \frac{7\log(2/\beta)}{3(n-1)}

  holds with probability at least :math:`1-\beta` (:math:`V_n` the unbiased sample
  variance).  A few values of ``c`` (multiples of a reference moment fixed in advance)
  are tried with a union bound, and the largest lower bound is kept.

Derivations: design notes, "Claim checks".
"""

from __future__ import annotations

import math
from typing import Sequence, Tuple

import numpy as np

from ..core.law import LossDistribution

__all__ = ["atomic_log_moment_upper", "pair_log_moment_lower", "pair_renyi_lower", "sampled_moment_lower",
           "CUT_FACTORS"]

#: cells of the uniform part of the partition
_GRID = 1 << 14
#: truncation levels tried by the sampled bound, as multiples of the reference moment
CUT_FACTORS = (1.5, 4.0, 16.0, 256.0, 65536.0)


def _range(law: LossDistribution, t: float) -> Tuple[float, float]:
    r"""An interval of losses outside which the tilted mass :math:`e^{ty}\,dF` of the
    finite part of ``law`` is negligible (only the tightness depends on it)."""
    lo, hi = law._finite_range()
    if not lo <= hi:
        return 0.0, 0.0

    def sf(y: float) -> float:
        with np.errstate(all="ignore"):
            return max(0.0, float(law.sf(np.array(y))) - law.p_pos_inf)

    def cdf(y: float) -> float:
        with np.errstate(all="ignore"):
            return max(0.0, float(law.cdf(np.array(y))) - law.p_neg_inf)

    mass = law.finite_mass
    a = lo if math.isfinite(lo) else -1.0
    if not math.isfinite(lo):
        for _ in range(80):
            if cdf(a) <= mass * 1e-16:
                break
            a = 2.0 * a
    b = hi if math.isfinite(hi) else max(1.0, a + 1.0)
    if not math.isfinite(hi):
        best = -math.inf
        for _ in range(80):
            s = sf(b)
            term = math.log(s) + t * b if s > 0 else -math.inf
            best = max(best, term)
            if term < best - 40.0:
                break
            b = 2.0 * b if b > 0 else b + 1.0
    return a, b


def _cell_masses(law: LossDistribution, edges: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """Masses of the finite part of ``law`` in the cells ``(-inf, e_0], (e_0, e_1], ...,
    (e_N, inf)`` and a bound on each one's relative floating-point error: differences of
    the CDF below the median and of the survival function above it (each accurate in its
    own tail), error ``1e-12 * (endpoint value / cell mass)`` (cancellation)."""
    with np.errstate(all="ignore"):
        c = np.clip(law.cdf(edges) - law.p_neg_inf, 0.0, None)
        s = np.clip(law.sf(edges) - law.p_pos_inf, 0.0, None)
    by_cdf = np.diff(np.concatenate([[0.0], c]))                 # cells up to e_N
    by_sf = -np.diff(np.concatenate([s, [0.0]]))                  # cells from e_0 on
    lower_half = np.concatenate([c <= s, [False]])
    m = np.where(lower_half, np.concatenate([by_cdf, [0.0]]), np.concatenate([[0.0], by_sf]))
    m[0] = c[0]
    m[-1] = s[-1]
    ref = np.where(lower_half, np.concatenate([c, [0.0]]), np.concatenate([[0.0], s]))
    ref[0], ref[-1] = c[0], s[-1]
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(m > 0, 1e-12 * np.maximum(ref / m, 1.0), np.inf)
    m = np.clip(m, 0.0, None)
    rel = rel + law.mass_rel_error
    return m, rel


def pair_log_moment_lower(law_p: LossDistribution, law_q: LossDistribution,
                          order: float, cells: int = _GRID) -> float:
    r"""Lower bound on :math:`\log \sum_o p(o)^\alpha q(o)^{1-\alpha}
    = (\alpha - 1) D_\alpha(P\|Q)`, from the laws of :math:`\ell = \log p/q` under
    ``P`` (``law_p``) and under ``Q`` (``law_q``).

    The outcomes are grouped by loss into cells (a uniform grid over the range that
    carries the sum, plus every atom of either law as an edge); the quantized pair's
    divergence is a lower bound by the data-processing inequality, and each cell's term
    :math:`m^\alpha n^{1-\alpha}` is rounded down for the relative error of its masses
    (:math:`m^\alpha n^{1-\alpha}` grows with ``m`` and falls with ``n``).  Exact for
    atomic laws (one atom per cell), up to that rounding."""
    a = float(order)
    if law_p.p_pos_inf > 0:
        return math.inf
    lo, hi = _range(law_p, a - 1.0)
    atoms = np.concatenate([law_p.atom_values, law_q.atom_values])
    atoms = atoms[np.isfinite(atoms)]
    edges = np.unique(np.concatenate([np.linspace(lo, hi, cells + 1) if hi > lo else [lo],
                                      atoms]))
    m, rm = _cell_masses(law_p, edges)
    n, rn = _cell_masses(law_q, edges)
    keep = (m > 0) & np.isfinite(rm)
    if np.any(keep & (n <= 0)):
        # P-mass on a cell where Q has none (a loss of +inf inside the finite part cannot
        # happen; n underflowed): no finite lower bound is lost by skipping such cells
        keep &= n > 0
    keep &= np.isfinite(rn) & (rm < 1e-3) & (rn < 1e-3)
    if not keep.any():
        return -math.inf
    m, n, rm, rn = m[keep], n[keep], rm[keep], rn[keep]
    terms = (a * np.log(m) + (1.0 - a) * np.log(n)
             + a * np.log1p(-rm) + (1.0 - a) * np.log1p(rn) - 1e-13 * a)
    top = float(terms.max())
    return top + math.log(math.fsum(np.exp(terms - top))) - 1e-12 * (1.0 + abs(top))


def atomic_log_moment_upper(law_p: LossDistribution, law_q: LossDistribution,
                            order: float) -> float:
    r"""Upper bound on :math:`\log\sum_o p(o)^\alpha q(o)^{1-\alpha}` for purely atomic
    laws (no continuous part, no truncation defect): every atom is its own cell, so the
    quantized sum is the exact one; each term is rounded *up* for the relative error of
    its masses.  ``inf`` when some cell's masses are not accurate to 1e-3."""
    a = float(order)
    for law in (law_p, law_q):
        if law.cont_mass > 0 or law.mass_defect > 0:
            raise ValueError("atomic_log_moment_upper needs purely atomic laws")
    if law_p.p_pos_inf > 0:
        return math.inf
    atoms = np.concatenate([law_p.atom_values, law_q.atom_values])
    edges = np.unique(atoms[np.isfinite(atoms)])
    if edges.size == 0:
        return -math.inf
    m, rm = _cell_masses(law_p, edges)
    n, rn = _cell_masses(law_q, edges)
    live = m > 0
    if np.any(live & ((n <= 0) | ~(rm < 1e-3) | ~(rn < 1e-3))):
        return math.inf
    m, n, rm, rn = m[live], n[live], rm[live], rn[live]
    terms = (a * np.log(m) + (1.0 - a) * np.log(n)
             + a * np.log1p(rm) + (1.0 - a) * np.log1p(-rn) + 1e-13 * a)
    top = float(terms.max())
    return top + math.log(math.fsum(np.exp(terms - top))) + 1e-12 * (1.0 + abs(top))


def pair_renyi_lower(law_p: LossDistribution, law_q: LossDistribution,
                     order: float) -> float:
    r"""Certified lower bound on :math:`D_\alpha(P\|Q)` (nats), ``max(0, ...)`` of
    :func:`pair_log_moment_lower` over :math:`\alpha - 1`."""
    a = float(order)
    if not 1.0 < a < math.inf:
        raise ValueError(f"order must be a finite number > 1, got {order!r}")
    return max(0.0, pair_log_moment_lower(law_p, law_q, a) / (a - 1.0))


def _bernstein_lower(z: np.ndarray, beta: float) -> float:
    """Maurer-Pontil lower confidence bound on ``E Z`` for ``Z`` in ``[0, 1]``."""
    n = z.size
    mean = float(np.mean(z))
    var = float(np.var(z, ddof=1)) if n > 1 else 0.25
    lg = math.log(2.0 / beta)
    return mean - math.sqrt(2.0 * var * lg / n) - 7.0 * lg / (3.0 * (n - 1))


def sampled_moment_lower(y: np.ndarray, t: float, beta: float, log_reference: float,
                         factors: Sequence[float] = CUT_FACTORS) -> Tuple[float, float]:
    r"""``(lower, estimate)`` of :math:`\log E[e^{tY}]` from i.i.d. samples ``y`` of ``Y``.

    ``lower`` holds with probability at least ``1 - beta`` (module docstring): the
    truncation levels are :math:`c = f\,e^{\text{log\_reference}}` for ``f`` in
    ``factors``, fixed before the samples are seen (``log_reference`` must not depend on
    them: the claimed moment), each at confidence ``1 - beta/len(factors)``.
    ``estimate`` is the plug-in :math:`\log \overline{e^{tY}}` (no guarantee).
    """
    y = np.asarray(y, dtype=np.float64)
    if y.ndim != 1 or y.size < 2:
        raise ValueError("need at least 2 privacy-loss samples in a 1-D array")
    if np.isnan(y).any():
        raise ValueError("privacy-loss samples contain NaN")
    if not 0 < beta < 1:
        raise ValueError(f"beta must be in (0, 1), got {beta!r}")
    ty = t * y
    finite = ty[np.isfinite(ty)]
    if np.any(ty == np.inf):
        est = math.inf
    elif finite.size:
        top = float(finite.max())
        est = top + math.log(float(np.mean(np.exp(ty - top))))
    else:
        est = -math.inf
    best = -math.inf
    b_each = beta / len(factors)
    for f in factors:
        log_c = log_reference + math.log(f)
        with np.errstate(over="ignore", invalid="ignore"):
            z = np.exp(np.minimum(ty - log_c, 0.0))
        lcb = _bernstein_lower(z, b_each)
        if lcb > 0:
            best = max(best, log_c + math.log(lcb))
    return best, est
