r"""Certified lower bounds for the Poisson-subsampled d-dimensional GG mechanism on a
concrete sensitivity vector spread evenly over ``m`` coordinates.

The vector :math:`\Delta` with ``m`` coordinates :math:`|\Delta_i| = C m^{-1/\beta}` (and
``d - m`` zeros) gives the pair :math:`(P_0, Q_0)` of products of 1-D GG laws; the other
``d - m`` coordinates cancel in the likelihood ratio, whose logarithm is

.. math:: S = \sum_{i=1}^m \ell_i(x_i), \qquad
          \ell_i = \log \frac{p_{0,i}}{q_{0,i}} \text{ (the 1-D GG loss at shift } \Delta_i).

Under :math:`P_0` the law of ``S`` is the ``m``-fold composition of the 1-D loss law
under :math:`P_0` (remove side), under :math:`Q_0` that of its law under :math:`Q_0`.
Poisson subsampling gives the pair :math:`((1-q) Q_0 + q P_0,\ Q_0)` with loss
:math:`g(S) = \log(1 - q + q e^{S})` (:mod:`sampledprv.core.subsampled_law`).

Why a *lower* bound is cheap to certify
---------------------------------------
:math:`\delta(\varepsilon)` of a ``k``-fold composition is
:math:`E[f(\sum_j L_j)]` with :math:`f(s) = (1 - e^{\varepsilon - s})_+` increasing,
bounded by 1 and zero at :math:`-\infty`, and :math:`L_j` i.i.d. copies of the loss (the
remove direction: :math:`g(S)` under the mixture; the add direction: :math:`-g(S)`
under :math:`Q_0`).  Hence if a sub-probability law :math:`\tilde L` is coupled with
``L`` so that :math:`\tilde L \le L` except on an event of probability ``b`` (mass not
carried by :math:`\tilde L` counting as :math:`-\infty`), then
:math:`\delta_{\tilde L^{*k}}(\varepsilon) - k b \le \delta_{L^{*k}}(\varepsilon)`.

The coupling used here: the 1-D law is discretized by the engine
(:func:`sampledprv.engine.discretize.discretize`, rounding to the nearest lattice
point plus the mean-preserving shift) and composed ``m`` times by FFT
(:func:`sampledprv.engine.compose.compose_lattices`), giving :math:`\tilde S`.  On the
event that every coordinate lies in its window, :math:`S - \tilde S` is a sum of ``m``
independent mean-zero terms of range ``h``, so by Hoeffding
:math:`P(S < \tilde S - t) \le e^{-2t^2/(m h^2)}` and likewise above.  Mass outside
the windows is dropped (it lowers the bound, never raises it).  The FFT's aliased mass
(Chernoff spill, both sides), its round-off and the discretization's mass errors are
counted in ``b``.  Then, since ``g`` is increasing,

* remove: :math:`g(\tilde S - t)` with :math:`\tilde S` drawn from
  :math:`(1-q)\,\tilde S_{Q_0} + q\,\tilde S_{P_0}` lies below :math:`g(S)`;
* add: :math:`-g(\tilde S + t)` with :math:`\tilde S` drawn from :math:`\tilde S_{Q_0}`
  lies below :math:`-g(S)`;

except with probability ``b``.  These two atomic laws go through the same subsampling
map as every other mechanism (:func:`sampledprv.core.subsampled_law.subsampled_pair`) and
are carried with ``mass_defect = b``, so the analytic accountant's certified *lower*
bound for them, which subtracts ``count * b``, is a certified lower bound for the true
subsampled spread vector.  Their upper bounds mean nothing: :class:`SpreadSubsampledLower`
is internal to :class:`sampledprv.VectorGGAccountant`, which reads only the lower end.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Callable, Tuple

import numpy as np

from ..engine.compose import GridTooLargeError, compose_lattices
from ..engine.discretize import discretize
from ..mechanisms import GeneralizedGaussian
from ..mechanisms.base import Mechanism
from ..mechanisms.registry import Family, register
from ..mechanisms.laws import analytic_pair
from ..core.law import LossDistribution
from ..core.subsampled_law import subsampled_pair

__all__ = ["SpreadSubsampledLower", "spread_sum_law", "SpreadSum"]

#: atoms of the composed law below this mass are dropped (free for a lower bound)
_TINY = 1e-300


@dataclass(frozen=True)
class SpreadSum:
    """The lattice law of :math:`\\tilde S` (``m``-fold 1-D GG losses) under one side.

    ``values``/``probs``: the composed lattice law (sub-probability); ``t``: the Hoeffding
    shift plus ``m`` times the discretization's mean error; ``bad``: bound on the probability that :math:`|S - \\tilde S| > t` on the
    kept mass plus every mass error of the computed law (aliasing, round-off)."""

    values: np.ndarray
    probs: np.ndarray
    t: float
    bad: float


def _side_law(one_d: LossDistribution, m: int, h: float, tau: float,
              tail_mass: float, max_size: int
              ) -> Tuple[np.ndarray, np.ndarray, float, float]:
    disc = discretize(one_d, h, tau, max_size)
    comp = compose_lattices([(disc.pmf, m)], tail_mass=tail_mass, max_size=max_size)
    keep = comp.probs > _TINY
    bad = comp.spill_upper + comp.spill_lower + comp.numeric_error + m * disc.mass_error
    return comp.values[keep], comp.probs[keep], float(bad), m * disc.mean_error


@functools.lru_cache(maxsize=64)
def spread_sum_law(beta: float, scale: float, coordinate: float, m: int, shift: float,
                   bad_budget: float, max_size: int = 2**22) -> Tuple[SpreadSum, SpreadSum]:
    r"""Laws of :math:`\tilde S` under :math:`P_0` and :math:`Q_0` for ``m`` coordinates
    of 1-D :math:`GG(\beta, s)` losses at shift ``coordinate`` each.

    Parameters
    ----------
    beta, scale : float
        The per-coordinate noise.
    coordinate : float
        :math:`|\Delta_i|` (``C m^{-1/beta}`` for the even spread).
    m : int
        Number of coordinates.
    shift : float
        Target Hoeffding shift ``t`` (nats of ``S``).  The mesh is
        :math:`h = t / \sqrt{m \log(1/b_H)/2}` with :math:`b_H` a fifth of
        ``bad_budget``; if that needs more than ``max_size`` points the mesh is coarsened
        and ``t`` grows accordingly (the bound stays valid, only looser).
    bad_budget : float
        Target for ``bad`` (the per-copy probability that the coupling fails).
    """
    pair = analytic_pair(GeneralizedGaussian(beta, scale, coordinate))
    log_inv = math.log(5.0 / bad_budget)
    h = shift / math.sqrt(0.5 * m * log_inv)
    tau = 0.1 * bad_budget / m
    tail = 0.1 * bad_budget
    out = []
    for law in pair:
        while True:
            try:
                vals, probs, bad, bias = _side_law(law, m, h, tau, tail, max_size)
                break
            except GridTooLargeError:         # coarser mesh, larger t: looser, still valid
                h *= 2.0
        # Hoeffding's deviation plus the shifts' error (m copies of the mean error)
        t = h * math.sqrt(0.5 * m * log_inv) + bias
        out.append(SpreadSum(vals, probs, t, bad + 0.2 * bad_budget))
    return out[0], out[1]


def _atoms(values: np.ndarray, probs: np.ndarray, defect: float, mesh: float,
           down: bool) -> LossDistribution:
    """Atomic law of ``values`` rounded down (``down``) or up onto multiples of ``mesh``
    (same masses, merged per point): a deterministic coupling in the stated direction
    that keeps the number of atoms near ``span / mesh``."""
    idx = (np.floor(values / mesh) if down else np.ceil(values / mesh)).astype(np.int64)
    lo = int(idx.min()) if idx.size else 0
    masses = np.bincount(idx - lo, weights=probs)
    live = np.flatnonzero(masses > 0)
    return LossDistribution(atom_values=(live + lo) * mesh, atom_masses=masses[live],
                            mass_defect=defect)


@dataclass(frozen=True)
class SpreadSubsampledLower(Mechanism):
    r"""Internal: the Poisson-subsampled GG vector mechanism on the sensitivity vector
    spread evenly over ``spread`` coordinates, as *lower* laws (see module docstring).

    Its ``loss_pair`` is dominated by the true one (coupling with failure probability
    ``mass_defect``), so only the analytic accountant's **lower** bounds for it are
    bounds for the mechanism.  Not exported; :class:`sampledprv.VectorGGAccountant`
    builds it with the accuracy its composition needs.

    Parameters
    ----------
    beta, scale, clip_norm : float
        The vector spec's noise and :math:`\ell_\beta` sensitivity.
    spread : int
        ``m``: coordinates carrying :math:`C m^{-1/\beta}` each.
    q : float
        Poisson rate.
    shift : float
        Target Hoeffding shift of the inner sum (nats).
    bad_budget : float
        Target probability of the coupling failing, per copy.
    """

    beta: float
    scale: float
    clip_norm: float
    spread: int
    q: float
    shift: float
    bad_budget: float

    @property
    def coordinate(self) -> float:
        return self.clip_norm * self.spread ** (-1.0 / self.beta)

    def sums(self) -> Tuple[SpreadSum, SpreadSum]:
        """:math:`\\tilde S` under :math:`P_0` and :math:`Q_0` (cached)."""
        return spread_sum_law(self.beta, self.scale, self.coordinate, self.spread,
                              self.shift, self.bad_budget)

    def __repr__(self) -> str:
        return (f"SpreadSubsampledLower(beta={self.beta}, scale={self.scale}, "
                f"clip_norm={self.clip_norm}, spread={self.spread}, q={self.q})")


#: atoms of the lower laws lie on multiples of ``shift / _MERGE`` (rounded in the safe
#: direction): the shift grows by at most ``1 / _MERGE``, the atom count drops to
#: ``span / mesh``
_MERGE = 4


@functools.lru_cache(maxsize=64)
def _lower_pair(spec: SpreadSubsampledLower) -> Tuple[LossDistribution, LossDistribution]:
    sp_, sq = spec.sums()
    mesh = spec.shift / _MERGE
    down = (_atoms(sp_.values - sp_.t, sp_.probs, sp_.bad, mesh, True),
            _atoms(sq.values - sq.t, sq.probs, sq.bad, mesh, True))
    up = (_atoms(sp_.values + sp_.t, sp_.probs, sp_.bad, mesh, False),
          _atoms(sq.values + sq.t, sq.probs, sq.bad, mesh, False))
    remove = subsampled_pair(down, spec.q)[0]     # g(S~ - t) under the mixture
    add_side = subsampled_pair(up, spec.q)[1]     # g(S~ + t) under Q0 (add = its negation)
    return remove, add_side


def _true_losses(spec: SpreadSubsampledLower) -> Tuple[Callable, Callable]:
    """Samplers of the *true* subsampled loss :math:`g(S)` under ``P`` and ``Q``."""
    beta, s, c, m, q = spec.beta, spec.scale, spec.coordinate, spec.spread, spec.q

    def gg(rng: np.random.Generator, n: int) -> np.ndarray:
        g = rng.gamma(1.0 / beta, size=(n, m)) ** (1.0 / beta)
        return s * g * rng.choice([-1.0, 1.0], size=(n, m))

    def loss(x: np.ndarray) -> np.ndarray:
        big = np.sum((np.abs(x - c) ** beta - np.abs(x) ** beta) / s ** beta, axis=1)
        return np.logaddexp(np.log1p(-q), np.log(q) + big)

    def under_p(rng: np.random.Generator, n: int) -> np.ndarray:
        x = gg(rng, n)                     # P0: centred at 0; Q0: centred at Delta
        x[rng.random(n) >= q] += c         # P = (1-q) Q0 + q P0
        return loss(x)

    def under_q(rng: np.random.Generator, n: int) -> np.ndarray:
        return loss(gg(rng, n) + c)

    return under_p, under_q


register(Family(name="gg_spread_subsampled_lower", types=(SpreadSubsampledLower,),
                loss_pair=_lower_pair, numpy_losses=_true_losses))
