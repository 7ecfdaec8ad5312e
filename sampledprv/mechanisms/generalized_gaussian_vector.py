r"""The d-dimensional Generalized Gaussian mechanism over the whole :math:`\ell_\beta`
ball (beta-DP-SGD's per-step mechanism): the spec and its command-line kind.

``"gg-vector beta=1.5 scale=2 dimension=1000 clip_norm=1"`` (``sigma=`` for a noise
multiplier, ``scale = sqrt(2) sigma``; ``subsampled-gg-vector ... q=0.01`` for Poisson
subsampling).  The spec has no single privacy-loss law (the loss depends on how the
sensitivity is spread over the coordinates), so the registry's law and sampler hooks
refuse it with a message; it is accounted by :class:`sampledprv.VectorGGAccountant`
(Renyi upper bound over the ball, exact PLD lower bounds on concrete vectors), which the
command line uses whenever a composition contains this kind.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Dict, NoReturn, Optional

from ..core import validation as v
from .base import Mechanism
from ..core.formatting import spec_number as _g
from .generalized_gaussian import GeneralizedGaussian, sigma_to_scale
from .registry import CliKind, Family, Lazy, register

__all__ = ["GeneralizedGaussianVector", "MAX_DIMENSION"]

#: largest dimension certified (``dimension=None`` for ``beta <= 2`` means "any d up to this")
MAX_DIMENSION = 1e12


@dataclass(frozen=True)
class GeneralizedGaussianVector(Mechanism):
    r"""``dimension`` coordinates of i.i.d. :math:`GG(\beta, s)` noise on a query with
    :math:`\ell_\beta` sensitivity ``clip_norm``, worst case over the sensitivity ball.

    Parameters
    ----------
    beta : float
        Shape, ``>= 1``.
    scale : float
        Noise scale ``s`` (> 0), in the units of the query (density
        :math:`\propto e^{-|x/s|^\beta}` per coordinate).
    dimension : int, optional
        Number of noisy coordinates ``d >= 1`` (for beta-DP-SGD: the number of model
        parameters).  Required for ``beta > 2``, where the worst case grows without bound
        with ``d``.  For ``beta <= 2`` it may be omitted: the bound then holds for every
        ``d`` up to :data:`MAX_DIMENSION` (``1e12``).
    clip_norm : float
        :math:`\ell_\beta` sensitivity ``C`` (> 0).
    """

    beta: float
    scale: float
    dimension: Optional[int] = None
    clip_norm: float = 1.0
    symmetric = True

    def __post_init__(self) -> None:
        beta = v._as_float("beta", self.beta)
        if not 1.0 <= beta < math.inf:
            raise ValueError(f"beta must be a finite number >= 1, got {self.beta!r}; the "
                             "Generalized Gaussian privacy loss is accountable for beta >= 1")
        object.__setattr__(self, "beta", beta)
        object.__setattr__(self, "scale", v.positive("scale", self.scale))
        object.__setattr__(self, "clip_norm", v.positive("clip_norm", self.clip_norm))
        if self.dimension is None:
            if beta > 2.0:
                raise ValueError(
                    f"dimension is required for beta={beta} > 2: spreading the l_beta "
                    "sensitivity over k coordinates makes the privacy loss close to Gaussian "
                    "with variance growing like k^(1 - 2/beta), so no bound holds for every "
                    "dimension; pass dimension=d (for DP-SGD the number of parameters)")
        else:
            object.__setattr__(self, "dimension", v.positive_int("dimension", self.dimension))

    @property
    def effective_dimension(self) -> float:
        """``dimension``, or :data:`MAX_DIMENSION` when omitted."""
        return float(self.dimension) if self.dimension is not None else MAX_DIMENSION

    def one_hot(self) -> GeneralizedGaussian:
        """The 1-D mechanism of a sensitivity vector concentrated on one coordinate (the
        GG paper's accounting; exact for the whole ball at ``beta = 2``)."""
        return GeneralizedGaussian(self.beta, self.scale, self.clip_norm)

    def spread(self, m: int) -> GeneralizedGaussian:
        """The 1-D mechanism of each of ``m`` coordinates when the sensitivity is spread
        evenly over them (compose it ``m`` times)."""
        return GeneralizedGaussian(self.beta, self.scale, self.clip_norm * m ** (-1.0 / self.beta))


_NO_LAW = ("GeneralizedGaussianVector has no single privacy-loss law (it depends on how the "
           "sensitivity is spread over the coordinates); account it with "
           "sampledprv.VectorGGAccountant (same compose/epsilon/delta contract), or sample a "
           "concrete sensitivity vector with sampledprv.PrivacyLossSampler")


def _refuse(spec: Any) -> NoReturn:
    raise ValueError(_NO_LAW)


def _build(p: Dict[str, Any]) -> GeneralizedGaussianVector:
    dim: Optional[int] = p.get("dimension")
    return GeneralizedGaussianVector(p["beta"], sigma_to_scale(p), dim,
                                     p.get("clip_norm", 1.0))


def _format(m: GeneralizedGaussianVector) -> str:
    dim = "" if m.dimension is None else f" dimension={m.dimension}"
    clip = "" if m.clip_norm == 1.0 else f" clip_norm={_g(m.clip_norm)}"
    return f"gg-vector beta={_g(m.beta)} scale={_g(m.scale)}{dim}{clip}"


FAMILY = register(Family(
    name="generalized_gaussian_vector", types=(GeneralizedGaussianVector,),
    loss_pair=_refuse, numba_source=_refuse, numpy_losses=_refuse,
    cli=(CliKind("gg-vector", (("beta",), ("scale", "sigma")), ("dimension", "clip_norm"),
                 ("scale", "sigma"), "gg-vector beta=1.5 scale=2 dimension=1000",
                 "d i.i.d. GG(beta, scale) coordinates, l_beta sensitivity clip_norm, worst "
                 "case over the ball (beta-DP-SGD); accounted by VectorGGAccountant",
                 _build, aliases=("generalized-gaussian-vector", "ggv"),
                 integers=("dimension",)),),
    format=_format,
    relations_note="GG vector: add/remove only (the worst case over the l_beta ball)",
    renyi=Lazy("sampledprv.rdp.gg_vector", "vector_spec_renyi"), renyi_costly=True))
