r"""The rejection envelope of the unit-scale Generalized Gaussian sampler (pure math, no torch).

For :math:`GG(\beta)` with density proportional to :math:`e^{-|x|^\beta}` the optimal
envelope is a Laplace law for :math:`\beta < 2` and a Gaussian for :math:`\beta > 2`;
:func:`_envelope` gives its kind, rate and :math:`\log M` (the acceptance probability is
:math:`Z_f / (M Z_g)`).  Shared by the portable sampler (:mod:`.noise`) and the fused
Triton kernel (:mod:`.fused_gg`), so that neither imports the other's module.
"""

from __future__ import annotations

import math
from typing import Tuple

__all__ = ["_envelope"]


def _envelope(beta: float) -> Tuple[str, float, float]:
    """``(kind, rate, log M)`` of the optimal envelope for the unit-scale target."""
    if beta < 2.0:
        return "laplace", beta ** (1.0 / beta), 1.0 - 1.0 / beta
    p = beta / (beta - 2.0)
    log_k = math.log1p(-2.0 / beta) + (2.0 / (beta - 2.0)) * math.log(2.0 / beta)
    log_a = -(math.log(2.0) + log_k + math.log(p)) / p
    return "gauss", math.exp(log_a), 1.0 / (2.0 * p)
