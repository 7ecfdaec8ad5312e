"""How a number is written in a mechanism string (``"gaussian sigma=1.5"``).

One helper for every family's ``format`` hook and the command line, so that a spec
written out and parsed back is the same spec: twelve significant digits, the shortest
of fixed and exponent notation (``format(x, ".12g")``).
"""

from __future__ import annotations

__all__ = ["spec_number"]


def spec_number(x: float) -> str:
    """``x`` as a mechanism string writes it: ``format(float(x), ".12g")``."""
    return format(float(x), ".12g")
