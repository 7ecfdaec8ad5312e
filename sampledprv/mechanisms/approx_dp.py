r"""Black-box guarantees: any :math:`\varepsilon`-DP or :math:`(\varepsilon, \delta)`-DP
mechanism, accounted by its worst case (spec, exact law, samplers, CLI).

The worst case of an :math:`(\varepsilon, \delta)`-DP mechanism (Kairouz, Oh and
Viswanath 2015) puts mass :math:`\delta` at infinite loss and is randomized response
with :math:`p = e^\varepsilon/(1+e^\varepsilon)` otherwise.

Relation convention: the guarantee is taken to hold for the relation the accountant
uses (a guarantee stated for add/remove is *not* one for substitution: by group
privacy it gives :math:`(2\varepsilon, (1+e^\varepsilon)\delta)` there; pass those).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Dict

from ..core import validation as v
from .base import Mechanism
from ..core.formatting import spec_number as _g
from .randomized_response import (pure_renyi, same_under_both, two_point_numba,
                                  two_point_numpy_losses, two_point_pair)
from .registry import CliKind, Family, register

__all__ = ["PureDP", "ApproxDP"]


@dataclass(frozen=True)
class PureDP(Mechanism):
    """An arbitrary ``epsilon``-DP mechanism, accounted by its worst case
    (randomized response with ``p = e^eps / (1 + e^eps)``).  ``epsilon`` is the
    guarantee under the accountant's neighbouring relation."""

    epsilon: float
    symmetric = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", v.nonnegative("epsilon", self.epsilon))
        _check_epsilon(f"PureDP(epsilon={self.epsilon!r})", self.epsilon)


@dataclass(frozen=True)
class ApproxDP(Mechanism):
    """An arbitrary ``(epsilon, delta)``-DP mechanism, accounted by its worst case
    (mass ``delta`` at infinite loss, randomized response otherwise).  The guarantee is
    taken under the accountant's neighbouring relation."""

    epsilon: float
    delta: float
    symmetric = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", v.nonnegative("epsilon", self.epsilon))
        object.__setattr__(self, "delta", v.in_interval(
            "delta", self.delta, 0.0, 1.0, low_open=False, high_open=False))
        _check_epsilon(f"ApproxDP(epsilon={self.epsilon!r}, delta={self.delta!r})",
                       self.epsilon)


def _check_epsilon(spec: str, eps: float) -> None:
    v.loss_limit(spec, "epsilon", eps, "Use epsilon <= 1e6 (an epsilon above about 50 "
                 "already bounds nothing: e^epsilon exceeds 1e21)")


def _p(eps: float) -> float:
    return 1.0 / (1.0 + math.exp(-eps))


def _delta(m: Any) -> float:
    return m.delta if isinstance(m, ApproxDP) else 0.0


def _loss_pair(m: Any):
    # the worst case uses p = expit(eps) (scipy's expit agrees to the last bit)
    from scipy import special
    return two_point_pair(m.epsilon, float(special.expit(m.epsilon)), _delta(m))


def _build_pure(p: Dict[str, Any]) -> PureDP:
    return PureDP(p["epsilon"])


def _build_approx(p: Dict[str, Any]) -> ApproxDP:
    return ApproxDP(p["epsilon"], p["delta"])


def _format(m: Any) -> str:
    if isinstance(m, ApproxDP):
        return f"approx-dp epsilon={_g(m.epsilon)} delta={_g(m.delta)}"
    return f"pure-dp epsilon={_g(m.epsilon)}"


def _renyi(m: Any, order: float, direction: str) -> float:
    if isinstance(m, ApproxDP) and m.delta > 0.0:
        raise ValueError(f"{m!r} has delta > 0, so its Renyi divergences are infinite; "
                         "RDP accounting needs a mechanism without a delta (use the PLD "
                         "accountant sampledprv.Accountant for ApproxDP)")
    return pure_renyi(m.epsilon, order)


FAMILY = register(Family(
    name="approx_dp", types=(PureDP, ApproxDP),
    loss_pair=_loss_pair,
    numba_source=lambda m: two_point_numba(m.epsilon, _p(m.epsilon), _delta(m)),
    numpy_losses=lambda m: two_point_numpy_losses(m.epsilon, _p(m.epsilon), _delta(m)),
    for_relation=same_under_both,
    cli=(CliKind("pure-dp", (("epsilon",),), (), (), "pure-dp epsilon=0.5",
                 "any epsilon-DP mechanism (worst case)", _build_pure,
                 aliases=("puredp", "pure")),
         CliKind("approx-dp", (("epsilon",), ("delta",)), (), (),
                 "approx-dp epsilon=0.5 delta=1e-6",
                 "any (epsilon, delta)-DP mechanism (worst case)", _build_approx,
                 aliases=("approxdp", "approximate-dp"))),
    format=_format,
    relations_note="the guarantee holds under the accountant's relation",
    renyi=_renyi))
