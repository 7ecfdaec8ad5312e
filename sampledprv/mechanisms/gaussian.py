r"""The Gaussian mechanism :math:`f(D) + N(0, \sigma^2 I)`: spec, exact law, samplers, CLI.

Canonical pair :math:`P_0 = N(0, \sigma^2)`, :math:`Q_0 = N(\Delta, \sigma^2)` with
:math:`\mu = \Delta/\sigma`: the loss is :math:`N(\mu^2/2, \mu^2)` under :math:`P_0` and
:math:`N(-\mu^2/2, \mu^2)` under :math:`Q_0`, the same law in both directions.
Under substitution a sum moves by up to :math:`2\Delta` (``sensitivity`` is the
per-record add/remove bound), so the worst pair is the same noise with sensitivity
:math:`2\Delta`.
"""

from __future__ import annotations

import math
from dataclasses import KW_ONLY, InitVar, dataclass
from typing import Any, Dict, Optional

from ..core import validation as v
from ..core.law import LossDistribution
from ..core.normal_cdf import ndtr
from ..core.outward import up
from ..core.formatting import spec_number as _g
from .base import doubled_under_substitution, Mechanism
from .registry import CliKind, Family, register, torch_from_kernel

__all__ = ["Gaussian", "gaussian_mu_pair"]


#: largest mu = sensitivity / sigma: the loss mean mu^2 / 2 stays below ``MAX_LOSS``
_MU_MAX = math.sqrt(2.0 * v.MAX_LOSS)


@dataclass(frozen=True)
class Gaussian(Mechanism):
    r"""Gaussian mechanism :math:`f(D) + N(0, \sigma^2 I)`.

    Parameters
    ----------
    sigma : float
        Standard deviation of the noise (> 0), in the units of the query.
    sensitivity : float
        L2 sensitivity of the query (> 0), the per-record (add/remove) bound.  Only
        ``mu = sensitivity / sigma`` matters: the privacy loss is
        :math:`N(\mu^2/2, \mu^2)` in both directions.  Under the substitution relation
        the accountants use ``2 * sensitivity``.
    noise_multiplier : float, keyword only
        Opacus' and dp-accounting's spelling, in units of the sensitivity (the clipping
        norm): ``Gaussian(noise_multiplier=z, sensitivity=C)`` is
        ``Gaussian(sigma=z * C, sensitivity=C)``.  Give it or ``sigma``, not both.
    """

    sigma: Optional[float] = None
    sensitivity: float = 1.0
    _: KW_ONLY
    noise_multiplier: InitVar[Optional[float]] = None
    symmetric = True

    def __post_init__(self, noise_multiplier: Optional[float] = None) -> None:
        if noise_multiplier is not None:
            z = v.positive("noise_multiplier", noise_multiplier)
            if self.sigma is not None:
                raise ValueError(
                    f"give sigma= or noise_multiplier= (Opacus' name for sigma / "
                    f"sensitivity), not both: got sigma={self.sigma!r}, "
                    f"noise_multiplier={noise_multiplier!r}")
            object.__setattr__(self, "sigma", z * v.positive("sensitivity", self.sensitivity))
        if self.sigma is None:
            raise ValueError("Gaussian needs sigma= (the noise standard deviation, in the "
                             "units of the query) or noise_multiplier= (sigma / sensitivity, "
                             "Opacus' name)")
        object.__setattr__(self, "sigma", v.positive("sigma", self.sigma))
        object.__setattr__(self, "sensitivity", v.positive("sensitivity", self.sensitivity))
        mu = self.sensitivity / self.sigma
        v.loss_limit(f"Gaussian(sigma={self.sigma!r}, sensitivity={self.sensitivity!r})",
                     f"the privacy-loss mean mu^2/2 (mu = sensitivity/sigma = {mu:.4g})",
                     0.5 * mu * mu,
                     f"Use sigma >= sensitivity / {_MU_MAX:.1f} "
                     f"(= {self.sensitivity / _MU_MAX:.4g} here), i.e. mu <= {_MU_MAX:.1f}")

    @property
    def mu(self) -> float:
        """Gaussian-DP parameter ``sensitivity / sigma``."""
        return self.sensitivity / self.sigma


def gaussian_mu_pair(mu: float):
    r"""Laws of :math:`\ell` under :math:`P_0` and :math:`Q_0`: :math:`N(\pm\mu^2/2, \mu^2)`."""
    import numpy as np

    m = 0.5 * mu * mu

    def law(mean: float) -> LossDistribution:
        return LossDistribution(
            cdf_cont=lambda y: ndtr((np.asarray(y, dtype=np.float64) - mean) / mu),
            sf_cont=lambda y: ndtr((mean - np.asarray(y, dtype=np.float64)) / mu),
            cont_mass=1.0)
    return law(m), law(-m)


def _numba(spec: Gaussian):
    return "gaussian", [spec.mu]


def gaussian_numpy_losses(mu: float):
    """numpy samplers of :math:`\\ell` under :math:`P_0` and :math:`Q_0`."""
    return (lambda r, n: mu * mu / 2 + mu * r.standard_normal(n),
            lambda r, n: -mu * mu / 2 + mu * r.standard_normal(n))



def gaussian_renyi(spec: Gaussian, order: float, direction: str) -> float:
    r""":math:`D_\alpha = \alpha\mu^2/2` in both directions (exact)."""
    return up(order * spec.mu ** 2 / 2.0)


def _build(p: Dict[str, Any]) -> Gaussian:
    return Gaussian(p["sigma"], p.get("sensitivity", 1.0))


def _sens(m: Any) -> str:
    return "" if m.sensitivity == 1.0 else f" sensitivity={_g(m.sensitivity)}"


def _format(m: Gaussian) -> str:
    return f"gaussian sigma={_g(m.sigma)}{_sens(m)}"


FAMILY = register(Family(
    name="gaussian", types=(Gaussian,),
    loss_pair=lambda m: gaussian_mu_pair(m.mu),
    numba_source=_numba, torch_source=torch_from_kernel(_numba),
    numpy_losses=lambda m: gaussian_numpy_losses(m.mu),
    for_relation=doubled_under_substitution,
    cli=(CliKind("gaussian", (("sigma",),), ("sensitivity",), ("sigma",), "gaussian sigma=1",
                 "Gaussian noise N(0, sigma^2), L2 sensitivity (default 1)", _build,
                 aliases=("gauss", "normal")),),
    format=_format,
    relations_note="substitution doubles the sensitivity",
    extras={"shift_family": True},
    renyi=gaussian_renyi))
