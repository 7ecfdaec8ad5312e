r"""Poisson subsampling of any registered mechanism (the spec; its laws live in
:mod:`sampledprv.core.subsampled_law` and the samplers' subsampled modes)."""

from __future__ import annotations

from dataclasses import dataclass

from ..core import validation as v
from .base import Mechanism

__all__ = ["PoissonSubsampled"]


@dataclass(frozen=True)
class PoissonSubsampled(Mechanism):
    r"""``mechanism`` run on a Poisson subsample: each record kept with probability ``q``.

    Under add/remove neighbours with :math:`P_0, Q_0` the base mechanism's pair,
    the subsampled pair is :math:`((1-q) Q_0 + q P_0,\ Q_0)`; its privacy loss is
    :math:`\log(1 - q + q e^{\ell})` and is not symmetric, so both directions are
    accounted.
    """

    mechanism: Mechanism
    q: float

    def __post_init__(self) -> None:
        if not isinstance(self.mechanism, Mechanism):
            raise ValueError(
                f"mechanism must be a sampledprv mechanism spec, got {self.mechanism!r}")
        if isinstance(self.mechanism, PoissonSubsampled):
            raise ValueError("mechanism is already PoissonSubsampled; combine the rates "
                             "into one q = q1 * q2 instead of nesting")
        object.__setattr__(self, "q", v.in_interval(
            "q", self.q, 0.0, 1.0, low_open=True, high_open=False,
            hint="q is the Poisson sampling rate (batch size / dataset size)"))

    @property
    def symmetric(self) -> bool:  # type: ignore[override]
        return self.q == 1.0 and self.mechanism.symmetric
