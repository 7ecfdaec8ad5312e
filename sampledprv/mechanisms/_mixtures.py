r"""Two pairs that dp-accounting events need and the built-in families do not have.

* :class:`MixtureOfGaussians` -- dp-accounting's ``MixtureOfGaussiansDpEvent``
  (Chua et al. 2024, arXiv:2310.15526): on ``D`` the output is :math:`N(0, \sigma^2)`, on
  the neighbour ``D'`` (with the record) it is :math:`\sum_i p_i N(c_i, \sigma^2)`.
* :class:`TaggedMixture` -- the pair that reveals which of several pairs ran: with
  probability ``w_i`` the pair ``parts[i]`` is used and the index ``i`` is published.  Its
  privacy loss is the loss of the part that ran, so its laws are the ``w``-mixtures of
  the parts' laws (in each direction).  It dominates any mechanism that, conditioned on
  a random event independent of the neighbouring record, is dominated by ``parts[i]``
  (joint convexity of the hockey-stick divergence, then publishing the index only adds
  information); dominating pairs compose (Zhu, Dong and Wang 2022, Theorem 10).  Used
  for dp-accounting's ``TruncatedSubsampledGaussianDpEvent``.

Both are registered with :mod:`sampledprv.mechanisms.registry` when this module is
imported, so :class:`sampledprv.Accountant` composes them like any built-in spec.

The mixture-of-Gaussians loss, in units of :math:`\sigma` (:math:`\mu_i = c_i/\sigma
\ge 0`, :math:`P` the law with the record):

.. math:: \ell(x) = \log \sum_i p_i e^{\mu_i x - \mu_i^2/2}

is convex and nondecreasing in :math:`x` (a log-sum-exp of affine maps with slopes
:math:`\mu_i \ge 0`), strictly increasing once some :math:`\mu_i > 0`, and tends to
:math:`\log p_0` (the total weight of the :math:`\mu_i = 0` components; :math:`-\infty`
without them) as :math:`x \to -\infty`.  With :math:`x^*(y) = \ell^{-1}(y)`:
:math:`P(\ell \le y) = \sum_i p_i \Phi(x^* - \mu_i)` and :math:`Q(\ell \le y) =
\Phi(x^*)`, each with its survival function computed from its own tail.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..core import validation as v
from ..core.law import LossDistribution, mixture
from .base import Mechanism, NeighbouringRelation, as_relation
from .laws import loss_pair
from .numpy_losses import spec_loss_sampler
from .registry import Family, UnsupportedRelationError, register

__all__ = ["MixtureOfGaussians", "TaggedMixture"]


@dataclass(frozen=True)
class MixtureOfGaussians(Mechanism):
    r"""The pair :math:`(\sum_i p_i N(c_i, \sigma^2),\ N(0, \sigma^2))` (module docstring).

    Accounted under add/remove only (the pair describes one added record); the
    substitution relation is refused, as dp-accounting's PLD accountant does.

    Parameters
    ----------
    sigma : float
        Noise standard deviation (> 0), in the units of the sensitivities.
    sensitivities : sequence of float
        The shifts :math:`c_i \ge 0` (the support of the sensitivity random variable).
    probs : sequence of float
        Their probabilities :math:`p_i \ge 0`, summing to 1 (within 1e-9; renormalized).
    """

    sigma: float
    sensitivities: tuple
    probs: tuple

    def __post_init__(self) -> None:
        object.__setattr__(self, "sigma", v.positive("sigma", self.sigma))
        try:
            c = np.asarray(self.sensitivities, dtype=np.float64).ravel()
            p = np.asarray(self.probs, dtype=np.float64).ravel()
        except (TypeError, ValueError):
            raise ValueError("sensitivities and probs must be sequences of numbers, got "
                             f"{self.sensitivities!r} and {self.probs!r}") from None
        if c.size == 0 or c.size != p.size:
            raise ValueError("sensitivities and probs must be non-empty and of the same length, "
                             f"got {c.size} and {p.size}")
        if not np.all(np.isfinite(c)) or np.any(c < 0):
            raise ValueError(f"sensitivities must be finite numbers >= 0, got {self.sensitivities!r}"
                             " (the loss is monotone only for shifts of one sign)")
        if not np.all(np.isfinite(p)) or np.any(p < 0) or abs(p.sum() - 1.0) > 1e-9:
            raise ValueError(f"probs must be numbers >= 0 summing to 1, got {self.probs!r}")
        p = p / p.sum()
        keep = p > 0
        # merge equal shifts, sorted
        merged: dict = {}
        for ci, pi in zip(c[keep], p[keep]):
            merged[float(ci)] = merged.get(float(ci), 0.0) + float(pi)
        shifts = tuple(sorted(merged))
        object.__setattr__(self, "sensitivities", shifts)
        object.__setattr__(self, "probs", tuple(merged[s] for s in shifts))
        mu = max(shifts) / self.sigma
        v.loss_limit(f"MixtureOfGaussians(sigma={self.sigma!r}, ...)",
                     "the largest privacy-loss mean mu^2/2", 0.5 * mu * mu,
                     "Use a larger sigma")

    @property
    def trivial(self) -> bool:
        """True when every shift is 0 (the two laws coincide)."""
        return max(self.sensitivities) == 0.0

    # ---- the loss and its inverse, in units of sigma -------------------------------------
    def _mus(self) -> tuple[np.ndarray, np.ndarray]:
        mu = np.array(self.sensitivities) / self.sigma
        logw = np.log(np.array(self.probs)) - 0.5 * mu * mu
        return mu, logw

    def loss(self, x: np.ndarray) -> np.ndarray:
        r""":math:`\ell(x)` at standardized points ``x`` (vectorized)."""
        mu, logw = self._mus()
        x = np.asarray(x, dtype=np.float64)
        with np.errstate(invalid="ignore"):
            # a zero shift contributes log p_0 at every x, -inf included
            t = np.where(mu == 0.0, logw, logw + mu * x[..., None])
        top = t.max(-1)
        with np.errstate(invalid="ignore", divide="ignore"):
            out = top + np.log(np.exp(t - top[..., None]).sum(-1))
        return np.where(np.isinf(top), top, out)

    def floor(self) -> float:
        """``lim ell(x)`` as ``x -> -inf``: log of the weight at shift 0 (or ``-inf``)."""
        mu, _ = self._mus()
        w0 = sum(p for p, m in zip(self.probs, mu) if m == 0.0)
        return math.log(w0) if w0 > 0 else -math.inf

    def x_star(self, y: np.ndarray) -> np.ndarray:
        r"""The standardized ``x`` with :math:`\ell(x) = y` (``-inf`` at or below
        :meth:`floor`), by bracketing then safeguarded Newton to full precision."""
        mu, logw = self._mus()
        y = np.asarray(y, dtype=np.float64)
        shape = y.shape
        yy = y.ravel()
        out = np.full(yy.shape, -np.inf)
        out[yy == np.inf] = np.inf
        live = np.isfinite(yy) & (yy > self.floor())
        if not live.any():
            return out.reshape(shape)
        z = yy[live]
        j = int(np.argmax(mu))
        # ell(x) >= logw_j + mu_j x gives the upper end of the bracket
        hi = (z - logw[j]) / mu[j] + 1e-12 * (1.0 + np.abs(z))
        lo = hi - 1.0
        for _ in range(80):
            bad = self.loss(lo) > z
            if not bad.any():
                break
            lo = np.where(bad, lo - 2.0 * (hi - lo), lo)
        x = 0.5 * (lo + hi)
        # Newton on the points not yet converged only: a point leaves with its first
        # iterate whose step is below 4e-16 (|x| + 1)
        result = np.empty_like(x)
        idx = np.arange(x.size)
        for _ in range(200):
            t = logw + mu * x[:, None]
            top = t.max(-1)
            e = np.exp(t - top[:, None])
            s = e.sum(-1)
            f = top + np.log(s) - z
            df = (e * mu).sum(-1) / s
            lo = np.where(f < 0, x, lo)
            hi = np.where(f > 0, x, hi)
            with np.errstate(divide="ignore", invalid="ignore"):
                new = x - f / df
            new = np.where((new > lo) & (new < hi), new, 0.5 * (lo + hi))
            done = np.abs(new - x) <= 4e-16 * (np.abs(x) + 1.0)
            result[idx[done]] = new[done]
            keep = ~done
            if not keep.any():
                break
            idx, x, lo, hi, z = idx[keep], new[keep], lo[keep], hi[keep], z[keep]
        else:
            result[idx] = new[keep]
        out[live] = result
        return out.reshape(shape)

    def loss_pair(self):
        from scipy import special


        mu = np.array(self.sensitivities) / self.sigma
        p = np.array(self.probs)

        def cdf_p(y):
            xs = self.x_star(y)
            return (p * special.ndtr(xs[..., None] - mu)).sum(-1)

        def sf_p(y):
            xs = self.x_star(y)
            return (p * special.ndtr(mu - xs[..., None])).sum(-1)

        def cdf_q(y):
            return special.ndtr(self.x_star(y))

        def sf_q(y):
            return special.ndtr(-self.x_star(y))

        support = (self.floor(), math.inf)
        return (LossDistribution(cdf_p, sf_p, 1.0, support=support),
                LossDistribution(cdf_q, sf_q, 1.0, support=support))

    def _numpy_pair(self):
        mu = np.array(self.sensitivities) / self.sigma
        p = np.array(self.probs)

        def under_p(r: np.random.Generator, n: int) -> np.ndarray:
            shift = mu[r.choice(mu.size, size=n, p=p)]
            return self.loss(r.standard_normal(n) + shift)

        return under_p, (lambda r, n: self.loss(r.standard_normal(n)))


def _mog_relation(spec: MixtureOfGaussians, relation: NeighbouringRelation) -> Mechanism:
    if relation is NeighbouringRelation.ADD_REMOVE:
        return spec
    raise UnsupportedRelationError(
        f"{spec!r} cannot certify the neighbouring relation {relation.value!r}: the mixture "
        "of Gaussians describes one added or removed record; account it with "
        "neighbouring='add_remove'")


register(Family(
    name="mixture_of_gaussians", types=(MixtureOfGaussians,),
    loss_pair=lambda m: m.loss_pair(), numpy_losses=lambda m: m._numpy_pair(),
    for_relation=_mog_relation,
    relations_note="add/remove only"))


@dataclass(frozen=True)
class TaggedMixture(Mechanism):
    r"""With probability ``weights[i]`` run the pair ``parts[i]`` and publish ``i``
    (module docstring).

    Parameters
    ----------
    weights : sequence of float
        Probabilities (>= 0, summing to 1 within 1e-9).
    parts : sequence of Mechanism
        Specs already resolved for ``relation`` (their canonical pairs are the worst
        cases of the parts under it).
    relation : NeighbouringRelation or str
        The relation the parts were resolved for; an accountant under another relation
        refuses the spec.
    label : str
        How the spec prints (for example the dp-accounting event it stands for).
    """

    weights: tuple
    parts: tuple
    relation: NeighbouringRelation = NeighbouringRelation.ADD_REMOVE
    label: str = ""

    def __post_init__(self) -> None:
        w = tuple(float(x) for x in self.weights)
        parts = tuple(self.parts)
        if len(w) != len(parts) or not parts:
            raise ValueError("weights and parts must be non-empty and of the same length")
        if any(not (x >= 0.0) for x in w) or abs(sum(w) - 1.0) > 1e-9:
            raise ValueError(f"weights must be numbers >= 0 summing to 1, got {self.weights!r}")
        if not all(isinstance(p, Mechanism) for p in parts):
            raise ValueError("parts must be sampledprv mechanism specs")
        object.__setattr__(self, "weights", w)
        object.__setattr__(self, "parts", parts)
        object.__setattr__(self, "relation", as_relation(self.relation, "relation"))

    @property
    def symmetric(self) -> bool:  # type: ignore[override]
        return all(getattr(p, "symmetric", False) for w, p in zip(self.weights, self.parts)
                   if w > 0)

    def loss_pair(self):

        pairs = [loss_pair(p) for p in self.parts]
        return (mixture(list(self.weights), [a for a, _ in pairs]),
                mixture(list(self.weights), [b for _, b in pairs]))

    def __repr__(self) -> str:
        if self.label:
            return self.label
        inner = ", ".join(f"{w:.6g}: {p!r}" for w, p in zip(self.weights, self.parts))
        return f"TaggedMixture({inner})"


def _tagged_relation(spec: TaggedMixture, relation: NeighbouringRelation) -> Mechanism:
    if relation is spec.relation:
        return spec
    raise UnsupportedRelationError(
        f"{spec!r} was resolved for the neighbouring relation {spec.relation.value!r} and "
        f"cannot be accounted under {relation.value!r}; build it again for that relation")


def _tagged_samplers(spec: TaggedMixture):
    """numpy samplers of the loss under the two laws: the part by its weight, then the
    part's own draw (its remove loss under P, minus its add loss under Q)."""
    w = np.array(spec.weights)
    rem = [spec_loss_sampler(p, "remove") for p in spec.parts]
    add = [spec_loss_sampler(p, "add") for p in spec.parts]

    def draw(samplers, sign):
        def f(r: np.random.Generator, n: int) -> np.ndarray:
            counts = r.multinomial(n, w)
            out = np.concatenate([sign * s(r, int(c)) for s, c in zip(samplers, counts) if c])
            r.shuffle(out)
            return out
        return f
    return draw(rem, 1.0), draw(add, -1.0)


register(Family(
    name="tagged_mixture", types=(TaggedMixture,),
    loss_pair=lambda m: m.loss_pair(), for_relation=_tagged_relation,
    numpy_losses=_tagged_samplers,
    relations_note="parts resolved for one relation"))
