r"""Subsampling under both neighbouring relations: fixed-size batches, and the worst-case
pairs that Poisson and fixed-size subsampling have under substitution.

Conventions: ``sensitivity`` is the per-record bound :math:`C` (the add/remove
sensitivity), so a record contributes a shift :math:`x` with :math:`|x| \le C`; the
noise :math:`\mu` is an additive-noise law (Gaussian, or integer noise: binomial,
discrete Laplace, discrete Gaussian).  Write :math:`\mu_s` for :math:`\mu` shifted by
:math:`s`.

Poisson subsampling at rate :math:`q`, substitution (``x`` replaced by ``x'``).  With
:math:`S` the subsample of the common records,
:math:`P = E_S[(1-q)\mu_{f(S)} + q\mu_{f(S)+x}]` and
:math:`Q = E_S[(1-q)\mu_{f(S)} + q\mu_{f(S)+x'}]`.  By joint convexity of the hockey-stick
divergence and shift invariance, the pair is dominated by
:math:`((1-q)\mu + q\mu_{x},\ (1-q)\mu + q\mu_{x'})`, worst at :math:`x = C, x' = -C`:

.. math:: P^* = (1-q)\mu + q\mu_{C}, \qquad Q^* = (1-q)\mu + q\mu_{-C},

the pair of dp-accounting's ``REPLACE_ONE`` relation for Poisson-sampled additive noise
(``AdditiveNoisePrivacyLoss``) and of Koskela, Jälkö and Honkela (2020, "Computing
tight differential privacy guarantees using FFT", Sec. 6) for the substitute relation.
It is symmetric (:math:`Q^*` is the mirror image of :math:`P^*`), so one direction
serves both.  For ``q = 1`` it is the noise with sensitivity :math:`2C`.

Sampling without replacement, a batch of ``b`` out of ``n`` records
(:math:`\gamma = b/n`), substitution.  Coupling each batch without the changed record
with a batch that contains it (Balle, Barthe and Gaboardi 2018, "Privacy amplification
by subsampling: tight analyses via couplings and divergences", Theorem 10, proved for
:math:`(\varepsilon,\delta)` by this coupling) gives pairs
:math:`((1-\gamma)\mu + \gamma\mu_u, (1-\gamma)\mu + \gamma\mu_v)` with
:math:`|u|, |v|, |u - v| \le 2C`.  Its extreme member :math:`u = 2C, v = 0`,

.. math:: P^* = (1-\gamma)\mu + \gamma\mu_{2C}, \qquad Q^* = \mu,

i.e. the add/remove Poisson pair of the mechanism with twice the sensitivity.  A dataset
pair attains it (all other records equal to :math:`-C`), so it gives the **lower** end of
the analytic accountant's intervals.  It is not a dominating pair in the sense of Zhu,
Dong and Wang (2022, "Optimal accounting of differential privacy via characteristic
function", Definition 7 and Theorem 10): the mirrored member :math:`(0, -2C)` has a
larger hockey-stick divergence :math:`H_\alpha` at :math:`\alpha < 1`.  The **upper**
end comes from :class:`SymmetricDominatingPair`, by a theorem: with
:math:`f = T(\mu, \mu_{2C})` the trade-off function of the noise shifted by the
substitution sensitivity :math:`2C` (the batch mechanism is :math:`f`-DP under
substitution: for symmetric log-concave noise the likelihood ratio is monotone, so the
most powerful test of :math:`\mu_u` against :math:`\mu_v` is a threshold test whose
power grows with :math:`|u - v| \le 2C`), Dong, Roth and Su (2022, "Gaussian
differential privacy", J. R. Stat. Soc. B, Theorem 4.2) show that the batch of ``b``
of ``n`` drawn without replacement is :math:`C_\gamma(f)`-DP,
:math:`C_\gamma(f) = \min(f_\gamma, f_\gamma^{-1})^{**}` with
:math:`f_\gamma = \gamma f + (1-\gamma)\mathrm{Id} = T(Q^*, P^*)`, and their
Theorem 3.2 composes :math:`f`-DP adaptively by the tensor product.  The conjugate of
:math:`\min(f_\gamma, f_\gamma^{-1})^{**}` is :math:`\max(f_\gamma^*,
(f_\gamma^{-1})^*)`, so its privacy profile (their Proposition 2.12) is
:math:`\max(H_\alpha(P^*\|Q^*), H_\alpha(Q^*\|P^*))` for every
:math:`\alpha > 0`, which is the profile of :math:`S`.  For symmetric noise and
:math:`\alpha \ge 1` the remove direction is the larger (perspective argument, design
notes), so :math:`S` has the remove pair's loss law on :math:`(0, \infty]`, its mirror
image weighted by :math:`e^{-y}` (the law of :math:`-\ell` under :math:`Q^*` on
:math:`\ell > 0`) on :math:`[-\infty, 0)`, and an atom at 0.  Every noise accepted
is log-concave (Gaussian, Laplace, the Generalized Gaussian with ``beta >= 1`` in one
dimension, binomial, discrete Laplace, discrete Gaussian); asymmetric noise (binomial
with ``p != 1/2``) is refused.  Sampling without replacement is refused under
add/remove (the batch size would change with the dataset size).  The sampled
accountant takes the two ends from two inner accountants, one sampling :math:`S` (fused
kernel, ``MODE_SYM`` of :mod:`sampledprv.sampled.draws._mechloss`) and one the member,
each at half the failure probability.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Tuple

import numpy as np

from ..core import validation as v
from ..core.law import LossDistribution
from ._finite import FINITE_HOOKS, FiniteLaw, mixture_sides, windowed_law
from .base import Mechanism, NeighbouringRelation
from .gaussian import Gaussian, gaussian_mu_pair
from .laws import loss_pair
from .generalized_gaussian import GeneralizedGaussian
from .registry import (Family, Lazy, UnsupportedRelationError, family_of, for_relation as
                       _family_relation, method_hooks, register)
from .numpy_losses import spec_loss_sampler
from .subsampled import PoissonSubsampled, is_user_pair, refuse_batch_scheme, user_pair_hook

__all__ = ["FixedSizeSubsampled", "subsampled_for_relation"]


@dataclass(frozen=True)
class FixedSizeSubsampled(Mechanism):
    r"""``mechanism`` run on a uniformly random batch of exactly ``batch_size`` of the
    ``dataset_size`` records (sampling without replacement).

    Accounted by the analytic :class:`~sampledprv.Accountant` under the substitution
    relation only (``neighbouring="substitute"``), with :math:`\gamma` = ``batch_size /
    dataset_size``, for symmetric additive noise (Gaussian, Laplace, Generalized
    Gaussian, binomial with ``p = 1/2``, discrete Laplace, discrete Gaussian): the upper
    end of an interval from the symmetric dominating pair, the lower end from the
    attained member pair (module docstring).

    Parameters
    ----------
    mechanism : Mechanism
        The additive-noise mechanism run on the batch.
    batch_size : int
        ``b >= 1``.
    dataset_size : int
        ``n >= b``.
    """

    mechanism: Mechanism
    batch_size: int
    dataset_size: int

    def __post_init__(self) -> None:
        if not (isinstance(self.mechanism, Mechanism) or is_user_pair(self.mechanism)) or \
                isinstance(self.mechanism, (PoissonSubsampled, FixedSizeSubsampled)):
            raise ValueError("mechanism must be an (unsubsampled) sampledprv mechanism spec, "
                             f"got {self.mechanism!r}")
        refuse_batch_scheme("FixedSizeSubsampled", self.mechanism)
        b = v.positive_int("batch_size", self.batch_size)
        n = v.positive_int("dataset_size", self.dataset_size)
        if b > n:
            raise ValueError(f"batch_size must be at most dataset_size, got batch_size={b} "
                             f"and dataset_size={n}")
        object.__setattr__(self, "batch_size", b)
        object.__setattr__(self, "dataset_size", n)

    @property
    def gamma(self) -> float:
        """Sampling fraction ``batch_size / dataset_size``."""
        return self.batch_size / self.dataset_size


# ---- tabulated pairs (integer noise) ------------------------------------------------------
@dataclass(frozen=True)
class TabulatedPair(Mechanism):
    """A pair of laws on consecutive integers, given by their log-masses (internal: what
    the accountants compose for subsampled integer noise under substitution)."""

    log_p: tuple
    log_q: tuple
    tail: float
    label: str
    mirror: bool = True
    #: error bound of the noise log pmf beyond its few ulps (``finite_law``'s ``log_error``)
    log_error: float = 0.0

    @property
    def symmetric(self) -> bool:  # type: ignore[override]
        """True when the noise is symmetric (then Q is the mirror image of P)."""
        return self.mirror

    def law(self) -> FiniteLaw:
        return windowed_law(np.array(self.log_p), np.array(self.log_q), self.tail,
                            self.log_error)

    def __repr__(self) -> str:
        return self.label


register(Family(
    name="tabulated_pair", types=(TabulatedPair,),
    **FINITE_HOOKS))


def _integer_poisson_substitute(spec: Any, q: float) -> TabulatedPair:
    log_pmf, tail = spec.noise_window(1e-40)
    c = spec.sensitivity
    lp, lq = mixture_sides(log_pmf, [(0, 1.0 - q), (c, q)], [(0, 1.0 - q), (-c, q)])
    return TabulatedPair(tuple(lp), tuple(lq), float(tail),
                         f"PoissonSubsampled({spec!r}, q={q!r}) under substitution",
                         bool(spec.symmetric), spec.noise_log_error(log_pmf.size))


# ---- Gaussian mixture pair --------------------------------------------------------------------
@dataclass(frozen=True)
class GaussianMixturePair(Mechanism):
    r"""The pair :math:`((1-q)N(0,1) + qN(\mu,1),\ (1-q)N(0,1) + qN(-\mu,1))` (internal:
    the Poisson-subsampled Gaussian under substitution, :math:`\mu = C/\sigma`)."""

    mu: float
    q: float
    symmetric = True

    def _loss(self, x: np.ndarray) -> np.ndarray:
        a, b = math.log1p(-self.q), math.log(self.q) - 0.5 * self.mu ** 2
        return np.logaddexp(a, b + self.mu * x) - np.logaddexp(a, b - self.mu * x)

    def x_star(self, y: np.ndarray) -> np.ndarray:
        r"""The ``x`` with :math:`L(x) = y` (:math:`L` odd and increasing), by safeguarded
        Newton on :math:`[0, (|y| + \log(1 - q + q e^{-\mu^2/2}) - b)/\mu]`."""
        y = np.asarray(y, dtype=np.float64)
        shape = y.shape
        ya = np.abs(y.ravel())
        mu, q = self.mu, self.q
        a, b = math.log1p(-q), math.log(q) - 0.5 * mu * mu
        hi = (ya + np.logaddexp(a, b) - b) / mu + 1.0
        lo = np.zeros_like(ya)
        x = np.minimum(ya / (2.0 * mu * q + 1e-300), hi) * 0.5
        finite = np.isfinite(ya)
        idx = np.flatnonzero(finite & (ya > 0))
        for _ in range(200):
            if idx.size == 0:
                break
            xx, l, h, yy = x[idx], lo[idx], hi[idx], ya[idx]
            f = self._loss(xx) - yy
            s1 = 1.0 / (1.0 + np.exp(a - b - mu * xx))
            s2 = 1.0 / (1.0 + np.exp(a - b + mu * xx))
            df = mu * (s1 + s2)
            l = np.where(f < 0, xx, l)
            h = np.where(f > 0, xx, h)
            with np.errstate(divide="ignore", invalid="ignore"):
                new = xx - f / df
            bad = ~((new > l) & (new < h))
            new = np.where(bad, 0.5 * (l + h), new)
            done = np.abs(new - xx) <= 1e-15 * (np.abs(xx) + 1.0)
            x[idx], lo[idx], hi[idx] = new, l, h
            idx = idx[~done]
        x = np.where(finite, np.where(ya > 0, x, 0.0), np.inf)
        return (np.sign(y.ravel()) * x).reshape(shape)

    def loss_pair(self):
        from scipy import special


        if self.q == 1.0:
            return gaussian_mu_pair(2.0 * self.mu)
        mu, q = self.mu, self.q

        def cdf_p(y):
            xs = self.x_star(y)
            return (1.0 - q) * special.ndtr(xs) + q * special.ndtr(xs - mu)

        def sf_p(y):
            xs = self.x_star(y)
            return (1.0 - q) * special.ndtr(-xs) + q * special.ndtr(mu - xs)

        under_p = LossDistribution(cdf_cont=cdf_p, sf_cont=sf_p, cont_mass=1.0)
        # Q is the mirror image of P and L is odd: the law under Q is that of -L under P
        return under_p, under_p.negated()

    def _numpy_pair(self):
        mu, q = self.mu, self.q

        def draw(sign: float):
            def f(r: np.random.Generator, n: int) -> np.ndarray:
                x = r.standard_normal(n) + np.where(r.random(n) < q, sign * mu, 0.0)
                return self._loss(x)
            return f
        return draw(1.0), draw(-1.0)

    def loss_sampler(self, direction: str):
        """Python sampler ``f(rng, n)`` of the loss (the hook of
        :mod:`sampledprv.sampled.draws.hooks`)."""
        lp, lq = self._numpy_pair()
        return lp if str(direction) == "remove" else (lambda r, n: -lq(r, n))

    numpy_loss_sampler = loss_sampler


register(Family(
    name="gaussian_mixture_pair", types=(GaussianMixturePair,),
    loss_pair=lambda m: m.loss_pair(), numpy_losses=lambda m: m._numpy_pair(),
    **method_hooks("loss_sampler", "numpy_loss_sampler")))


# ---- resolution ----------------------------------------------------------------------------
def _as_gaussian(m: Mechanism) -> Gaussian | None:
    if isinstance(m, Gaussian):
        return m
    if isinstance(m, GeneralizedGaussian) and m.beta == 2.0:
        g = m.one_dimensional()
        return Gaussian(g.scale / math.sqrt(2.0), g.sensitivity)
    return None


def _refuse(spec: Mechanism, why: str) -> UnsupportedRelationError:
    return UnsupportedRelationError(
        f"{spec!r} cannot certify the neighbouring relation 'substitute': {why}")


def subsampled_for_relation(spec: Mechanism, relation: NeighbouringRelation) -> Mechanism:
    """The spec whose canonical pair is the worst case of a subsampled ``spec`` under
    ``relation`` (module docstring)."""
    if is_user_pair(spec.mechanism):      # LogDensityPair / PrivacyLossSampler: sampled only
        return user_pair_hook("for_relation")(spec, relation)
    if isinstance(spec, FixedSizeSubsampled):
        if relation is NeighbouringRelation.ADD_REMOVE:
            raise UnsupportedRelationError(
                f"{spec!r} cannot certify the neighbouring relation 'add_remove': a fixed "
                "batch size is defined for datasets of one size; account it with "
                "neighbouring='substitute', or use PoissonSubsampled under add/remove")
        base = spec.mechanism
        if not family_of(base).extras.get("shift_family", False) and \
                not family_of(base).extras.get("integer_noise", False):
            raise _refuse(spec, "sampling without replacement is accounted for "
                          "additive-noise mechanisms only (Gaussian, Laplace, Generalized "
                          "Gaussian, binomial, discrete Laplace, discrete Gaussian)")
        if not base.symmetric:
            raise _refuse(spec, "sampling without replacement under substitution is certified "
                          "for symmetric noise only (the dominating pair of the upper end "
                          "needs the noise's mirror symmetry); use p = 1/2 for binomial noise")
        return PoissonSubsampled(_family_relation(base, relation), spec.gamma)
    assert isinstance(spec, PoissonSubsampled)
    base = spec.mechanism
    if relation is NeighbouringRelation.ADD_REMOVE:
        _family_relation(base, relation)          # raises if the base refuses add/remove
        return spec
    gauss = _as_gaussian(base)
    if gauss is not None:
        return GaussianMixturePair(gauss.mu, spec.q)
    if family_of(base).extras.get("integer_noise", False):
        if spec.q == 1.0:
            return _family_relation(base, relation)
        return _integer_poisson_substitute(base, spec.q)
    raise _refuse(spec, "Poisson subsampling under substitution is accounted for the "
                  "Gaussian and the integer-noise mechanisms (binomial, discrete Laplace, "
                  "discrete Gaussian); use neighbouring='add_remove', or one of those")


# ---- the symmetric dominating pair of the fixed-size family ------------------------------------
_U = float(np.finfo(np.float64).eps)


@dataclass(frozen=True)
class SymmetricDominatingPair(Mechanism):
    r"""The symmetric pair :math:`S` whose privacy profile is
    :math:`\max(H_\alpha(P^*\|Q^*), H_\alpha(Q^*\|P^*))` (the profile of Dong, Roth and
    Su's :math:`C_\gamma(f)`, module docstring) for a ``member`` pair
    :math:`(P^*, Q^*)` whose remove direction is the larger for :math:`\alpha \ge 1`
    (internal: the upper end of fixed-size batches under substitution, module
    docstring).

    With :math:`\ell = \log p^*/q^*`, the loss of :math:`S` under its first law is
    :math:`\ell` under :math:`P^*` on :math:`\{\ell > 0\}`, :math:`-\ell` under
    :math:`Q^*` on :math:`\{\ell > 0\}`, and 0 with the remaining mass
    :math:`1 - P^*(\ell > 0) - Q^*(\ell > 0)` (non-negative because the envelope is
    convex).  Its second law is the mirror image, so one direction serves both."""

    member: Mechanism
    symmetric = True

    def loss_pair(self):
        under_p, under_q = loss_pair(self.member)
        law = symmetrized_law(under_p, under_q)
        return law, law.negated()

    def __repr__(self) -> str:
        return f"SymmetricDominatingPair({self.member!r})"


def symmetrized_law(under_p: Any, under_q: Any) -> Any:
    r"""The loss law of :class:`SymmetricDominatingPair` from the member's laws of
    :math:`\ell` under :math:`P^*` (``under_p``) and under :math:`Q^*` (``under_q``)."""
    lp, lq = under_p, under_q
    zero = np.zeros(1)
    sp0, sq0 = float(lp.sf_cont(zero)[0]), float(lq.sf_cont(zero)[0])
    cp0 = float(lp.cdf_cont(zero)[0])

    def cdf(y: np.ndarray) -> np.ndarray:
        y = np.asarray(y, dtype=np.float64)
        neg = lq.sf_cont(np.maximum(-y, 0.0))
        pos = sq0 + np.maximum(lp.cdf_cont(np.maximum(y, 0.0)) - cp0, 0.0)
        return np.where(y < 0, neg, pos)

    def sf(y: np.ndarray) -> np.ndarray:
        y = np.asarray(y, dtype=np.float64)
        pos = lp.sf_cont(np.maximum(y, 0.0))
        neg = sp0 + np.maximum(sq0 - lq.sf_cont(np.maximum(-y, 0.0)), 0.0)
        return np.where(y >= 0, pos, neg)

    kp, kq = lp.atom_values > 0, lq.atom_values > 0
    values = np.concatenate([lp.atom_values[kp], -lq.atom_values[kq]])
    masses = np.concatenate([lp.atom_masses[kp], lq.atom_masses[kq]])
    rest = sp0 + sq0 + float(masses.sum()) + lp.p_pos_inf + lq.p_pos_inf
    # the atom at 0 is a difference: its rounding goes to the mass defect
    atom0 = 1.0 - rest
    defect = lp.mass_defect + lq.mass_defect + 4.0 * _U * (masses.size + 4) + max(-atom0, 0.0)
    values = np.append(values, 0.0)
    masses = np.append(masses, max(atom0, 0.0))
    conts = sp0 + sq0
    support = (-max(lq.support[1], 0.0), max(lp.support[1], 0.0)) if conts > 0 else (0.0, 0.0)
    return LossDistribution(
        cdf, sf, conts, values, masses, p_pos_inf=lp.p_pos_inf, p_neg_inf=lq.p_pos_inf,
        support=support, mass_defect=defect,
        mass_rel_error=max(lp.mass_rel_error, lq.mass_rel_error),
        value_error=max(lp.value_error, lq.value_error),
        values_certified=lp.values_certified and lq.values_certified)


def _symmetrized_samplers(pair: SymmetricDominatingPair):
    r"""``(f_P, f_Q)`` samplers of the loss of ``pair`` under its two laws: a category
    (:math:`\ell` under :math:`P^*` on :math:`\ell > 0`, :math:`-\ell` under
    :math:`Q^*` on :math:`\ell > 0`, or 0) with its exact mass, then the member's draws
    conditioned on :math:`\ell > 0` by rejection (the numpy twin of the fused kernel's
    symmetrized mode)."""
    lp, lq = loss_pair(pair.member)
    zero = np.zeros(1)
    a = float(lp.sf(zero)[0])
    b = float(lq.sf(zero)[0])
    draw_p = spec_loss_sampler(pair.member, "remove")           # l under P*
    draw_add = spec_loss_sampler(pair.member, "add")            # -l under Q*

    def positive(r: np.random.Generator, draw, rate: float, n: int, sign: float) -> np.ndarray:
        out, got = np.empty(n), 0
        while got < n:
            x = sign * draw(r, max(64, int(1.2 * (n - got) / max(rate, 1e-9))))
            x = x[x > 0][: n - got]
            out[got: got + x.size] = x
            got += x.size
        return out

    def under_p(r: np.random.Generator, n: int) -> np.ndarray:
        u = r.random(n)
        out = np.zeros(n)
        ia, ib = u < a, (u >= a) & (u < a + b)
        out[ia] = positive(r, draw_p, a, int(ia.sum()), 1.0)
        out[ib] = -positive(r, draw_add, b, int(ib.sum()), -1.0)
        return out

    return under_p, (lambda r, n: -under_p(r, n))


register(Family(
    name="symmetric_dominating_pair", types=(SymmetricDominatingPair,),
    loss_pair=lambda m: m.loss_pair(), numpy_losses=_symmetrized_samplers,
    # the member's bound through the symmetrisation (rdp numerics)
    renyi=Lazy("sampledprv.rdp.divergence", "symmetric_pair_renyi"), renyi_costly=True))


def fixed_size_bounds(spec: Mechanism, relation: NeighbouringRelation) -> Tuple[Mechanism,
                                                                                 Mechanism]:
    """``(upper, lower)``: the specs whose compositions give the upper and the lower end
    of a fixed-size ``spec`` under ``relation`` (module docstring)."""
    if is_user_pair(spec.mechanism):      # LogDensityPair / PrivacyLossSampler: sampled only
        return user_pair_hook("fixed_size_bounds")(spec, relation)
    lower = subsampled_for_relation(spec, relation)
    if getattr(lower, "symmetric", False):      # gamma = 1: the pair is already symmetric
        return lower, lower
    return SymmetricDominatingPair(lower), lower
