"""Argument checks and limits of :mod:`.tradeoff` (false-positive rates, accuracy
arguments, grid sizes), and the outward-rounded probit of certified lower ends used by the
mu-GDP bracket."""

from __future__ import annotations

import numpy as np
from scipy.special import ndtri

from . import validation as v

__all__ = ["MAX_FPRS", "MAX_QUERIES", "check_fpr", "query_fpr", "rtol_check",
           "points_check", "probit_lower"]


def check_fpr(fpr: object) -> np.ndarray:
    a = np.atleast_1d(np.asarray(fpr, dtype=np.float64))
    if a.ndim != 1 or a.size == 0:
        raise ValueError("fpr must be a number or a non-empty 1-D sequence of numbers in [0, 1]")
    if not np.all(np.isfinite(a)) or np.any(a < 0.0) or np.any(a > 1.0):
        raise ValueError(f"fpr must lie in [0, 1] (false-positive rates), got {fpr!r}")
    return a


def query_fpr(fpr: object) -> np.ndarray:
    """:func:`check_fpr` for the rates a curve is built for (at most :data:`MAX_FPRS`)."""
    a = check_fpr(fpr)
    if a.size > MAX_FPRS:
        raise ValueError(f"fpr has {a.size:,} rates, more than {MAX_FPRS:,} (each is visited "
                         "on every refinement pass); query fewer, or build one curve with "
                         "tradeoff_curve and read it with upper_at/lower_at")
    return a


#: most false-positive rates one call evaluates (``points`` or ``len(fpr)``): the grid
#: refinement visits every rate in Python on each pass, so 1e7 rates run for hours
MAX_FPRS = 20_000
#: most epsilon points per direction (``max_queries``): each is one delta query
MAX_QUERIES = 1_000_000


def rtol_check(rtol: float, atol: float, max_queries: int) -> int:
    """Check the accuracy arguments; returns ``max_queries`` as an int."""
    rtol = v.in_interval("rtol", rtol, 0.0, 1.0, low_open=True, high_open=True,
                         hint="typical 1e-3")
    atol = v.in_interval("atol", atol, 0.0, 1.0, low_open=False, high_open=True,
                         hint="typical 1e-12")
    return _count("max_queries", max_queries, 16, MAX_QUERIES, "each is one delta query",
                  "the default 4000 suffices for rtol 1e-3")


def points_check(points: object) -> int:
    return _count("points", points, 3, MAX_FPRS,
                  "each false-positive rate is visited on every refinement pass",
                  "the curve is concave, so a few hundred points (and upper_at/lower_at "
                  "between them) describe it")


def _count(name: str, value: object, least: int, most: int, why: str, advice: str) -> int:
    """``value`` as a whole number in ``[least, most]``, else a ``ValueError`` naming
    ``name``, the limit, ``why`` it is there and ``advice``."""
    n = v.positive_int(name, value)
    if n < least:
        raise ValueError(f"{name} must be at least {least}, got {value!r}")
    if n > most:
        raise ValueError(f"{name} must be at most {most:,} ({why}), got {value!r}; {advice}")
    return n


#: absolute rounding allowance on a certified lower end above 1/2 (a few units in the last
#: place of 1.0): near 1 the probit scale magnifies one ulp into about 0.1 in mu
_ROUND_NEAR_ONE = 4.5e-16


def probit_lower(low: np.ndarray) -> np.ndarray:
    """``ndtri`` of certified lower ends below 1, each first lowered by the rounding
    allowance where it exceeds 1/2 (design notes, "Finite mu-GDP lower ends")."""
    low = np.clip(np.asarray(low, dtype=np.float64), 0.0, 1.0)
    with np.errstate(divide="ignore"):
        return ndtri(np.where(low > 0.5, np.maximum(low - _ROUND_NEAR_ONE, 0.5), low))
