r"""Batch samplers of matrix-factorization training (the participation pattern of a record).

* :class:`FixedBin` -- balls-in-bins with a bin fixed for the whole run: the record gets
  one bin :math:`j` uniform in :math:`\{0..b-1\}` and takes part in every step
  :math:`i \equiv j \pmod b` (jax_privacy's ``BallsInBinsSampling``).  Not
  :class:`~sampledprv.BallsAndBins`, which draws a fresh bin every epoch.
* :class:`CyclicPoisson` -- a uniform shift :math:`s`; at every step
  :math:`i \equiv s \pmod b` the record is included with probability ``p``
  (``CyclicPoissonSampling``).
* :class:`BMinSep` -- participations at least ``min_sep`` steps apart: after a
  participation the record waits ``min_sep - 1`` steps, then joins each step with
  probability ``p`` (gaps :math:`b - 1 + \mathrm{Geom}(p)`; Dong and Ganesh, arXiv
  2602.09338).  Cold start: free from step 0; warm start: the stationary state of the
  renewal process (free from step 0 with probability :math:`1/(1+(b-1)p)`, free from
  step :math:`k = 1..b-1` with probability :math:`p/(1+(b-1)p)` each).
* :class:`EpochBin` -- balls-in-bins with the bin **redrawn every epoch** of ``bins``
  steps (the record takes part in step :math:`eb + j_e` of epoch :math:`e`, :math:`j_e`
  uniform and independent across epochs), for a ``C`` that is block-diagonal by epoch
  (the noise of an epoch stays inside it): the run is then the composition of its
  epochs, each a one-epoch fixed bin.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core import validation as v

__all__ = ["FixedBin", "CyclicPoisson", "BMinSep", "EpochBin", "MatrixSampler"]


def _prob(name: str, p: float) -> float:
    p = float(p)
    if not 0.0 < p <= 1.0:
        raise ValueError(f"{name} must be in (0, 1] (the probability that an eligible step "
                         f"includes the record), got {p!r}")
    return p


@dataclass(frozen=True)
class _Bins:
    """The samplers with a cycle of ``bins`` = :math:`b` steps (their ``period``)."""

    bins: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "bins", v.positive_int("bins", self.bins))

    @property
    def period(self) -> int:
        return self.bins


@dataclass(frozen=True)
class FixedBin(_Bins):
    """Balls-in-bins with one bin for the whole run: ``bins`` = :math:`b` (the cycle
    length; the record takes part every ``bins`` steps from its bin)."""


@dataclass(frozen=True)
class CyclicPoisson(_Bins):
    """Random-shift cyclic Poisson sampling: cycle ``bins`` = :math:`b`, inclusion
    probability ``p`` at each step of the record's shift."""

    p: float

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "p", _prob("p", self.p))


@dataclass(frozen=True)
class BMinSep:
    """b-min-sep sampling: participations at least ``min_sep`` = :math:`b` steps apart,
    probability ``p`` at each free step; ``warm_start`` (default ``False``: cold start,
    free from step 0)."""

    min_sep: int
    p: float
    warm_start: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "min_sep", v.positive_int("min_sep", self.min_sep))
        object.__setattr__(self, "p", _prob("p", self.p))
        if not isinstance(self.warm_start, bool):
            raise ValueError(f"warm_start must be True or False, got {self.warm_start!r}")

    @property
    def period(self) -> int:
        return self.min_sep


@dataclass(frozen=True)
class EpochBin(_Bins):
    """Balls-in-bins redrawn every epoch: epochs of ``bins`` = :math:`b` steps, the record
    in one uniform step of each epoch, independently (the sampler of
    :class:`~sampledprv.BallsAndBins`, here with correlated noise inside each epoch).
    The spec needs ``steps`` a multiple of ``bins`` and ``C`` block-diagonal by epoch."""


MatrixSampler = (FixedBin, CyclicPoisson, BMinSep, EpochBin)
