r"""The family hook for continuous additive noise: one description, every hook derived.

A continuous additive-noise mechanism :math:`f(D) + s Z` (``Z`` a symmetric,
log-concave noise of unit scale, ``s`` the scale, :math:`\Delta` the sensitivity) is
described by an :class:`AdditiveNoise`: its log-density, CDF, inverse CDF (the sampler)
and, if known, its Renyi divergence.  :func:`additive_family` turns it into a registered
:class:`~.registry.Family` with

* the exact privacy-loss law (:func:`loss_pair`): with :math:`d = \Delta/s` the loss
  :math:`\ell(z) = \log f(z) - \log f(z - d)` is non-increasing (log-concavity), so
  :math:`P_0[\ell \le y] = P[Z \ge z^*(y)] = F(-z^*(y))` with :math:`z^*` the inverse of
  :math:`\ell` (closed form if the description gives one, else bisection to float
  precision), and the law under :math:`Q_0` is the negation (symmetry);
  Poisson-subsampled laws follow from it as for every family;
* the sampler kind of the fused Numba kernels: the description itself
  (:mod:`sampledprv.sampled.draws._mechloss` compiles a fill and a kernel for it, cached
  on disk under the family's name, on its first use only), and the numpy and torch
  samplers (inverse CDF of a uniform on :math:`(0, 1)`);
* the Renyi bound: the description's, else the pure-DP bound of a bounded loss
  (:math:`|\ell| \le \varepsilon` makes the pair :math:`\varepsilon`-DP);
* the command-line kind ``<name> scale=S [sensitivity=D]`` and its format.

The functions of the description are written twice: scalar ones with :mod:`math` only
(Numba compiles them into the kernels) and array ones taking the array namespace ``xp``
(:mod:`numpy` or :mod:`torch`: ``xp.exp``, ``xp.log1p``, ``xp.abs``, ...).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Dict, Optional, Tuple, Type

import numpy as np

from ..core import validation as v
from .base import Mechanism, doubled_under_substitution
from .randomized_response import pure_renyi
from .registry import CliKind, Family, register

__all__ = ["AdditiveNoise", "additive_family", "loss_pair", "check_scale_sensitivity"]


@dataclass(frozen=True)
class AdditiveNoise:
    """A symmetric, log-concave noise law of unit scale (module docstring).

    Attributes
    ----------
    name : str
        Identifier (letters, digits, ``_``): the sampler kind and its kernel's cache name.
    logpdf : callable ``float -> float``
        :math:`\\log f(z)`, normalized, :mod:`math` only (compiled by Numba).
    ppf : callable ``float -> float``
        Inverse CDF on :math:`(0, 1)`, :mod:`math` only (compiled by Numba).
    logpdf_xp, ppf_xp : callable ``(array, xp) -> array``
        The same on arrays of the namespace ``xp`` (numpy or torch).
    cdf : callable ``ndarray -> ndarray``
        :math:`F(z)` on numpy arrays, accurate in the lower tail (the exact law's
        tails are values of it).
    loss_bound : callable ``d -> float``, optional
        :math:`\\sup_z |\\ell(z)|` for :math:`d = \\Delta/s` (``None``: unbounded).
    loss_inverse : callable ``(y, d) -> z``, optional
        :math:`z^*(y)` on numpy arrays, for ``y`` inside the loss range (else bisection).
    renyi : callable ``(order, d) -> float``, optional
        A certified upper bound on :math:`D_\\alpha` (rounded outward).
    """

    name: str
    logpdf: Callable[[float], float]
    ppf: Callable[[float], float]
    logpdf_xp: Callable[[Any, Any], Any]
    ppf_xp: Callable[[Any, Any], Any]
    cdf: Callable[[np.ndarray], np.ndarray]
    loss_bound: Optional[Callable[[float], float]] = None
    loss_inverse: Optional[Callable[[np.ndarray, float], np.ndarray]] = None
    renyi: Optional[Callable[[float, float], float]] = None

    def __post_init__(self) -> None:
        if not self.name.isidentifier():
            raise ValueError(f"AdditiveNoise name must be an identifier, got {self.name!r}")

    def loss(self, z: np.ndarray, d: float) -> np.ndarray:
        """:math:`\\ell(z) = \\log f(z) - \\log f(z - d)` on numpy arrays."""
        return self.logpdf_xp(z, np) - self.logpdf_xp(z - d, np)


def _bisect_inverse(noise: AdditiveNoise, y: np.ndarray, d: float) -> np.ndarray:
    """:math:`z^*(y)` for ``y`` strictly inside the loss range, by bisection (the loss
    is non-increasing); 200 halvings of a bracket grown until it holds every ``y``."""
    lo = np.full(y.shape, -1.0 - d)
    hi = np.full(y.shape, 1.0 + d)
    for _ in range(64):
        bad = noise.loss(lo, d) < y
        if not bad.any():
            break
        lo = np.where(bad, 2.0 * lo, lo)
    for _ in range(64):
        bad = noise.loss(hi, d) > y
        if not bad.any():
            break
        hi = np.where(bad, 2.0 * hi, hi)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        right = noise.loss(mid, d) >= y          # z* lies right of mid
        lo = np.where(right, mid, lo)
        hi = np.where(right, hi, mid)
    return 0.5 * (lo + hi)


def loss_pair(noise: AdditiveNoise, d: float) -> Tuple[Any, Any]:
    r"""Exact laws of :math:`\ell` under :math:`P_0` and :math:`Q_0` (module docstring)."""
    from ..core.law import LossDistribution

    bound = math.inf if noise.loss_bound is None else float(noise.loss_bound(d))

    def z_star(y: np.ndarray) -> np.ndarray:
        y = np.asarray(y, dtype=np.float64)
        inner = np.clip(y, -bound, bound)
        if noise.loss_inverse is not None:
            with np.errstate(all="ignore"):
                z = noise.loss_inverse(inner, d)
        else:
            flat = inner.ravel()
            z = _bisect_inverse(noise, flat, d).reshape(y.shape)
        z = np.where(y >= bound, -np.inf, z)
        return np.where(y <= -bound, np.inf, z)

    def cdf(y: Any) -> np.ndarray:            # P0[l <= y] = P[Z >= z*(y)] = F(-z*(y))
        return noise.cdf(-z_star(y))

    def sf(y: Any) -> np.ndarray:             # P0[l > y] = F(z*(y))
        return noise.cdf(z_star(y))

    support = (-bound, bound) if math.isfinite(bound) else (-np.inf, np.inf)
    under_p = LossDistribution(cdf_cont=cdf, sf_cont=sf, cont_mass=1.0, support=support)
    return under_p, under_p.negated()


def numpy_losses(noise: AdditiveNoise, d: float) -> Tuple[Callable, Callable]:
    """numpy samplers ``f(rng, n)`` of :math:`\\ell` under :math:`P_0` and :math:`Q_0`."""
    def draw(rng: np.random.Generator, n: int) -> np.ndarray:
        u = (rng.integers(0, 1 << 53, size=n).astype(np.float64) + 0.5) / float(1 << 53)
        return noise.ppf_xp(u, np)

    return (lambda rng, n: noise.loss(draw(rng, n), d),
            lambda rng, n: noise.loss(draw(rng, n) + d, d))


def additive_family(name: str, spec_type: Type[Mechanism], noise: AdditiveNoise, *,
                    cli_name: str, help: str, aliases: Tuple[str, ...] = ()) -> Family:
    """The registered family of ``spec_type`` (a frozen spec with fields ``scale`` and
    ``sensitivity``) with noise ``noise`` (module docstring)."""
    def d_of(m: Any) -> float:
        return float(m.sensitivity) / float(m.scale)

    def renyi(m: Any, order: float, direction: str) -> float:
        if noise.renyi is not None:
            return float(noise.renyi(order, d_of(m)))
        if noise.loss_bound is not None:
            return pure_renyi(float(noise.loss_bound(d_of(m))), order)
        raise ValueError(f"no Renyi divergence bound for {m!r}: its noise gives neither a "
                         "Renyi bound nor a bounded loss")

    def build(p: Dict[str, Any]) -> Mechanism:
        return spec_type(p["scale"], p.get("sensitivity", 1.0))

    def fmt(m: Any) -> str:
        g = format(float(m.scale), ".12g")
        s = "" if m.sensitivity == 1.0 else f" sensitivity={format(float(m.sensitivity), '.12g')}"
        return f"{cli_name} scale={g}{s}"

    return register(Family(
        name=name, types=(spec_type,),
        loss_pair=lambda m: loss_pair(noise, d_of(m)),
        numba_source=lambda m: (noise, [d_of(m)]),
        torch_source=lambda m: ("additive", float(d_of(m)), noise),
        numpy_losses=lambda m: numpy_losses(noise, d_of(m)),
        for_relation=doubled_under_substitution,
        cli=(CliKind(cli_name, (("scale",),), ("sensitivity",), ("scale",),
                     f"{cli_name} scale=2", help, build, aliases=aliases),),
        format=fmt,
        relations_note="substitution doubles the sensitivity",
        extras={"shift_family": True, "additive_noise": noise},
        renyi=renyi if (noise.renyi is not None or noise.loss_bound is not None) else None))


def check_scale_sensitivity(spec: Any, limit_name: str) -> None:
    """``__post_init__`` of an additive spec: ``scale`` and ``sensitivity`` positive
    floats (stored as such), and a representable loss scale ``sensitivity / scale``."""
    object.__setattr__(spec, "scale", v.positive("scale", spec.scale))
    object.__setattr__(spec, "sensitivity", v.positive("sensitivity", spec.sensitivity))
    v.loss_limit(f"{limit_name}(scale={spec.scale!r}, sensitivity={spec.sensitivity!r})",
                 "the privacy loss scale sensitivity/scale", spec.sensitivity / spec.scale,
                 f"Use scale >= sensitivity / {v.MAX_LOSS:.0e} "
                 f"(= {spec.sensitivity / v.MAX_LOSS:.4g} here)")
