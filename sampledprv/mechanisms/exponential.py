r"""The exponential mechanism: spec, exact law, samplers, CLI.

Outcome :math:`y` is released with probability
:math:`P(y) = e^{\tilde\varepsilon u(D, y)} / \sum_{y'} e^{\tilde\varepsilon u(D, y')}`
(Koskela et al., "Tight differential privacy for discrete-valued mechanisms and for the
subsampled Gaussian mechanism using FFT", Sec. 6.1).  Two forms:

* **exact**: the utilities of every outcome on the two neighbouring datasets,
  ``utilities_p`` (:math:`u(D, \cdot)`, the dataset with the record under add/remove)
  and ``utilities_q`` (:math:`u(D', \cdot)`); the pair is the two softmax laws and the
  accounting is exact for that pair (give the worst-case pair for the relation you
  account, as for :class:`FinitePair`);
* **sensitivity bound**: only :math:`|u(D, y) - u(D', y)| \le \Delta` for every ``y``
  (``sensitivity``, the per-record add/remove bound, doubled under substitution).  The
  mechanism is then :math:`2\tilde\varepsilon\Delta`-DP (:math:`\tilde\varepsilon\Delta`
  with ``monotone=True``: utilities that all move in the same direction, like counts)
  and is accounted by the worst case of a pure-DP mechanism with that epsilon
  (randomized response, Kairouz, Oh and Viswanath 2015).  This is a valid bound, not
  the tight composition of exponential mechanisms (Dong, Durfee and Rogers 2020 show
  that the tight one depends on the target epsilon and has no single dominating pair).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Dict, Optional

import numpy as np

from ..core import validation as v
from ._finite import finite_law, finite_loss_pair, finite_numba, finite_numpy, log_normalize
from .base import Mechanism, NeighbouringRelation
from ..core.formatting import spec_number as _g
from .randomized_response import two_point_numba, two_point_numpy_losses, two_point_pair
from .registry import CliKind, Family, register

__all__ = ["ExponentialMechanism"]


def _utilities(name: str, x: object) -> Optional[tuple]:
    if x is None:
        return None
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a sequence of numbers, got {x!r}") from None
    if arr.ndim != 1 or arr.size < 1 or not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be a non-empty 1-D sequence of finite numbers "
                         f"(one utility per outcome), got {x!r}")
    return tuple(float(u) for u in arr)


@dataclass(frozen=True)
class ExponentialMechanism(Mechanism):
    r"""Exponential mechanism with parameter ``epsilon`` (module docstring).

    Parameters
    ----------
    epsilon : float
        :math:`\tilde\varepsilon > 0`, the factor of the utility in the exponent.
    utilities_p, utilities_q : sequence of float, optional
        Utilities of each outcome on the two neighbouring datasets (exact form).
    sensitivity : float, optional
        Utility sensitivity :math:`\Delta` (bound form); give it *instead of* the
        utilities.
    monotone : bool
        Bound form only: the utilities of all outcomes move in the same direction
        between neighbours (halves the bound).
    """

    epsilon: float
    utilities_p: Optional[tuple] = None
    utilities_q: Optional[tuple] = None
    sensitivity: Optional[float] = None
    monotone: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", v.positive("epsilon", self.epsilon))
        up = _utilities("utilities_p", self.utilities_p)
        uq = _utilities("utilities_q", self.utilities_q)
        exact = up is not None or uq is not None
        if exact and self.sensitivity is not None:
            raise ValueError("give either utilities_p and utilities_q (exact) or sensitivity "
                             "(a bound), not both")
        if exact:
            if up is None or uq is None:
                raise ValueError("the exact form needs both utilities_p and utilities_q")
            if len(up) != len(uq):
                raise ValueError(f"utilities_p and utilities_q must have one entry per "
                                 f"outcome, got lengths {len(up)} and {len(uq)}")
        elif self.sensitivity is None:
            raise ValueError("give utilities_p and utilities_q (the utilities on the two "
                             "neighbouring datasets) or sensitivity (a bound)")
        else:
            object.__setattr__(self, "sensitivity", v.positive("sensitivity", self.sensitivity))
        if not isinstance(self.monotone, bool):
            raise ValueError(f"monotone must be True or False, got {self.monotone!r}")
        if exact and self.monotone:
            raise ValueError("monotone applies to the sensitivity form only")
        object.__setattr__(self, "utilities_p", up)
        object.__setattr__(self, "utilities_q", uq)

    @property
    def exact(self) -> bool:
        """True for the exact (utilities) form."""
        return self.utilities_p is not None

    @property
    def symmetric(self) -> bool:  # type: ignore[override]
        if not self.exact:
            return True
        return sorted(zip(self.utilities_p, self.utilities_q)) == \
            sorted(zip(self.utilities_q, self.utilities_p))

    @property
    def pure_epsilon(self) -> float:
        """Bound form: the pure-DP epsilon, :math:`(2 \\text{ or } 1)\\tilde\\varepsilon\\Delta`."""
        if self.exact:
            raise ValueError("pure_epsilon is defined for the sensitivity form only")
        return (1.0 if self.monotone else 2.0) * self.epsilon * self.sensitivity

    def law(self):
        """Exact form: loss atoms of the two softmax laws."""
        lp = log_normalize(self.epsilon * np.array(self.utilities_p))
        lq = log_normalize(self.epsilon * np.array(self.utilities_q))
        return finite_law(lp, lq)


def _rr(m: ExponentialMechanism):
    e = m.pure_epsilon
    return e, 1.0 / (1.0 + math.exp(-e))


def _loss_pair(m: ExponentialMechanism):
    if m.exact:
        return finite_loss_pair(m.law())
    return two_point_pair(*_rr(m), 0.0)


def _numba(m: ExponentialMechanism):
    return finite_numba(m.law()) if m.exact else two_point_numba(*_rr(m), 0.0)


def _numpy(m: ExponentialMechanism):
    return finite_numpy(m.law()) if m.exact else two_point_numpy_losses(*_rr(m), 0.0)


def _for_relation(m: ExponentialMechanism, relation: NeighbouringRelation):
    if relation is NeighbouringRelation.SUBSTITUTE and not m.exact:
        return replace(m, sensitivity=2.0 * m.sensitivity)
    return m


def _build(p: Dict[str, Any]) -> ExponentialMechanism:
    if "utilities_p" in p or "utilities_q" in p:
        return ExponentialMechanism(p["epsilon"], p.get("utilities_p"), p.get("utilities_q"))
    if "sensitivity" not in p:
        raise ValueError("exponential needs utilities_p= and utilities_q= (lists "
                         "separated by ':') or sensitivity=")
    return ExponentialMechanism(p["epsilon"], sensitivity=p["sensitivity"],
                                monotone=bool(p.get("monotone", 0.0)))


def _format(m: ExponentialMechanism) -> str:
    if m.exact:
        return (f"exponential epsilon={_g(m.epsilon)} "
                f"utilities_p={':'.join(_g(u) for u in m.utilities_p)} "
                f"utilities_q={':'.join(_g(u) for u in m.utilities_q)}")
    mono = " monotone=1" if m.monotone else ""
    return f"exponential epsilon={_g(m.epsilon)} sensitivity={_g(m.sensitivity)}{mono}"


FAMILY = register(Family(
    name="exponential", types=(ExponentialMechanism,),
    loss_pair=_loss_pair, numba_source=_numba, numpy_losses=_numpy,
    for_relation=_for_relation,
    cli=(CliKind("exponential", (("epsilon",),),
                 ("utilities_p", "utilities_q", "sensitivity", "monotone"), (),
                 "exponential epsilon=0.1 utilities_p=50:50 utilities_q=49:50",
                 "exponential mechanism: utilities on the two datasets (exact) or "
                 "sensitivity= (pure-DP bound)", _build, aliases=("exp-mech", "em"),
                 vectors=("utilities_p", "utilities_q")),),
    format=_format,
    relations_note="exact form: the given pair; bound form: substitution doubles it"))
