r"""Binary randomized response: spec, exact law, samplers, CLI.

Canonical pair: the output laws on the two inputs, :math:`P_0 = \mathrm{Bern}(p)` and
:math:`Q_0 = \mathrm{Bern}(1-p)`; the loss is :math:`\pm\log(p/(1-p))` with masses
``p, 1-p`` under :math:`P_0`, the same law in both directions.

Relation convention: the unit of randomized response is one record's bit, so its pair
is the pair of a *changed* bit and is the same under both relations (under add/remove
it is the pair of the record's own report against the report of a default bit).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Dict

from ..core import validation as v
from ..core.law import LossDistribution
from ..core.outward import up
from .base import Mechanism, NeighbouringRelation
from ..core.formatting import spec_number as _g
from .registry import CliKind, Family, register

__all__ = ["RandomizedResponse", "two_point_pair", "two_point_numpy_losses"]


@dataclass(frozen=True)
class RandomizedResponse(Mechanism):
    r"""Binary randomized response: report the true bit with probability ``p``.

    ``1/2 <= p <= 1``; the loss takes the values :math:`\pm\log(p/(1-p))`
    (``p = 1`` is the non-private identity: loss ``+inf``).  The pair is that of one
    record's bit changing, under either neighbouring relation.
    """

    p: float
    symmetric = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "p", v.in_interval(
            "p", self.p, 0.5, 1.0, low_open=False, high_open=False,
            hint="p is the probability of reporting the true bit; use p in [0.5, 1]"))

    @property
    def epsilon(self) -> float:
        """``log(p / (1 - p))``."""
        return math.inf if self.p == 1.0 else math.log(self.p / (1.0 - self.p))


def two_point_pair(eps: float, p: float, delta: float):
    r"""Laws under :math:`P_0` / :math:`Q_0` of the loss of a two-point pair: under
    :math:`P_0`, :math:`+\infty` w.p. ``delta``, :math:`+\varepsilon` w.p. ``(1-delta) p``,
    :math:`-\varepsilon` otherwise (``eps = inf`` is the identity: loss ``+inf``)."""
    import numpy as np

    if math.isinf(eps):
        under_p = LossDistribution(p_pos_inf=1.0)
    else:
        under_p = LossDistribution(atom_values=np.array([eps, -eps]),
                                   atom_masses=(1.0 - delta) * np.array([p, 1.0 - p]),
                                   p_pos_inf=delta, support=(-eps, eps))
    return under_p, under_p.negated()


def two_point_numba(eps: float, p: float, delta: float):
    return "two_point", [eps, p, delta]


def two_point_numpy_losses(eps: float, p: float, dlt: float):
    """numpy samplers of the two-point loss under :math:`P_0` and :math:`Q_0`."""
    import numpy as np

    def rr(sign: float):
        def f(r, n):
            u = r.random(n)
            if math.isinf(eps):
                out = np.where(u < p, sign * np.inf, -sign * np.inf)
            else:
                out = np.where(u < p, sign * eps, -sign * eps)
            if dlt > 0:
                out = np.where(r.random(n) < dlt, sign * np.inf, out)
            return out
        return f
    return rr(1.0), rr(-1.0)


def same_under_both(spec: Mechanism, relation: NeighbouringRelation) -> Mechanism:
    """Relation hook of specs whose pair is stated for the relation in use."""
    return spec


def _build(p: Dict[str, Any]) -> RandomizedResponse:
    if "p" in p:
        return RandomizedResponse(p["p"])
    eps = p["epsilon"]
    if not eps >= 0:
        raise ValueError(f"randomized-response epsilon must be >= 0, got {eps}")
    return RandomizedResponse(1.0 / (1.0 + math.exp(-eps)))


def pure_renyi(eps: float, a: float) -> float:
    r""":math:`\frac{1}{\alpha-1}\log\frac{e^{\alpha\varepsilon} + e^{(1-\alpha)\varepsilon}}
    {1+e^\varepsilon}`: exact for randomized response, an upper bound for every
    :math:`\varepsilon`-DP pair (a post-processing of it, Kairouz, Oh & Viswanath 2015)."""
    if eps == 0.0:
        return 0.0
    if math.isinf(eps):
        return math.inf
    num = max(a * eps, (1.0 - a) * eps) + math.log1p(math.exp(-abs((2.0 * a - 1.0) * eps)))
    den = eps + math.log1p(math.exp(-eps))
    return up((num - den) / (a - 1.0), (a * eps + 1.0) / (a - 1.0))


FAMILY = register(Family(
    name="randomized_response", types=(RandomizedResponse,),
    loss_pair=lambda m: two_point_pair(
        math.inf if m.p == 1.0 else math.log(m.p) - math.log1p(-m.p), m.p, 0.0),
    numba_source=lambda m: two_point_numba(m.epsilon, m.p, 0.0),
    numpy_losses=lambda m: two_point_numpy_losses(m.epsilon, m.p, 0.0),
    for_relation=same_under_both,
    cli=(CliKind("randomized-response", (("p", "epsilon"),), (), (),
                 "randomized-response p=0.75",
                 "binary randomized response, true bit with probability p (or epsilon=)",
                 _build, aliases=("rr", "randomised-response")),),
    format=lambda m: f"randomized-response p={_g(m.p)}",
    relations_note="the pair of one changed bit, under either relation",
    renyi=lambda m, order, direction: pure_renyi(m.epsilon, order)))
