"""Outward rounding of floating-point results that are promised as bounds.

Used by the families' Renyi divergences (:attr:`~sampledprv.mechanisms.registry.Family.renyi`),
by :mod:`sampledprv.rdp` and by the sampled certification; it lives in ``core``, the
lowest layer, so that every module that promises a bound rounds it the same way.
"""

from __future__ import annotations

import math

__all__ = ["REL", "up", "down"]

#: relative margin added to every floating-point upper bound: far above the accumulated
#: round-off of the few dozen float64 operations behind each number (~1e-14), far below
#: anything that matters for privacy accounting
REL = 1e-11


def up(x: float, scale: float = 0.0) -> float:
    """``x`` rounded up by ``REL * max(|x|, scale)`` (``scale``: the magnitude of the
    terms that cancelled to give ``x``)."""
    if not math.isfinite(x):
        return x
    return x + REL * max(abs(x), abs(scale)) + 1e-300


def down(x: float, scale: float = 0.0) -> float:
    """``x`` rounded down by ``REL * max(|x|, scale)``."""
    if not math.isfinite(x):
        return x
    return x - REL * max(abs(x), abs(scale)) - 1e-300
