"""Argument checks shared by every public entry point.

Each check raises :class:`ValueError` naming the offending argument, the value
received and what a valid value looks like, so that a user can fix the call
without reading the source.
"""

from __future__ import annotations

import math
from numbers import Real


def plain(value: object) -> str:
    """``repr`` of ``value`` for a message, numpy scalars as plain Python numbers
    (``-0.788``, not ``np.float64(-0.788)``)."""
    if type(value).__module__ == "numpy" and hasattr(value, "item") and \
            getattr(value, "ndim", None) == 0:
        value = value.item()
    return repr(value)


def _as_float(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, Real):
        raise ValueError(f"{name} must be a real number, got {plain(value)} "
                         f"({type(value).__name__})")
    value = float(value)
    if math.isnan(value):
        raise ValueError(f"{name} is NaN; pass a finite number")
    return value


def positive(name: str, value: object, *, allow_inf: bool = False) -> float:
    """Return ``value`` as a float after checking ``0 < value (< inf)``."""
    x = _as_float(name, value)
    if not x > 0 or (math.isinf(x) and not allow_inf):
        raise ValueError(f"{name} must be a positive finite number, got {plain(value)}")
    return x


def nonnegative(name: str, value: object) -> float:
    """Return ``value`` as a float after checking ``0 <= value < inf``."""
    x = _as_float(name, value)
    if not 0 <= x < math.inf:
        raise ValueError(f"{name} must be a finite number >= 0, got {plain(value)}")
    return x


def in_interval(name: str, value: object, low: float, high: float, *,
                low_open: bool, high_open: bool, hint: str = "") -> float:
    """Return ``value`` as a float after checking it lies in the given interval."""
    x = _as_float(name, value)
    ok_low = x > low if low_open else x >= low
    ok_high = x < high if high_open else x <= high
    if not (ok_low and ok_high):
        lb = "(" if low_open else "["
        rb = ")" if high_open else "]"
        msg = f"{name} must lie in {lb}{plain(low)}, {plain(high)}{rb}, got {plain(value)}"
        raise ValueError(msg + (f"; {hint}" if hint else ""))
    return x


def positive_int(name: str, value: object) -> int:
    """Return ``value`` as an int after checking it is an integer >= 1.

    Integral floats are accepted (``1e6``, ``1e3``: how counts are often typed); a float
    with a fractional part, or too large to be an exact integer (above ``2**53``), is not.
    """
    if isinstance(value, bool):
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    if not hasattr(value, "__index__"):
        if isinstance(value, Real) and math.isfinite(float(value)) \
                and float(value).is_integer() and abs(float(value)) <= 2.0**53:
            value = int(float(value))
        else:
            hint = (f" (a whole number such as {max(1, round(float(value))):,})"
                    if isinstance(value, Real) and math.isfinite(float(value)) else "")
            raise ValueError(f"{name} must be a positive integer, got {plain(value)}{hint}")
    n = int(value.__index__())  # type: ignore[union-attr]
    if n < 1:
        raise ValueError(f"{name} must be a positive integer (>= 1), got {plain(value)}")
    return n


def seed(name: str, value: object) -> object:
    """Return ``value`` after checking it is ``None``, an integer ``>= 0`` or a sequence
    of such integers (the seeds :class:`numpy.random.SeedSequence` accepts)."""
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        return [seed(f"{name}[{i}]", x) for i, x in enumerate(value)]
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise ValueError(f"{name} must be a non-negative integer (or None for fresh "
                         f"entropy), got {plain(value)} ({type(value).__name__})")
    n = int(value.__index__())  # type: ignore[union-attr]
    if n < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {plain(value)}; seeds of "
                         f"numpy.random.SeedSequence are >= 0 (use {abs(n)} or any other)")
    return n


#: largest privacy-loss location (in nats) of a built-in mechanism spec.  The analytic
#: engine brackets loss windows up to about 1e15 and indexes lattices in 64-bit
#: integers; a mechanism whose loss sits above this is not private in any useful sense
#: (delta(eps) is about 1 for every eps below it), so specs refuse it on construction.
MAX_LOSS = 1e12


def loss_limit(spec: str, quantity: str, value: float, fix: str) -> None:
    """Raise :class:`ValueError` when a spec's privacy-loss location ``value`` (``nan``
    and ``inf`` included) exceeds :data:`MAX_LOSS`; ``fix`` says which argument to
    change and to what."""
    if not value <= MAX_LOSS:
        raise ValueError(
            f"{spec}: {quantity} = {value:.4g} exceeds {MAX_LOSS:.0e}, the largest privacy "
            "loss the accountants represent; such a mechanism is not private in any useful "
            f"sense (delta(epsilon) is about 1 for every epsilon below that loss). {fix}")
