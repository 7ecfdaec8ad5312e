r"""The law of a privacy loss, as the analytic engine needs it.

A :class:`LossDistribution` is a probability measure on
:math:`[-\infty, +\infty]` split into

* a continuous part, given by its (sub-)CDF ``cdf_cont(y) = P(Y <= y, Y continuous)``
  and survival function ``sf_cont(y) = P(Y > y, Y continuous)`` (both vectorized and
  accurate in their own tail: ``sf_cont`` is never computed as ``mass - cdf_cont``);
* finitely many atoms ``(values, masses)``;
* atoms at :math:`\pm\infty`.

Combinators build new laws from old ones without sampling: :meth:`negated`
(law of ``-Y``), :meth:`pushforward` through an increasing map (subsampling), and
:func:`mixture`.  The discretizer in :mod:`sampledprv.engine.discretize` only ever
calls ``cdf``/``sf`` on grids, so every law here is exact up to special-function
accuracy.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

ArrayFn = Callable[[np.ndarray], np.ndarray]
_U = float(np.finfo(np.float64).eps)


def _zero(y: np.ndarray) -> np.ndarray:
    return np.zeros_like(np.asarray(y, dtype=np.float64))


@dataclass(frozen=True, eq=False)
class LossDistribution:
    """Law of a privacy loss ``Y`` (see module docstring)."""

    cdf_cont: ArrayFn = _zero
    sf_cont: ArrayFn = _zero
    cont_mass: float = 0.0
    atom_values: np.ndarray = field(default_factory=lambda: np.zeros(0))
    atom_masses: np.ndarray = field(default_factory=lambda: np.zeros(0))
    p_pos_inf: float = 0.0
    p_neg_inf: float = 0.0
    #: closed interval containing the continuous part's support
    support: tuple[float, float] = (-np.inf, np.inf)
    #: bound on the total-variation distance between the true law and this one (a
    #: truncated tail, rounding of tabulated masses); the discretizer adds it to its mass
    #: error, so both ends of the certified intervals pay for it
    mass_defect: float = 0.0
    #: bound ``r`` on the relative rounding error of every point mass (atoms and the
    #: atoms at +-inf): the true mass lies in ``[(1 - r) m, (1 + r) m]``.  A composition
    #: of ``c`` copies pays a factor ``(1 + r)^c`` on its curve (a relative error), not
    #: ``c`` times an absolute one (design notes, "Floating point")
    mass_rel_error: float = 0.0
    #: bound on ``|true loss - tabulated loss|`` of every finite atom; ``c`` copies move
    #: the composed loss by at most ``c`` times it, which the accountant adds to its
    #: epsilon slack
    value_error: float = 0.0
    #: True when ``value_error`` is a certified bound for every atom (tabulated finite
    #: pairs); only such laws are composed by exact enumeration, where no epsilon slack
    #: absorbs unaccounted last-bit errors of the atom values
    values_certified: bool = False
    #: bound on the relative error of every ``cdf_cont`` / ``sf_cont`` value, in units of
    #: ``eps = 2^-52``: the discretizer charges each bucket mass and moment for it
    #: (design notes, "Floating point"). Checked per family against high-precision
    #: values in ``tests/test_law_accuracy.py``; combinators keep the largest of their
    #: parts'
    cdf_ulps: float = 8.0
    #: memo of quantities derived from the law (:meth:`lower_point`, :meth:`upper_point`,
    #: small discretizations): a law is immutable and its functions are pure, so a
    #: repeated computation returns the identical result (the accountant sizes its grids
    #: and then discretizes with the same tail budget; accountants share the laws of a
    #: spec, see :func:`sampledprv.mechanisms.laws.privacy_loss`)
    memo: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        v = np.asarray(self.atom_values, dtype=np.float64).ravel()
        m = np.asarray(self.atom_masses, dtype=np.float64).ravel()
        keep = m > 0
        object.__setattr__(self, "atom_values", v[keep])
        object.__setattr__(self, "atom_masses", m[keep])

    # ---- totals -----------------------------------------------------------------
    def cdf(self, y: np.ndarray) -> np.ndarray:
        """``P(Y <= y)`` including atoms and the atom at ``-inf``."""
        y = np.asarray(y, dtype=np.float64)
        atoms = (self.atom_masses * (self.atom_values <= y[..., None])).sum(-1) \
            if self.atom_values.size else 0.0
        return self.p_neg_inf + self.cdf_cont(y) + atoms

    def sf(self, y: np.ndarray) -> np.ndarray:
        """``P(Y > y)`` including atoms and the atom at ``+inf``."""
        y = np.asarray(y, dtype=np.float64)
        atoms = (self.atom_masses * (self.atom_values > y[..., None])).sum(-1) \
            if self.atom_values.size else 0.0
        return self.p_pos_inf + self.sf_cont(y) + atoms

    @property
    def finite_mass(self) -> float:
        return self.cont_mass + float(self.atom_masses.sum())

    # ---- window -------------------------------------------------------------------
    def lower_point(self, tail: float) -> float:
        """A point ``y`` with ``P(-inf < Y < y) <= tail`` (as large as cheaply found)."""
        return self._window_point(tail, lower=True)

    def upper_point(self, tail: float) -> float:
        """A point ``y`` with ``P(y < Y < inf) <= tail`` (as small as cheaply found)."""
        return self._window_point(tail, lower=False)

    def _window_point(self, tail: float, lower: bool) -> float:
        """The tail search of :meth:`lower_point` / :meth:`upper_point`, memoized."""
        key = (lower, float(tail))
        if key not in self.memo:
            if lower:
                mass = lambda y: float(self.cdf(np.array(y))) - self.p_neg_inf  # noqa: E731
            else:
                mass = lambda y: float(self.sf(np.array(y))) - self.p_pos_inf  # noqa: E731
            self.memo[key] = _search(mass, tail, self._finite_range(), lower=lower)
        return self.memo[key]

    def _finite_range(self) -> tuple[float, float]:
        lo, hi = (self.support if self.cont_mass > 0 else (np.inf, -np.inf))
        if self.atom_values.size:
            lo = min(lo, float(self.atom_values.min()))
            hi = max(hi, float(self.atom_values.max()))
        return lo, hi

    # ---- combinators ----------------------------------------------------------------
    def negated(self) -> "LossDistribution":
        """Law of ``-Y``."""
        cdf, sf = self.cdf_cont, self.sf_cont
        return LossDistribution(
            cdf_cont=lambda y: sf(-np.asarray(y, dtype=np.float64)),
            sf_cont=lambda y: cdf(-np.asarray(y, dtype=np.float64)),
            cont_mass=self.cont_mass, atom_values=-self.atom_values,
            atom_masses=self.atom_masses, p_pos_inf=self.p_neg_inf, p_neg_inf=self.p_pos_inf,
            support=(-self.support[1], -self.support[0]), mass_defect=self.mass_defect,
            mass_rel_error=self.mass_rel_error, value_error=self.value_error,
            values_certified=self.values_certified, cdf_ulps=self.cdf_ulps)

    def pushforward(self, g: Callable[[np.ndarray], np.ndarray],
                    g_inv: Callable[[np.ndarray], np.ndarray],
                    g_range: tuple[float, float], lipschitz: float = 1.0) -> "LossDistribution":
        """Law of ``g(Y)`` for a continuous strictly increasing ``g`` mapping
        :math:`[-\\infty, \\infty]` onto ``[g_range[0], g_range[1]]``; ``g_inv`` must accept
        points of ``g_range`` (and may return ``-inf`` at the left end).  An infinite
        endpoint of ``g_range`` receives the corresponding infinite atom; a finite one
        turns that atom into an ordinary atom.  ``lipschitz`` bounds ``g'`` (the
        subsampling maps :math:`\\log(1 - q + q e^y)` have ``g' < 1``): it scales
        ``value_error``; masses are carried over, so ``mass_rel_error`` is kept."""
        cdf, sf = self.cdf_cont, self.sf_cont
        lo, hi = g_range

        def cdf_new(y: np.ndarray) -> np.ndarray:
            y = np.asarray(y, dtype=np.float64)
            inside = y > lo
            if inside.all():                      # the common case on a grid: no copies
                return cdf(g_inv(np.minimum(y, hi)))
            out = np.zeros_like(y)
            out[inside] = cdf(g_inv(np.minimum(y[inside], hi)))
            return out

        def sf_new(y: np.ndarray) -> np.ndarray:
            y = np.asarray(y, dtype=np.float64)
            inside = y >= lo
            if inside.all():
                return sf(g_inv(np.minimum(y, hi)))
            out = np.full_like(y, self.cont_mass)
            out[inside] = sf(g_inv(np.minimum(y[inside], hi)))
            return out

        values = list(g(self.atom_values)) if self.atom_values.size else []
        masses = list(self.atom_masses)
        p_pos, p_neg = self.p_pos_inf, self.p_neg_inf
        if np.isfinite(lo) and p_neg > 0:
            values.append(lo); masses.append(p_neg); p_neg = 0.0
        if np.isfinite(hi) and p_pos > 0:
            values.append(hi); masses.append(p_pos); p_pos = 0.0
        s0, s1 = self.support
        support = (float(g(np.array([s0]))[0]) if np.isfinite(s0) else lo,
                   float(g(np.array([s1]))[0]) if np.isfinite(s1) else hi)
        return LossDistribution(cdf_new, sf_new, self.cont_mass, np.array(values),
                                np.array(masses), p_pos, p_neg, support, self.mass_defect,
                                self.mass_rel_error, lipschitz * self.value_error,
                                cdf_ulps=self.cdf_ulps)


#: ``(law of l under P0, law of l under Q0)``: the laws of one loss function
#: ``l = log p0/q0`` under both members of a pair
LossPair = tuple[LossDistribution, LossDistribution]


def mixture(weights: list[float], parts: list[LossDistribution]) -> LossDistribution:
    """The mixture ``sum_i w_i parts[i]`` (weights summing to 1)."""
    ws = [float(w) for w in weights]

    def cdf(y: np.ndarray) -> np.ndarray:
        return sum(w * p.cdf_cont(y) for w, p in zip(ws, parts) if w > 0)

    def sf(y: np.ndarray) -> np.ndarray:
        return sum(w * p.sf_cont(y) for w, p in zip(ws, parts) if w > 0)

    live = [(w, p) for w, p in zip(ws, parts) if w > 0]
    conts = [p for w, p in live if p.cont_mass > 0]
    support = (min((p.support[0] for p in conts), default=0.0),
               max((p.support[1] for p in conts), default=0.0))
    return LossDistribution(
        cdf, sf, sum(w * p.cont_mass for w, p in live),
        np.concatenate([p.atom_values for _, p in live]),
        np.concatenate([w * p.atom_masses for w, p in live]),
        sum(w * p.p_pos_inf for w, p in live), sum(w * p.p_neg_inf for w, p in live),
        support, sum(w * p.mass_defect for w, p in live),
        # a mass w * m: the product adds one rounding to m's relative error
        max((p.mass_rel_error for _, p in live), default=0.0) + _U,
        max((p.value_error for _, p in live), default=0.0),
        all(p.values_certified for _, p in live),
        cdf_ulps=max((p.cdf_ulps for _, p in live), default=8.0))


def _search(tail_fn: Callable[[float], float], tail: float, finite_range: tuple[float, float],
            lower: bool) -> float:
    """Point where a monotone tail function crosses ``tail``, by bracketing and bisection.

    ``tail_fn`` is ``P(Y < y)`` (``lower=True``, increasing) or ``P(Y > y)`` (decreasing).
    Returns a point on the safe side (``tail_fn <= tail``) within 1e-9 relative of the
    crossing."""
    lo, hi = finite_range
    if lo > hi:
        return 0.0
    finite = [x for x in (lo, hi) if np.isfinite(x)]
    center = 0.5 * (lo + hi) if len(finite) == 2 else (finite[0] if finite else 0.0)
    outward = -1.0 if lower else 1.0
    safe, step = center, 1.0
    while tail_fn(safe) > tail:
        safe, step = center + outward * step, 2.0 * step
        if step > 1e15:
            raise ValueError("could not bracket the tail of a privacy-loss distribution; "
                             "its tails are too heavy for the analytic engine")
    unsafe, step = safe, 1.0
    while tail_fn(unsafe) <= tail:
        if step > 1e15:
            return safe  # the whole finite mass is below the tail budget
        unsafe, step = safe - outward * step, 2.0 * step
    for _ in range(200):
        mid = 0.5 * (safe + unsafe)
        if mid in (safe, unsafe) or abs(safe - unsafe) <= 1e-9 * max(1.0, abs(safe)):
            break
        if tail_fn(mid) <= tail:
            safe = mid
        else:
            unsafe = mid
    return safe
