r"""Errors of the inner pieces of a composition, weighted by where the curve is.

Every numeric error of a composition -- the FFT round-off of a tree node, the rounding
of a step's discretized bucket masses -- is an error ``E`` of one *piece* (a node's law
or a step's law), a signed measure supported on the piece's window ``[a, b]``.  It
reaches the curve at ``x`` of the composed lattice law through a positive linear map
``T`` (convolutions with non-negative laws and randomized regriddings, the rest of the
composition) and the hockey-stick integrand ``h_x(y) = (1 - e^{x - y})_+``:

.. math:: \langle h_x, T E\rangle = \langle g, E\rangle, \qquad
          g(y) = \langle h_x, T\delta_y\rangle .

``g`` is non-decreasing (the maps are stochastically monotone and ``h_x`` is
non-decreasing) and non-negative, so on the window :math:`0 \le g \le g(b)`, and
:math:`|\langle g, E\rangle| \le g(b)\,e` where ``e`` bounds the piece's error in total
variation (or, for monotone integrands, twice its largest CDF error: the discretization
bound).  Counting it with weight 1 (``g <= 1``) is what a total-variation budget does;
but ``g(b)`` is small where ``x`` is in the upper tail of the composition.  With ``w``
the window's width rounded up to a multiple of the top mesh ``H`` (the maps commute with
shifts by multiples of ``H``), :math:`g(b) \le g(a + w) = \langle h_{x - w}, T\delta_a\rangle`,
and since the piece's computed law ``Y >= 0`` of mass ``m`` lies above ``a``,
:math:`\langle h_{x-w}, T\delta_a\rangle \le \langle h_{x-w}, T Y\rangle / m`.  ``T Y`` is
the computed composition up to the other pieces' errors (at most the unweighted total
``B`` in total variation), so

.. math:: g(b) \le \min\Big(1, \frac{\delta_{\rm computed}(x - w) + B}{m}\Big),

with :math:`\delta_{\rm computed}` taken with its floating-point bound.  Summed over the
pieces this replaces their total ``sum e`` by a weighted sum: at ``k = 1e8`` DP-SGD the
level-one nodes' round-off (``3e-7`` in total variation) is weighted by about ``1e-5``
at ``delta = 1e-5`` (design notes, "Floating point": where the curve is read).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

from .lattice import LatticePMF


@dataclass(frozen=True)
class WeightedError:
    """An error bound ``error`` of pieces whose laws lie in windows of width ``width``
    (loss units) and have mass at least ``mass``.

    ``error`` is the sum over the pieces' instances (it may cover many copies of one
    node); each copy is a piece of the same window and mass."""

    error: float
    width: float
    mass: float
    #: bound on the weight without the window argument (the total mass of the rest of
    #: the composition where that is below 1); the unweighted total counts
    #: ``cap * error``
    cap: float = 1.0

    @classmethod
    def of(cls, error: float, law: LatticePMF, cap: float = 1.0,
           width: float | None = None) -> "WeightedError":
        """The error of pieces whose computed law is ``law``: its mass, and its window
        unless ``width`` gives the (wider) window that holds the error -- a law trimmed
        of zero end bins may have errors beyond its ends (entries rounded to zero)."""
        own = max(law.probs.size - 1, 0) * law.h
        width = own if width is None else max(float(width), own)
        # the float sum of non-negative terms is within n ulps of the exact one
        mass = float(law.probs.sum()) * (1.0 - 2.0 ** -40)
        return cls(float(error), float(width), max(mass, 0.0), float(cap))


def weighted_total(terms: Sequence[WeightedError], total: float, hybrid_bound: float,
                   top_mesh: float, curve_high: Callable[[float], float], x: float) -> float:
    r"""The numeric error of the curve at ``x``: ``total`` (the unweighted bound, every
    term counted with its weight ``cap``) with each term's error re-weighted by
    :math:`\min(\mathrm{cap}, (\delta^{\rm high}(x - w) + B) / m)` (module docstring), where
    ``curve_high(y)`` bounds the computed curve from above and ``B = hybrid_bound``
    bounds, in total variation, every difference between the computed composition and
    the hybrids of the telescoping (all its error terms, the top-level spills included:
    at least ``total``).  ``top_mesh`` (> 0) is the composed law's mesh; ``terms`` are
    parts of ``total``."""
    if not terms:
        return total
    out = total
    cache: dict[float, float] = {}
    for t in terms:
        if t.error <= 0.0:
            continue
        # a multiple of the top mesh at least the width (one more mesh: the lattice
        # points themselves are rounded)
        w = (math.ceil(t.width / top_mesh) + 1) * top_mesh
        if w not in cache:
            cache[w] = curve_high(x - w)
        weight = t.cap if t.mass <= 0.0 else min(t.cap, (cache[w] + hybrid_bound) / t.mass)
        out -= t.error * (t.cap - weight)
    return max(out, 0.0)


__all__ = ["WeightedError", "weighted_total"]
