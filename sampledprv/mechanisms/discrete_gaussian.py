r"""The discrete Gaussian mechanism on the integers: spec, exact law, samplers, CLI.

Noise :math:`P(X = x) = e^{-x^2/(2\sigma^2)}/Z` on the integers (Canonne, Kamath and
Steinke 2020), added to an integer query with per-record sensitivity :math:`\Delta`.
Canonical pair :math:`P_0 = X`, :math:`Q_0 = X + \Delta`; the loss
:math:`\ell(o) = (\Delta^2 - 2 o \Delta)/(2\sigma^2)` has one atom per integer, the same
law in both directions.

Certified tail truncation: outcomes with :math:`|x| > T` are not tabulated, with ``T``
chosen so that their mass is below ``TAIL`` (:math:`10^{-40}`), bounded by the
geometric series :math:`\sum_{x > T} e^{-x^2/2\sigma^2} \le e^{-(T+1)^2/2\sigma^2}/(1 - e^{-(2T+3)/2\sigma^2})`
(consecutive terms shrink by at least that ratio) over :math:`Z \ge` the tabulated sum.
That mass goes to the atom at :math:`+\infty` under :math:`P_0` (and :math:`-\infty` under
:math:`Q_0`), which only raises the curves, and into the lower bounds' error: both ends
of every interval stay certified.  The normalizer cancels in the loss values, which
are exact.  Under substitution the sensitivity doubles.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Dict

import numpy as np

from ..core import validation as v
from ._finite import FINITE_HOOKS, mixture_pair_law
from .base import doubled_under_substitution, Mechanism
from .discrete_laplace import integer_sensitivity
from ..core.formatting import spec_number as _g
from .registry import CliKind, Family, register

__all__ = ["DiscreteGaussian"]

#: mass of the noise left out of the tables (certified bound)
TAIL = 1e-40
#: largest sigma tabulated (the table has about 27 sigma entries)
MAX_SIGMA = 1e4


@dataclass(frozen=True)
class DiscreteGaussian(Mechanism):
    r"""Discrete Gaussian noise on the integers, :math:`P(x) \propto e^{-x^2/(2\sigma^2)}`.

    Parameters
    ----------
    sigma : float
        Scale :math:`\sigma > 0` (at most ``1e4``: beyond, the continuous Gaussian is
        indistinguishable and far cheaper).
    sensitivity : int
        Per-record (add/remove) bound on the change of the integer query; under
        substitution the accountants use ``2 * sensitivity``.
    """

    sigma: float
    sensitivity: int = 1
    symmetric = True

    def __post_init__(self) -> None:
        sigma = v.positive("sigma", self.sigma)
        if sigma > MAX_SIGMA:
            raise ValueError(f"sigma must be at most {MAX_SIGMA:g} for the discrete Gaussian "
                             f"(its table grows like sigma), got {sigma!r}; at that scale use "
                             "sp.Gaussian(sigma, sensitivity), whose law is indistinguishable")
        object.__setattr__(self, "sigma", sigma)
        object.__setattr__(self, "sensitivity", integer_sensitivity(self.sensitivity))

    def noise_window(self, tail: float = TAIL):
        """``(log pmf on -T..T, certified bound on the mass outside)``."""
        s2 = 2.0 * self.sigma ** 2
        T = int(math.ceil(math.sqrt(s2 * math.log(2.0 / tail)))) + 1
        x = np.arange(-T, T + 1, dtype=np.float64)
        w = -x * x / s2
        m = float(w.max())
        log_z = m + math.log(float(np.sum(np.exp(w - m))))   # tabulated part of Z (<= Z)
        ratio = -math.expm1(-(2 * T + 3) / s2)
        out = 2.0 * math.exp(-((T + 1) ** 2) / s2 - log_z) / ratio
        if not out <= tail:
            raise AssertionError("discrete Gaussian truncation bound above its target")
        return w - log_z, out

    def noise_log_error(self, size: int = 1) -> float:
        """Error of :meth:`noise_window`'s log pmf beyond its few ulps: the normalizer is
        a pairwise sum of ``size`` positive terms (relative error ``(log2(size) + 1)``
        ulps) followed by a log."""
        return (math.log2(max(size, 2)) + 4.0) * float(np.finfo(np.float64).eps)

    def law(self):
        """Loss atoms of the canonical pair (one per tabulated integer)."""
        log_pmf, out = self.noise_window()
        return mixture_pair_law(log_pmf, [(0, 1.0)], [(self.sensitivity, 1.0)], out,
                                log_error=self.noise_log_error(log_pmf.size))



def _build(p: Dict[str, Any]) -> DiscreteGaussian:
    return DiscreteGaussian(p["sigma"], p.get("sensitivity", 1))


FAMILY = register(Family(
    name="discrete_gaussian", types=(DiscreteGaussian,),
    **FINITE_HOOKS,
    for_relation=doubled_under_substitution,
    cli=(CliKind("discrete-gaussian", (("sigma",),), ("sensitivity",), ("sigma",),
                 "discrete-gaussian sigma=3",
                 "discrete Gaussian noise on the integers, P(x) ~ exp(-x^2/(2 sigma^2)), "
                 "integer sensitivity (default 1)", _build, aliases=("dgauss", "discrete-gauss"),
                 integers=("sensitivity",)),),
    format=lambda m: f"discrete-gaussian sigma={_g(m.sigma)}" + (
        "" if m.sensitivity == 1 else f" sensitivity={m.sensitivity}"),
    relations_note="substitution doubles the sensitivity",
    extras={"integer_noise": True}))
