r"""k-ary randomized response: report the true value among ``k`` with probability
:math:`e^\varepsilon/(e^\varepsilon + k - 1)`, each other value with
:math:`1/(e^\varepsilon + k - 1)`.

Canonical pair: the output laws on two different inputs ``a``, ``b``.  Under
:math:`P_0` the loss is :math:`+\varepsilon` w.p. :math:`e^\varepsilon/Z`,
:math:`-\varepsilon` w.p. :math:`1/Z` and 0 w.p. :math:`(k-2)/Z`,
:math:`Z = e^\varepsilon + k - 1`; the same law in both directions.

Relation convention: the unit is one record's value, so the pair is that of a *changed*
value and is the same under both relations (as for binary randomized response).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Dict

import numpy as np

from ..core import validation as v
from ._finite import FINITE_HOOKS, FiniteLaw
from .base import Mechanism
from ..core.formatting import spec_number as _g
from .randomized_response import same_under_both
from .registry import CliKind, Family, register

__all__ = ["KaryRandomizedResponse"]


@dataclass(frozen=True)
class KaryRandomizedResponse(Mechanism):
    r"""k-ary randomized response (module docstring).

    Parameters
    ----------
    k : int
        Number of values (>= 2); ``k = 2`` is binary randomized response with
        ``p = e^eps / (1 + e^eps)``.
    epsilon : float
        Finite, >= 0: the mechanism is ``epsilon``-DP for a changed value.
    """

    k: int
    epsilon: float
    symmetric = True

    def __post_init__(self) -> None:
        k = v.positive_int("k", self.k)
        if k < 2:
            raise ValueError(f"k must be an integer >= 2 (the number of values), got {self.k!r}")
        object.__setattr__(self, "k", k)
        object.__setattr__(self, "epsilon", v.nonnegative("epsilon", self.epsilon))

    @property
    def p_true(self) -> float:
        """Probability of reporting the true value, :math:`e^\\varepsilon/(e^\\varepsilon+k-1)`."""
        return 1.0 / (1.0 + (self.k - 1) * math.exp(-self.epsilon))

    def law(self) -> FiniteLaw:
        """Loss atoms ``(-eps, 0, +eps)`` with their masses under P0 and Q0."""
        e, k = self.epsilon, self.k
        # 1/Z and e^eps/Z computed without overflow
        lo = math.exp(-e) / (1.0 + (k - 1) * math.exp(-e))
        hi = 1.0 / (1.0 + (k - 1) * math.exp(-e))
        mid = (k - 2) * lo
        if e == 0.0:
            return FiniteLaw(np.array([0.0]), np.array([1.0]), np.array([1.0]))
        vals = np.array([-e, 0.0, e])
        return FiniteLaw(vals, np.array([lo, mid, hi]), np.array([hi, mid, lo]))


def _build(prm: Dict[str, Any]) -> KaryRandomizedResponse:
    return KaryRandomizedResponse(prm["k"], prm["epsilon"])


FAMILY = register(Family(
    name="kary_randomized_response", types=(KaryRandomizedResponse,),
    **FINITE_HOOKS,
    for_relation=same_under_both,
    cli=(CliKind("kary-rr", (("k",), ("epsilon",)), (), (), "kary-rr k=10 epsilon=1",
                 "k-ary randomized response, true value w.p. e^eps/(e^eps + k - 1)", _build,
                 aliases=("k-rr", "krr", "kary-randomized-response"), integers=("k",)),),
    format=lambda m: f"kary-rr k={m.k} epsilon={_g(m.epsilon)}",
    relations_note="the pair of one changed value, under either relation"))
