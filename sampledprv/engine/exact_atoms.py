r"""Exact composition of privacy-loss laws with few atoms (no discretization, no FFT).

A law with ``m`` finite atoms :math:`(\ell_i, w_i)` (and a mass at :math:`+\infty`)
composed ``c`` times has, on the event that no copy is infinite, one atom per count
vector :math:`v \in \mathbb{N}^m` with :math:`\sum_i v_i = c`:

.. math:: \ell(v) = \sum_i v_i \ell_i, \qquad
          P(v) = \frac{c!}{\prod_i v_i!} \prod_i w_i^{v_i},

:math:`\binom{c + m - 1}{m - 1}` atoms in all (501,501 for three atoms at ``c = 1000``).
Several mechanisms combine by outer sums.  The mass at :math:`+\infty` is
:math:`\prod g_i^{c_i} (1 - \prod (1 - p_i/g_i)^{c_i})` as in
:func:`~sampledprv.engine.compose.compose_lattices`.  The curve of these atoms is the
exact curve up to floating point, which this module bounds:

* every composed mass is a product of the input masses, each within a relative
  ``r_i`` of the truth (the law's ``mass_rel_error`` plus the few ulps of a point mass),
  so the curve is within the factors :math:`\prod (1 \pm r_i)^{c_i}`;
* :math:`\log P(v)` is evaluated with ``gammaln`` and ``v_i log w_i``: each term is
  accurate to a few ulps of itself, so the error is at most
  :math:`4u(2\log\Gamma(c+1) + c \max_i|\log w_i|) + O(m u)` (a relative mass error);
* :math:`\ell(v)` is a dot product: at most :math:`(m + 1) u\, c \max_i |\ell_i|` off, plus
  the inputs' own value errors :math:`c\,e_i`, a shift of the loss (an epsilon slack);
* truncated tails (the law's ``mass_defect``) are paid in total variation.

Used by the accountant when every law is a tabulated finite pair (atoms with certified
value errors) and the enumeration has at most :data:`MAX_ATOMS` atoms: k-ary randomized
response, finite pairs, discrete Laplace noise of sensitivity 1 and binomial noise with
few trials, at any delta the curve resolves, where the FFT path's round-off (about
``k u sqrt(n)`` for a law concentrated on one atom) would not.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..core.law import LossDistribution

__all__ = ["MAX_ATOMS", "ExactAtoms", "enumeration_size", "compose_atoms"]

#: largest number of composed atoms enumerated (about 40 bytes each while building)
MAX_ATOMS = 2_000_000
_U = float(np.finfo(np.float64).eps)
#: relative accuracy of a point mass as the laws build it (the discretizer's _ATOM_REL)
_ATOM_REL = 8 * _U


@dataclass(frozen=True, eq=False)
class ExactAtoms:
    """The composed atoms and their certified rounding terms.

    ``values`` (sorted) and ``probs`` are the finite atoms, ``p_inf`` the mass at
    :math:`+\\infty`; the exact curve lies between ``exp(log_scale_lower)`` times the
    atoms' curve at ``eps + shift`` minus ``mass_error`` and ``exp(log_scale_upper)``
    times it at ``eps - shift`` plus ``mass_error``."""

    values: np.ndarray
    probs: np.ndarray
    p_inf: float
    log_scale_upper: float
    log_scale_lower: float
    shift: float
    mass_error: float


def _atoms(law: LossDistribution) -> tuple[np.ndarray, np.ndarray] | None:
    if law.cont_mass > 0 or not law.values_certified:
        return None
    keep = law.atom_masses > 0
    return law.atom_values[keep], law.atom_masses[keep]


def enumeration_size(laws: Sequence[tuple[LossDistribution, int]]) -> int | None:
    """Number of composed atoms, or ``None`` when a law has a continuous part or atom
    values without a certified error bound (``values_certified``)."""
    total = 1
    for law, c in laws:
        a = _atoms(law)
        if a is None:
            return None
        m = a[0].size
        total *= math.comb(c + m - 1, m - 1) if m else 1
        if total > 10 * MAX_ATOMS:
            return total
    return total


def _count_vectors(c: int, m: int) -> np.ndarray:
    """All ``v`` in N^m with sum ``c``, as rows."""
    if m == 1:
        return np.array([[c]], dtype=np.int64)
    if m == 2:
        first = np.arange(c + 1, dtype=np.int64)
        return np.stack([first, c - first], axis=1)
    parts = []
    for first in range(c + 1):
        rest = _count_vectors(c - first, m - 1)
        parts.append(np.concatenate([np.full((rest.shape[0], 1), first, np.int64), rest],
                                    axis=1))
    return np.concatenate(parts, axis=0)


def _self_composed(values: np.ndarray, masses: np.ndarray, c: int):
    """Atoms of ``c`` copies on the event that all are finite: values, log-masses and
    the bounds on their absolute errors (value, log-mass)."""
    m = values.size
    if m == 0:
        return np.zeros(0), np.zeros(0), 0.0, 0.0
    from scipy import special     # here: the analytic accountant's import needs no scipy.special

    log_w = np.log(masses)
    if c == 1:
        # one copy: the atoms themselves, exactly what the enumeration below gives (its
        # count vectors are the unit vectors), without the m-by-m matrix or m-deep recursion
        vals, log_mass = np.array(values, dtype=np.float64), log_w
    else:
        v = _count_vectors(c, m)
        vals = v @ values
        log_mass = (float(special.gammaln(c + 1.0)) - special.gammaln(v + 1.0).sum(axis=1)
                    + v @ log_w)
    big = float(np.max(np.abs(log_w)))
    mass_err = 4.0 * _U * (2.0 * float(special.gammaln(c + 1.0)) + c * big + 4.0 * (m + 2))
    value_err = (m + 1) * _U * c * float(np.max(np.abs(values)))
    return vals, log_mass, value_err, mass_err


def compose_atoms(laws: Sequence[tuple[LossDistribution, int]]) -> ExactAtoms:
    """Exact composition of atomic laws (module docstring); check
    :func:`enumeration_size` first."""
    vals = np.zeros(1)
    log_mass = np.zeros(1)
    value_err = mass_err = 0.0
    log_up = log_low = shift = defect = 0.0
    log_good = log_ratio = 0.0
    for law, c in laws:
        values, masses = _atoms(law)
        r = min(law.mass_rel_error + _ATOM_REL, 0.5)
        log_up += c * math.log1p(r)
        log_low += c * math.log1p(-r)
        shift += c * law.value_error
        defect += c * law.mass_defect
        v1, l1, ve, me = _self_composed(values, masses, c)
        vals = (vals[:, None] + v1[None, :]).ravel()
        log_mass = (log_mass[:, None] + l1[None, :]).ravel()
        value_err += ve + _U * float(np.max(np.abs(vals), initial=0.0))
        mass_err += me + _U * float(np.max(np.abs(log_mass), initial=0.0))
        g = float(masses.sum()) + law.p_pos_inf
        if g <= 0:
            log_good = -math.inf
        else:
            log_good += c * math.log(g)
            if law.p_pos_inf >= g:
                log_ratio = -math.inf
            elif law.p_pos_inf > 0:
                log_ratio += c * math.log1p(-law.p_pos_inf / g)
    order = np.argsort(vals, kind="stable")
    probs = np.exp(log_mass[order])
    p_inf = math.exp(log_good) * -math.expm1(log_ratio) if log_good > -math.inf else 0.0
    # p_inf: the sums g (a few ulps each, times c through the power) and the logs
    p_inf_rel = _U * (10.0 + sum(c * (math.log2(max(_atoms(l)[0].size, 2)) + 20.0)
                                 for l, c in laws) + abs(log_good)
                      + (abs(log_ratio) if math.isfinite(log_ratio) else 0.0))
    rel = math.expm1(mass_err + _U) + p_inf_rel
    return ExactAtoms(values=vals[order], probs=probs, p_inf=p_inf,
                      log_scale_upper=log_up + math.log1p(rel),
                      log_scale_lower=log_low + math.log1p(-min(rel, 0.5)),
                      shift=shift + value_err, mass_error=defect)
