r"""The Laplace mechanism :math:`f(D) + \mathrm{Lap}(0, b)`: spec, exact law, samplers, CLI.

Canonical pair :math:`P_0 = \mathrm{Lap}(0, b)`, :math:`Q_0 = \mathrm{Lap}(\Delta, b)`,
:math:`\varepsilon = \Delta/b`.  Under :math:`P_0` the loss is :math:`+\varepsilon` w.p.
1/2, :math:`-\varepsilon` w.p. :math:`e^{-\varepsilon}/2` and continuous on
:math:`(-\varepsilon, \varepsilon)` with
:math:`P(\ell \le y) - e^{-\varepsilon}/2 = \tfrac12(e^{-(\varepsilon-y)/2} - e^{-\varepsilon})`;
the law is the same in both directions.  Under substitution the sensitivity doubles.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict

from ..core import validation as v
import math

from ..core.law import LossDistribution
from ..core.outward import up
from .base import doubled_under_substitution, Mechanism
from ..core.formatting import spec_number as _g
from .gaussian import _sens
from .registry import CliKind, Family, register, torch_from_kernel

__all__ = ["Laplace", "laplace_eps_pair"]


@dataclass(frozen=True)
class Laplace(Mechanism):
    r"""Laplace mechanism :math:`f(D) + \mathrm{Lap}(0, b)` with density
    :math:`\exp(-|x|/b)/(2b)`.

    Parameters
    ----------
    scale : float
        Laplace scale ``b`` (> 0).
    sensitivity : float
        L1 sensitivity (> 0), the per-record (add/remove) bound.  The mechanism is
        ``sensitivity/scale``-DP; the loss lies in ``[-sensitivity/scale,
        sensitivity/scale]`` with atoms at both ends.  Under substitution the
        accountants use ``2 * sensitivity``.
    """

    scale: float
    sensitivity: float = 1.0
    symmetric = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "scale", v.positive("scale", self.scale))
        object.__setattr__(self, "sensitivity", v.positive("sensitivity", self.sensitivity))
        v.loss_limit(f"Laplace(scale={self.scale!r}, sensitivity={self.sensitivity!r})",
                     "the privacy loss sensitivity/scale", self.sensitivity / self.scale,
                     f"Use scale >= sensitivity / {v.MAX_LOSS:.0e} "
                     f"(= {self.sensitivity / v.MAX_LOSS:.4g} here)")

    @property
    def epsilon(self) -> float:
        """Pure-DP parameter ``sensitivity / scale``."""
        return self.sensitivity / self.scale


def laplace_eps_pair(eps: float):
    """Laws of :math:`\\ell` under :math:`P_0` and :math:`Q_0` (module docstring)."""
    import numpy as np

    def cdf(y):
        # e^{-eps} (e^{(y+eps)/2} - 1) / 2 written as e^{(y-eps)/2} (1 - e^{-(y+eps)/2}) / 2:
        # the same full relative accuracy, and no 0 * inf once e^{-eps} underflows
        y = np.clip(np.asarray(y, dtype=np.float64), -eps, eps)
        return -0.5 * np.exp(0.5 * (y - eps)) * np.expm1(-0.5 * (y + eps))

    def sf(y):
        y = np.clip(np.asarray(y, dtype=np.float64), -eps, eps)
        return -0.5 * np.expm1(-0.5 * (eps - y))

    under_p = LossDistribution(cdf, sf, -0.5 * np.expm1(-eps), np.array([eps, -eps]),
                               np.array([0.5, 0.5 * np.exp(-eps)]), support=(-eps, eps))
    return under_p, under_p.negated()


def _numba(spec: Laplace):
    return "laplace", [spec.sensitivity / spec.scale]


def _numpy(spec: Laplace):
    from ._gg_losses import gg_numpy_losses
    return gg_numpy_losses(1.0, spec.scale, spec.sensitivity)



def laplace_renyi(spec: Laplace, order: float, direction: str) -> float:
    r""":math:`\frac{1}{\alpha-1}\log\big(\frac{\alpha}{2\alpha-1}e^{(\alpha-1)\varepsilon}
    + \frac{\alpha-1}{2\alpha-1}e^{-\alpha\varepsilon}\big)`, :math:`\varepsilon = \Delta/b`,
    both directions (exact; Mironov 2017, "Renyi differential privacy", Table II)."""
    eps, a = spec.epsilon, order
    x = math.log(a / (2.0 * a - 1.0)) + (a - 1.0) * eps
    y = math.log((a - 1.0) / (2.0 * a - 1.0)) - a * eps
    top = max(x, y)
    return up(max(0.0, top + math.log1p(math.exp(min(x, y) - top))) / (a - 1.0),
              (a * eps + 1.0) / (a - 1.0))


def _build(p: Dict[str, Any]) -> Laplace:
    return Laplace(p["scale"], p.get("sensitivity", 1.0))


def _format(m: Laplace) -> str:
    return f"laplace scale={_g(m.scale)}{_sens(m)}"


FAMILY = register(Family(
    name="laplace", types=(Laplace,),
    loss_pair=lambda m: laplace_eps_pair(m.epsilon),
    numba_source=_numba, torch_source=torch_from_kernel(_numba), numpy_losses=_numpy, for_relation=doubled_under_substitution,
    cli=(CliKind("laplace", (("scale",),), ("sensitivity",), ("scale",), "laplace scale=2",
                 "Laplace noise with scale b, L1 sensitivity (default 1)", _build,
                 aliases=("lap",)),),
    format=_format,
    relations_note="substitution doubles the sensitivity",
    extras={"shift_family": True},
    renyi=laplace_renyi))
