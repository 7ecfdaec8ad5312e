r"""Your own discrete mechanism: any two probability vectors on a common finite outcome set.

``FinitePair(p, q)`` is the pair :math:`(P_0, Q_0)` of output laws of a mechanism on two
neighbouring datasets, given outcome by outcome.  Its privacy loss is exact (one atom
per distinct likelihood ratio, :mod:`._finite`), with ``+inf`` where ``q = 0 < p``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Dict, Sequence

import numpy as np

from ._finite import FINITE_HOOKS, finite_law
from .base import Mechanism
from ..core.formatting import spec_number as _g
from .randomized_response import same_under_both
from .registry import CliKind, Family, register

__all__ = ["FinitePair"]

_SUM_TOL = 1e-12


def _probability_vector(name: str, x: Sequence[float]) -> tuple:
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a sequence of probabilities, got {x!r}") from None
    if arr.ndim != 1 or arr.size < 1:
        raise ValueError(f"{name} must be a non-empty 1-D sequence of probabilities, "
                         f"got shape {arr.shape}")
    if not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise ValueError(f"{name} must hold finite non-negative probabilities, got {x!r}")
    total = float(math.fsum(arr))
    if abs(total - 1.0) > _SUM_TOL:
        raise ValueError(f"{name} must sum to 1 (within {_SUM_TOL:g}), sums to {total!r}; "
                         f"normalize it, e.g. {name} / sum({name})")
    return tuple(float(v) for v in arr)


@dataclass(frozen=True)
class FinitePair(Mechanism):
    r"""Any mechanism with finitely many outcomes, given by its two output laws.

    Parameters
    ----------
    p, q : sequence of float
        :math:`P(o)` and :math:`Q(o)` for every outcome ``o``, on the same outcomes in
        the same order: the output laws on the two neighbouring datasets (``p`` on the
        dataset with the record under add/remove).  Non-negative, each summing to 1
        within 1e-12, the same length.

    Notes
    -----
    The pair is exactly what is accounted, under whichever neighbouring relation the
    accountant uses: give the worst-case pair *for that relation*.  ``remove`` is
    :math:`D_{e^\varepsilon}(P \| Q)`, ``add`` is :math:`D_{e^\varepsilon}(Q \| P)`.
    """

    p: tuple
    q: tuple

    def __post_init__(self) -> None:
        p = _probability_vector("p", self.p)
        q = _probability_vector("q", self.q)
        if len(p) != len(q):
            raise ValueError(f"p and q must have the same length (one entry per outcome), "
                             f"got {len(p)} and {len(q)}")
        object.__setattr__(self, "p", p)
        object.__setattr__(self, "q", q)

    @property
    def symmetric(self) -> bool:  # type: ignore[override]
        """True when ``(p, q)`` is ``(q, p)`` up to relabelling the outcomes."""
        return sorted(zip(self.p, self.q)) == sorted(zip(self.q, self.p))

    def law(self):
        """The merged loss atoms (:class:`._finite.FiniteLaw`)."""
        with np.errstate(divide="ignore"):
            return finite_law(np.log(np.array(self.p)), np.log(np.array(self.q)))


def _build(prm: Dict[str, Any]) -> FinitePair:
    return FinitePair(prm["p"], prm["q"])


def _format(m: FinitePair) -> str:
    return f"finite-pair p={':'.join(_g(x) for x in m.p)} q={':'.join(_g(x) for x in m.q)}"


FAMILY = register(Family(
    name="finite_pair", types=(FinitePair,),
    **FINITE_HOOKS,
    for_relation=same_under_both,
    cli=(CliKind("finite-pair", (("p",), ("q",)), (), (), "finite-pair p=0.5:0.3:0.2 q=0.2:0.3:0.5",
                 "your own discrete mechanism: output laws p, q on the two neighbouring "
                 "datasets (lists separated by ':')", _build, aliases=("finite", "pair"),
                 vectors=("p", "q")),),
    format=_format,
    relations_note="the given pair, under the accountant's relation"))
