r"""The discrete Laplace mechanism on the integers: spec, exact law, samplers, CLI.

Noise :math:`P(X = x) = \frac{1-r}{1+r} r^{|x|}`, :math:`r = e^{-1/t}` (``t`` = ``scale``),
added to an integer query with per-record sensitivity :math:`\Delta` (an integer).
Canonical pair :math:`P_0 = X`, :math:`Q_0 = X + \Delta`.  The loss
:math:`\ell(o) = (|o - \Delta| - |o|)/t` takes the :math:`\Delta + 1` values
:math:`\Delta/t` (:math:`o \le 0`), :math:`(\Delta - 2o)/t` (:math:`0 < o < \Delta`) and
:math:`-\Delta/t` (:math:`o \ge \Delta`), with masses in closed form: under
:math:`P_0`, :math:`1/(1+r)`, :math:`r^{o}(1-r)/(1+r)` and :math:`r^\Delta/(1+r)`.  The law
is exact (no truncation) and the same in both directions.  Under substitution the
sensitivity doubles.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Dict

import numpy as np

from ..core import validation as v
from ._finite import FINITE_HOOKS, finite_law
from .base import doubled_under_substitution, Mechanism
from ..core.formatting import spec_number as _g
from .registry import CliKind, Family, register

__all__ = ["DiscreteLaplace"]


def integer_sensitivity(value: object) -> int:
    """Validate a sensitivity of integer-valued noise: a positive integer."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    try:
        return v.positive_int("sensitivity", value)
    except ValueError:
        raise ValueError(f"sensitivity must be a positive integer (noise on the integers "
                         f"needs an integer-valued query), got {value!r}") from None


@dataclass(frozen=True)
class DiscreteLaplace(Mechanism):
    r"""Discrete Laplace noise on the integers, :math:`P(x) \propto e^{-|x|/t}`.

    Parameters
    ----------
    scale : float
        ``t > 0``.  The mechanism is ``sensitivity/scale``-DP.
    sensitivity : int
        Per-record (add/remove) bound on the change of the integer query; under
        substitution the accountants use ``2 * sensitivity``.
    """

    scale: float
    sensitivity: int = 1
    symmetric = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "scale", v.positive("scale", self.scale))
        object.__setattr__(self, "sensitivity", integer_sensitivity(self.sensitivity))

    @property
    def epsilon(self) -> float:
        """Pure-DP parameter ``sensitivity / scale``."""
        return self.sensitivity / self.scale

    def law(self):
        """The :math:`\\Delta + 1` loss atoms with their exact masses."""
        t, d = self.scale, self.sensitivity
        log_r = -1.0 / t
        log_norm = math.log(-math.expm1(log_r)) - math.log1p(math.exp(log_r))  # (1-r)/(1+r)
        inner = np.arange(1, d)
        head = -math.log1p(math.exp(log_r))                       # P(X <= 0) = 1/(1+r)
        lp = np.concatenate([[head], log_norm + inner * log_r, [head + d * log_r]])
        return finite_law(lp, lp[::-1].copy())

    def noise_window(self, tail: float):
        """``(log pmf on -T..T, mass outside)`` for the subsampled relations."""
        t = self.scale
        log_r = -1.0 / t
        # P(|X| > T) = 2 r^(T+1) / (1 + r) <= tail
        T = max(int(math.ceil((math.log(tail) - math.log(2.0)) / log_r)), 1)
        x = np.arange(-T, T + 1)
        log_norm = math.log(-math.expm1(log_r)) - math.log1p(math.exp(log_r))
        out = 2.0 * math.exp((T + 1) * log_r) / (1.0 + math.exp(log_r))
        return log_norm + np.abs(x) * log_r, out

    def noise_log_error(self, size: int = 0) -> float:
        """Error of :meth:`noise_window`'s log pmf beyond its few ulps: none (two
        rounded terms)."""
        return 0.0



def _build(p: Dict[str, Any]) -> DiscreteLaplace:
    return DiscreteLaplace(p["scale"], p.get("sensitivity", 1))


FAMILY = register(Family(
    name="discrete_laplace", types=(DiscreteLaplace,),
    **FINITE_HOOKS,
    for_relation=doubled_under_substitution,
    cli=(CliKind("discrete-laplace", (("scale",),), ("sensitivity",), ("scale",),
                 "discrete-laplace scale=2",
                 "discrete Laplace noise on the integers, P(x) ~ exp(-|x|/scale), integer "
                 "sensitivity (default 1)", _build, aliases=("dlap", "discrete-lap"),
                 integers=("sensitivity",)),),
    format=lambda m: f"discrete-laplace scale={_g(m.scale)}" + (
        "" if m.sensitivity == 1 else f" sensitivity={m.sensitivity}"),
    relations_note="substitution doubles the sensitivity",
    extras={"integer_noise": True}))
