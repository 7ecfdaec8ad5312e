r"""Long compositions of envelopes: bins chosen from ``k`` and two-level composition.

Rounding bias.  Every envelope lives on the histogram's lattice: the upper envelope
rounds each loss up to the next edge, the lower one down, so a ``k``-fold composition
carries a deterministic bias of up to ``k h`` on each side (``h`` the mesh).  With the
window of a histogram spanning about ``c`` standard deviations ``s`` of one loss
(``c ~ 15`` for the tails of ``n ~ 1e10`` draws) and ``b`` bins, ``k h ~ c k s / b``,
while the statistical width of the composed interval grows like :math:`\sqrt{k}\, s`.
Their ratio is :math:`\propto \sqrt{k}/b`, hence :func:`bins_for` takes
``b = 4096 sqrt(k)`` rounded up to a power of two (at least :math:`2^{15}`, at most
:math:`2^{22}`; the mesh is then rounded up to a power of two, so between ``b/2`` and
``b`` bins are used): ``k h`` is 0.0076 at ``k = 1000`` (:math:`2^{17}` bins) and 0.0048
at ``k = 10^4`` (:math:`2^{19}`) for a Gaussian of total :math:`\mu = 1` sampled
``10^{10}``-``10^{12}`` times, 5-7% of the certified widths of epsilon(1e-5) there
(0.10 and 0.08).

Two levels.  The composed upper envelope needs about :math:`\sqrt{k}\, b` FFT points;
when that exceeds the grid limit, :func:`compose_bounds_two_level` splits each count
``c = a m + r`` (``m`` near :math:`2\sqrt{c}`), composes the ``m``-fold sum on the
fine mesh ``h``, *regrids* it to the coarse mesh ``H = f h`` -- the upper envelope
rounded up (:math:`\lceil i/f \rceil`), the lower one rounded down -- and composes the
``a`` copies (and ``r`` single regridded copies) on ``H``.  Rounding up keeps the upper
envelope stochastically larger and rounding down keeps the lower one smaller, so the
order :math:`Y_{low} \preceq Y \preceq Y_{up}` survives and the bounds stay certified;
the added bias is at most ``(a + r) H`` per side instead of ``k H`` for a single level
at the coarse mesh.  The inner compositions' aliased mass and round-off (a total
variation ``e`` per inner law, paid once per copy) are added to the error bound.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from ...engine import ComposedPMF, LatticePMF, compose_lattices
from ...engine.evolving import split_count
from .envelopes import ComposedBounds

__all__ = ["bins_for", "monotone_regrid", "compose_bounds_two_level", "MIN_BINS", "MAX_BINS"]

MIN_BINS = 2**15
MAX_BINS = 2**22


def bins_for(k: int) -> int:
    """Bins per histogram for a ``k``-fold composition: ``4096 sqrt(k)`` rounded up to a
    power of two, clipped to ``[2**15, 2**22]`` (module docstring)."""
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    b = 2 ** math.ceil(math.log2(4096.0 * math.sqrt(k)))
    return int(min(max(b, MIN_BINS), MAX_BINS))


def monotone_regrid(pmf: "LatticePMF | ComposedPMF", factor: int, mode: str) -> LatticePMF:
    """Move every atom of ``pmf`` to the coarse lattice of mesh ``factor * h``.

    ``mode="up"``: index ``i`` goes to :math:`\\lceil i/f \\rceil` (values only grow:
    stochastically larger); ``"down"``: :math:`\\lfloor i/f \\rfloor` (smaller);
    ``"nearest"``: the nearest coarse point (estimates only).  The shift and the mass at
    ``+inf`` are kept; masses are exact sums.
    """
    factor = int(factor)
    idx = int(pmf.offset) + np.arange(pmf.probs.size, dtype=np.int64)
    if mode == "up":
        new = -((-idx) // factor)
    elif mode == "down":
        new = idx // factor
    elif mode == "nearest":
        new = np.floor_divide(idx + factor // 2, factor)
    else:
        raise ValueError(f"mode must be 'up', 'down' or 'nearest', got {mode!r}")
    off = int(new[0])
    probs = np.bincount(new - off, weights=pmf.probs)
    return LatticePMF(probs, off, pmf.h * factor, shift=pmf.shift, p_inf=pmf.p_inf)


def _as_lattice(c: ComposedPMF) -> LatticePMF:
    return LatticePMF(probs=c.probs, offset=c.offset, h=c.h, shift=c.shift, p_inf=c.p_inf)


def _two_level(components: Sequence[tuple[LatticePMF, int]], factor: int, mode: str,
               tail_mass: float, max_size: int) -> tuple[ComposedPMF, int]:
    outer: list[tuple[LatticePMF, int]] = []
    tv = 0.0
    events = 0
    for pmf, count in components:
        split = split_count(count)
        for size, copies in ((split.inner, split.copies), (1, split.rest)):
            if size == 0 or copies == 0:
                continue
            if size == 1:
                inner = pmf
            else:
                c = compose_lattices([(pmf, size)], tail_mass=tail_mass, max_size=max_size)
                inner = _as_lattice(c)
                tv += copies * (2.0 * (c.spill_upper + c.spill_lower) + c.numeric_error)
            outer.append((monotone_regrid(inner, factor, mode), copies))
            events += copies
    out = compose_lattices(outer, tail_mass=tail_mass, max_size=max_size)
    # the inner errors are total variations: charged like aliased mass (both bounds widen)
    res = ComposedPMF(out.probs, out.offset, out.h, out.shift, out.p_inf,
                      out.spill_upper + tv, out.spill_lower, out.numeric_error)
    return res, events


def compose_bounds_two_level(components: Sequence[tuple[object, int]], factor: int, *,
                             tail_mass: float = 1e-16, max_size: int = 2**24):
    """Two-level composition of envelopes (module docstring); a
    :class:`~sampledprv.sampled.certification.envelopes.ComposedBounds` on the mesh ``factor * h``.

    ``details`` gain ``two_level_factor`` and ``coarse_events`` (the number of regridded
    variables, each adding at most one coarse mesh of bias).
    """

    kw = dict(tail_mass=tail_mass, max_size=max_size)
    up, ev = _two_level([(e.upper, c) for e, c in components], factor, "up", **kw)
    low, _ = _two_level([(e.lower, c) for e, c in components], factor, "down", **kw)
    est, _ = _two_level([(e.estimate, c) for e, c in components], factor, "nearest", **kw)
    det = {"spill_upper": up.spill_upper + up.spill_lower, "numeric_error": up.numeric_error,
           "p_inf_upper": up.p_inf, "grid_points": int(up.probs.size),
           "two_level_factor": int(factor), "coarse_events": int(ev)}
    return ComposedBounds(up, low, est, det)
