r"""Exact privacy-loss laws and samplers of pairs on a common countable outcome set.

Shared by every discrete family (:mod:`.finite_pair`, :mod:`.kary_randomized_response`,
:mod:`.binomial`, :mod:`.discrete_laplace`, :mod:`.discrete_gaussian`,
:mod:`.exponential`).  A pair is given by the log-probabilities ``log_p``, ``log_q``
of :math:`P_0` and :math:`Q_0` on the same outcomes (``-inf`` for probability 0).
The loss :math:`\ell(o) = \log p_0(o) - \log q_0(o)` is an atom at each outcome:

* under :math:`P_0` an atom of mass :math:`p_0(o)` at :math:`\ell(o)`, at
  :math:`+\infty` where :math:`q_0(o) = 0`;
* under :math:`Q_0` an atom of mass :math:`q_0(o)` at :math:`\ell(o)`, at
  :math:`-\infty` where :math:`p_0(o) = 0`.

Atoms with equal loss (to the last bit) are merged.  ``mass_defect`` is a bound on the
total-variation distance between the true pair and the tabulated one (tail truncation
of an infinite support); the discretizer adds it to its mass error, so certified
intervals stay certified (:class:`~sampledprv.core.law.LossDistribution`).  Rounding is
*not* a total-variation term: every tabulated mass is within a relative
``rel_error`` of the truth and every loss value within ``value_error``, which a
``c``-fold composition pays as a factor ``(1 + rel_error)^c`` on its curve and a shift
of ``c * value_error`` in epsilon (design notes, "Floating point").
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence, Tuple

import numpy as np

from ..core.law import LossDistribution

__all__ = ["FiniteLaw", "finite_law", "finite_loss_pair", "finite_numba", "finite_numpy",
           "FINITE_HOOKS"]

#: tails dropped by the samplers are below this (far below the 2**-53 resolution of the
#: uniform draws that drive any inverse-CDF sampler)
SAMPLER_TAIL = 2.0 ** -120
_EPS = float(np.finfo(np.float64).eps)


@dataclass(frozen=True, eq=False)
class FiniteLaw:
    """Merged atoms of the loss: ``values`` (sorted, may hold ``+-inf``) and their masses
    under :math:`P_0` and :math:`Q_0`, plus the truncation defect."""

    values: np.ndarray
    p: np.ndarray
    q: np.ndarray
    mass_defect: float = 0.0
    #: relative rounding bound of every tabulated mass (both sides)
    rel_error: float = 0.0
    #: absolute rounding bound of every finite loss value
    value_error: float = 0.0


def finite_law(log_p: np.ndarray, log_q: np.ndarray, mass_defect: float = 0.0,
               p_tail: float = 0.0, q_tail: float = 0.0,
               log_error: float = 0.0) -> FiniteLaw:
    r"""Atoms of the loss of the pair ``(exp(log_p), exp(log_q))`` (module docstring).

    ``p_tail`` / ``q_tail``: bounds on the mass of :math:`P_0` / :math:`Q_0` outside the
    tabulated outcomes (a truncated infinite support).  They become atoms at
    :math:`+\infty` under :math:`P_0` and :math:`-\infty` under :math:`Q_0`, which can
    only raise the curves of both directions (upper bounds stay valid); give
    ``mass_defect >= max(p_tail, q_tail)`` so the lower bounds pay for them.

    ``log_error``: a bound on the absolute error of every given log-mass beyond the
    ``(|a| + 2)`` ulp that a directly evaluated log-mass ``a`` carries (for example the
    cancellation in ``gammaln(n + 1) - gammaln(k + 1) - gammaln(n - k + 1)``)."""
    log_p = np.asarray(log_p, dtype=np.float64).ravel()
    log_q = np.asarray(log_q, dtype=np.float64).ravel()
    if log_p.shape != log_q.shape:
        raise ValueError("log_p and log_q must have the same length")
    live = np.isfinite(log_p) | np.isfinite(log_q)
    log_p, log_q = log_p[live], log_q[live]
    if p_tail > 0 or q_tail > 0:
        log_p = np.concatenate([log_p, [math.log(p_tail) if p_tail > 0 else -np.inf, -np.inf]])
        log_q = np.concatenate([log_q, [-np.inf, math.log(q_tail) if q_tail > 0 else -np.inf]])
    with np.errstate(invalid="ignore"):
        loss = np.where(np.isneginf(log_q), np.inf,
                        np.where(np.isneginf(log_p), -np.inf, log_p - log_q))
    p, q = np.exp(log_p), np.exp(log_q)
    values, inverse = np.unique(loss, return_inverse=True)
    pm = np.bincount(inverse, weights=p, minlength=values.size)
    qm = np.bincount(inverse, weights=q, minlength=values.size)
    # rounding, as relative errors (composition multiplies them, it does not add them):
    # a log-mass a is off by at most alpha = 2 (|a| + 2) ulp + log_error, so exp(a) is
    # within a relative expm1(alpha + ulp); merging m atoms by a sum of positive terms
    # adds (m - 1) ulp.  A loss value log p - log q is off by alpha_p + alpha_q plus one
    # rounding of the difference.
    fin_p, fin_q = np.isfinite(log_p), np.isfinite(log_q)
    alpha_p = np.where(fin_p, 2.0 * _EPS * (np.abs(np.where(fin_p, log_p, 0.0)) + 2.0), 0.0)
    alpha_q = np.where(fin_q, 2.0 * _EPS * (np.abs(np.where(fin_q, log_q, 0.0)) + 2.0), 0.0)
    alpha_p += log_error
    alpha_q += log_error
    merged = int(np.bincount(inverse).max()) if inverse.size else 1
    alpha = max(float(alpha_p.max(initial=0.0)), float(alpha_q.max(initial=0.0)))
    rel_error = math.expm1(alpha + _EPS) + (merged + 1) * _EPS
    both = fin_p & fin_q
    value_error = float((alpha_p + alpha_q + _EPS * np.abs(np.where(both, loss, 0.0)))[both]
                        .max(initial=0.0))
    return FiniteLaw(values, pm, qm, float(mass_defect), rel_error, value_error)


def finite_loss_pair(law: FiniteLaw):
    """``(law of l under P0, law of l under Q0)`` as :class:`LossDistribution` objects."""
    v = law.values
    fin = np.isfinite(v)
    under_p = LossDistribution(atom_values=v[fin], atom_masses=law.p[fin],
                               p_pos_inf=float(law.p[v == np.inf].sum()),
                               mass_defect=law.mass_defect, mass_rel_error=law.rel_error,
                               value_error=law.value_error, values_certified=True)
    under_q = LossDistribution(atom_values=v[fin], atom_masses=law.q[fin],
                               p_neg_inf=float(law.q[v == -np.inf].sum()),
                               mass_defect=law.mass_defect, mass_rel_error=law.rel_error,
                               value_error=law.value_error, values_certified=True)
    return under_p, under_q


def _cumulative(m: np.ndarray) -> np.ndarray:
    c = np.cumsum(m)
    c /= c[-1]
    c[-1] = 1.0
    return c


def finite_numba(law: FiniteLaw) -> Tuple[float, list]:
    """``("table", [n, values..., cdf under P0..., cdf under Q0...])``: the sampler kind
    of the fused kernel that draws by inverse CDF (bisection)."""
    n = law.values.size
    return "table", [float(n)] + list(law.values) + list(_cumulative(law.p)) \
        + list(_cumulative(law.q))


def finite_numpy(law: FiniteLaw):
    """numpy samplers ``f(rng, n)`` of the loss under :math:`P_0` and :math:`Q_0`."""
    values = law.values
    cp, cq = _cumulative(law.p), _cumulative(law.q)

    def draw(cum: np.ndarray):
        def f(r: np.random.Generator, n: int) -> np.ndarray:
            idx = np.searchsorted(cum, r.random(n), side="right")
            return values[np.minimum(idx, values.size - 1)]
        return f
    return draw(cp), draw(cq)


def mixture_pair_law(log_pmf: np.ndarray, p_parts: Sequence[Tuple[int, float]],
                     q_parts: Sequence[Tuple[int, float]], tail: float = 0.0,
                     log_error: float = 0.0) -> FiniteLaw:
    r"""Loss atoms of a pair of mixtures of integer shifts of one noise pmf.

    ``log_pmf[i]`` is :math:`\log \mu(i_0 + i)` on a window of consecutive integers
    (outside it the noise has mass at most ``tail``); :math:`P_0 = \sum_j w_j
    \mu(\cdot - s_j)` over ``p_parts = [(s_j, w_j), ...]`` and likewise :math:`Q_0`.
    The window's outside mass becomes the ``p_tail``/``q_tail`` atoms of
    :func:`finite_law` with ``mass_defect = tail``.  ``log_error`` bounds the error of
    ``log_pmf`` beyond its ``(|a| + 2)`` ulp (:func:`finite_law`); a mixture's log-mass
    (``logaddexp`` of shifted copies) is off by at most that plus a few ulps of the
    result, which the default model covers."""
    lp, lq = mixture_sides(log_pmf, p_parts, q_parts)
    return windowed_law(lp, lq, tail, log_error)


def windowed_law(lp: np.ndarray, lq: np.ndarray, tail: float,
                 log_error: float = 0.0) -> FiniteLaw:
    """:func:`finite_law` of a pair tabulated on a window of a noise whose mass outside
    is at most ``tail``.  With ``tail > 0`` the infinite losses at the window's edges are
    artefacts of the window (only one side was tabulated there): they stay infinite (which
    only raises the curves) and their mass joins the defect paid by the lower bounds."""
    defect = tail
    if tail > 0:
        only_p = np.isfinite(lp) & np.isneginf(lq)
        only_q = np.isfinite(lq) & np.isneginf(lp)
        defect += float(np.exp(lp[only_p]).sum() + np.exp(lq[only_q]).sum())
    return finite_law(lp, lq, mass_defect=defect, p_tail=tail, q_tail=tail,
                      log_error=log_error)


def mixture_sides(log_pmf: np.ndarray, p_parts: Sequence[Tuple[int, float]],
                  q_parts: Sequence[Tuple[int, float]]) -> Tuple[np.ndarray, np.ndarray]:
    """Log-masses of the two mixtures of :func:`mixture_pair_law` on their common
    window of integers."""
    log_pmf = np.asarray(log_pmf, dtype=np.float64)
    shifts = [s for s, _ in p_parts] + [s for s, _ in q_parts]
    lo, hi = min(shifts), max(shifts)
    width = log_pmf.size + hi - lo

    def side(parts: Sequence[Tuple[int, float]]) -> np.ndarray:
        out = np.full(width, -np.inf)
        for s, w in parts:
            if w <= 0:
                continue
            part = np.full(width, -np.inf)
            part[s - lo: s - lo + log_pmf.size] = log_pmf + math.log(w)
            out = np.logaddexp(out, part)
        return out
    return side(p_parts), side(q_parts)


def log_normalize(log_w: np.ndarray) -> np.ndarray:
    """``log_w - logsumexp(log_w)``."""
    m = float(np.max(log_w))
    return log_w - (m + math.log(float(np.sum(np.exp(log_w - m)))))


#: the registry hooks of a family whose spec tabulates its pair as ``law() -> FiniteLaw``
FINITE_HOOKS = dict(loss_pair=lambda m: finite_loss_pair(m.law()),
                    numba_source=lambda m: finite_numba(m.law()),
                    numpy_losses=lambda m: finite_numpy(m.law()))
