r"""The logistic mechanism :math:`f(D) + s Z`, :math:`Z` standard logistic: one module.

The standard logistic density is :math:`f(z) = e^{-z}/(1 + e^{-z})^2` (symmetric,
log-concave), :math:`F(z) = 1/(1 + e^{-z})` and :math:`F^{-1}(u) = \log(u/(1-u))`.  With
:math:`d = \Delta/s` the privacy loss of the canonical pair is

.. math:: \ell(z) = \log f(z) - \log f(z - d)
          = -d + 2\log\frac{1 + e^{d} e^{-z}}{1 + e^{-z}},

strictly decreasing from :math:`d` to :math:`-d` (no atoms: unlike Laplace noise the loss
never reaches :math:`\pm d`), with inverse
:math:`z^*(y) = d + \log(-\mathrm{expm1}((y - d)/2)) - \log\mathrm{expm1}((y + d)/2)`.
Since :math:`|\ell| \le d` the mechanism is :math:`d`-DP, and its Renyi divergence is
bounded by that of randomized response at :math:`\varepsilon = d`.

Everything else -- the exact and subsampled laws, the Numba, numpy and torch samplers,
the Renyi bound, the command-line kind ``logistic scale=S [sensitivity=D]`` -- is derived
by :mod:`sampledprv.mechanisms.additive` from the description below.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .additive import AdditiveNoise, additive_family, check_scale_sensitivity
from .base import Mechanism

__all__ = ["Logistic"]


@dataclass(frozen=True)
class Logistic(Mechanism):
    r"""Logistic mechanism :math:`f(D) + s Z` with density
    :math:`e^{-x/s}/(s (1 + e^{-x/s})^2)`.

    Parameters
    ----------
    scale : float
        Logistic scale ``s`` (> 0); the noise standard deviation is
        :math:`s\pi/\sqrt{3}`.
    sensitivity : float
        Per-record (add/remove) bound on :math:`|f(D) - f(D')|` (> 0); the mechanism is
        ``sensitivity/scale``-DP.  Under substitution the accountants use twice it.
    """

    scale: float
    sensitivity: float = 1.0
    symmetric = True

    def __post_init__(self) -> None:
        check_scale_sensitivity(self, "Logistic")


def _logpdf(z: float) -> float:
    a = abs(z)
    return -a - 2.0 * math.log1p(math.exp(-a))


def _ppf(u: float) -> float:
    return math.log(u) - math.log1p(-u)


def _logpdf_xp(z: Any, xp: Any) -> Any:
    a = xp.abs(z)
    return -a - 2.0 * xp.log1p(xp.exp(-a))


def _ppf_xp(u: Any, xp: Any) -> Any:
    return xp.log(u) - xp.log1p(-u)


def _cdf(z: np.ndarray) -> np.ndarray:
    z = np.asarray(z, dtype=np.float64)
    e = np.exp(-np.abs(z))                     # accurate in both tails
    return np.where(z < 0, e / (1.0 + e), 1.0 / (1.0 + e))


def _loss_inverse(y: np.ndarray, d: float) -> np.ndarray:
    return d + np.log(-np.expm1((y - d) / 2.0)) - np.log(np.expm1((y + d) / 2.0))


LOGISTIC_NOISE = AdditiveNoise(
    name="logistic", logpdf=_logpdf, ppf=_ppf, logpdf_xp=_logpdf_xp, ppf_xp=_ppf_xp,
    cdf=_cdf, loss_bound=lambda d: d, loss_inverse=_loss_inverse)

FAMILY = additive_family("logistic", Logistic, LOGISTIC_NOISE, cli_name="logistic",
                         help="logistic noise with scale s, sensitivity (default 1)")
