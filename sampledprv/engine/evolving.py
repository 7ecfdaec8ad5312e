r"""Two-level ("evolving") composition for long compositions.

A composition of ``K`` mechanisms at one mesh needs ``h ~ t / sqrt(K log(1/delta))``
over a window that grows like ``sqrt(K)``: at ``K = 1e6`` that is hundreds of
millions of grid points.  Instead, each long self-composition ``Y^(*c)`` is split as
``c = a m + r``: the ``m``-fold (and ``r``-fold) sums are composed on the fine mesh
``h``, then *regridded* by randomized rounding (:mod:`sampledprv.engine.regrid`) to a
coarse mesh ``H = f h``, and the ``a`` copies are composed on the coarse mesh.

Errors (all added by the accountant to its budget):

* rounding: the fine-level errors (``K`` independent terms of range ``h``) and the
  coarse-level ones (``E`` martingale differences of range ``H``, one per regridded
  copy) enter one Azuma-Hoeffding bound with :math:`V = K h^2 + E H^2`;
* each inner composed law differs from the true law of its sum only by the mass its
  circular FFT aliased plus round-off; that total variation ``e`` is paid once per
  copy that uses it (``a e``), because :math:`|\Delta \delta| \le \|\Delta P\|_1` for
  integrands bounded by 1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from .compose import ComposedPMF, compose_lattices
from .lattice import LatticePMF
from .regrid import regrid


@dataclass(frozen=True)
class Split:
    """How one component of count ``c`` is composed: ``c = copies * inner + rest``.

    The ``copies`` inner sums are composed on the fine mesh and regridded; the ``rest``
    single copies are regridded one by one (``rest < copies``, so this costs no FFT and
    at most doubles the number of coarse rounding terms)."""

    inner: int
    copies: int
    rest: int

    @property
    def coarse_events(self) -> int:
        """Number of regridded variables (each one Azuma term of range ``H``)."""
        return self.copies + self.rest


def split_count(count: int) -> Split:
    """Inner size ``m`` near ``2 sqrt(count)``, adjusted so that the rest is below the
    number of copies."""
    target = max(1, min(count, int(round(2.0 * math.sqrt(count)))))
    copies = -(-count // target)
    m = count // copies
    return Split(m, copies, count - copies * m)


def _as_lattice(c: ComposedPMF) -> LatticePMF:
    return LatticePMF(probs=c.probs, offset=c.offset, h=c.h, shift=c.shift, p_inf=c.p_inf)


def compose_two_level(components: Sequence[tuple[LatticePMF, Split]], factor: int, *,
                      inner_tail: float, tail_mass: float,
                      max_size: int) -> tuple[ComposedPMF, float]:
    """Compose with the two-level scheme; returns the composed law on mesh
    ``factor * h`` and the total-variation error of the inner levels (already
    multiplied by the number of copies that use them)."""
    outer: list[tuple[LatticePMF, int]] = []
    tv_error = 0.0
    for pmf, split in components:
        for size, copies in ((split.inner, split.copies), (1, split.rest)):
            if size == 0 or copies == 0:
                continue
            if size == 1:
                inner, err = pmf, 0.0
            else:
                c = compose_lattices([(pmf, size)], tail_mass=inner_tail, max_size=max_size)
                inner = _as_lattice(c)
                err = 2.0 * (c.spill_upper + c.spill_lower) + c.numeric_error
            outer.append((regrid(inner, factor), copies))
            tv_error += copies * err
    composed = compose_lattices(outer, tail_mass=tail_mass, max_size=max_size)
    return composed, tv_error
