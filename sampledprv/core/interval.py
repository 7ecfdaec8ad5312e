"""The certified interval returned by every accountant."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping


DETERMINISTIC = "deterministic"
PROBABILISTIC = "probabilistic"
#: characters of ``method`` that ``str(interval)`` shows (the rest: ``interval.method``)
SHORT_METHOD = 160


@dataclass(frozen=True)
class Interval:
    """A certified bracket ``lower <= true value <= upper`` with a point estimate.

    Attributes
    ----------
    lower, estimate, upper : float
        The bounds and the best estimate (``lower <= estimate <= upper``).  An upper
        bound of ``inf`` means that no finite bound could be certified.
    certification : str
        ``"deterministic"`` (analytic PRVs: the bracket holds with certainty, up to
        floating-point round-off that is itself bounded and included) or
        ``"probabilistic"`` (sampled PRVs: the bracket holds with probability at least
        ``confidence`` over the sampling).
    confidence : float
        1.0 for deterministic intervals, ``1 - alpha`` for sampled ones.
    method : str
        How the bracket was built, in words (for example
        ``"mean-preserving discretization + Hoeffding coupling (GLW Thm 5.5)"``).
    details : Mapping
        Diagnostic numbers (mesh, grid size, error budget terms, ...).
    """

    lower: float
    estimate: float
    upper: float
    certification: str = DETERMINISTIC
    confidence: float = 1.0
    method: str = ""
    details: Mapping[str, object] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        for name in ("lower", "estimate", "upper"):
            v = getattr(self, name)
            if isinstance(v, float) and math.isnan(v):
                raise ValueError(f"Interval.{name} is NaN; this is a bug, please report it")
        if not self.lower <= self.upper:
            raise ValueError(f"Interval lower={self.lower} exceeds upper={self.upper}")
        if self.certification not in (DETERMINISTIC, PROBABILISTIC):
            raise ValueError(
                f"certification must be {DETERMINISTIC!r} or {PROBABILISTIC!r}, "
                f"got {self.certification!r}")
        if not 0.0 < self.confidence <= 1.0:
            raise ValueError(f"confidence must lie in (0, 1], got {self.confidence!r}")

    @property
    def width(self) -> float:
        """``upper - lower``."""
        return self.upper - self.lower

    def __contains__(self, value: float) -> bool:
        return self.lower <= value <= self.upper

    def describe(self, short: bool = False) -> str:
        """How the interval is certified, in one sentence (``short``: the method cut
        to about :data:`SHORT_METHOD` characters; the full text stays in ``method``)."""
        if self.certification == DETERMINISTIC:
            how = "deterministic"
        else:
            how = f"with probability >= {confidence_label(self.confidence)}"
        method = self.method
        if short and len(method) > SHORT_METHOD:
            cut = method[:SHORT_METHOD].rsplit(" ", 1)[0].rstrip(",;( ")
            method = f"{cut} ...; full text in .method"
        return f"certified {how}" + (f" ({method})" if method else "")

    def _no_number(self, what: str) -> TypeError:
        return TypeError(
            f"{what} an Interval is ambiguous: it brackets the value between lower="
            f"{self.lower:g} and upper={self.upper:g}; use iv.upper for a guarantee "
            f"(e.g. iv.upper < 3.0), iv.lower or iv.estimate")

    def __float__(self) -> float:
        raise self._no_number("float() of")

    def __lt__(self, other: object) -> bool:
        raise self._no_number("comparing")

    __le__ = __gt__ = __ge__ = __lt__

    def __str__(self) -> str:
        w = self.width
        top = max(abs(self.lower), abs(self.upper))
        if math.isfinite(w) and w > 0 and math.isfinite(top) and top > 0:
            sig = max(3, min(15, 2 + math.ceil(math.log10(top / w))))
        else:
            sig = 6
        fmt = lambda x: f"{x:#.{sig}g}".rstrip(".") if math.isfinite(x) else str(x)  # noqa: E731
        return (f"[{fmt(self.lower)}, {fmt(self.upper)}] (estimate {fmt(self.estimate)}; "
                f"{self.describe(short=True)})")


def confidence_label(confidence: float) -> str:
    """A confidence level as people read it: ``"1 - 1e-09"`` for ``1 - 1e-9``, else ``"0.95"``.

    Levels within ``1e-3`` of 1 are written ``1 - alpha`` (two significant digits of
    ``alpha = 1 - confidence``), so ``1 - 1e-9`` never prints as ``1``."""
    alpha = 1.0 - confidence
    if alpha <= 0.0:
        return "1"
    return f"1 - {alpha:.2g}" if alpha < 1e-3 else f"{confidence:.6g}"


def fixed_size_bracket(up: Interval, low: Interval, certification: str, confidence: float,
                       note: str = "", member: str = "u = 2C, v = 0") -> Interval:
    """The interval of a composition whose two ends come from two pairs (fixed-size
    batches under substitution, :mod:`sampledprv.mechanisms.substitution`): the upper end
    of ``up`` (the symmetric dominating pair's composition), the lower end of ``low`` (the
    attained member pair's, described by ``member``: the clipped-sum pair ``u = 2C,
    v = 0`` of the built-in families, or a user pair's own), the estimate of ``up``
    clipped into the result."""
    lower = min(low.lower, up.upper)
    est = min(max(up.estimate, lower), up.upper)
    method = (f"upper end: symmetric dominating pair of the fixed-size family "
              f"({up.method}); lower end: attained member pair {member} "
              f"({low.method}){note}")
    details = {**up.details, "lower_end": dict(low.details)}
    return Interval(float(lower), float(est), float(up.upper), certification, confidence,
                    method, details)
