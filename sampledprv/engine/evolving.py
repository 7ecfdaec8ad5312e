r"""Multi-level ("recursive evolving") composition for long compositions.

A composition of ``K`` mechanisms at one mesh needs ``h ~ t / sqrt(K log(1/delta))``
over a window that grows like ``sqrt(K)``: at ``K = 1e6`` that is hundreds of millions
of grid points.  Instead the ``K`` steps are grouped in a tree, as in Ghazi et al.'s
evolving discretization:

* level 0 is one step, discretized on the fine mesh ``H_0 = h``;
* a level-``i`` node is the sum of ``m_i`` level-``(i-1)`` nodes, composed by FFT on
  mesh ``H_{i-1}`` and then *regridded* by randomized rounding
  (:mod:`sampledprv.engine.regrid`) onto ``H_i = f_i H_{i-1}``;
* a component of count ``c`` is ``a`` top-level nodes plus, in mixed radix, ``d_j < m_{j+1}``
  nodes of each lower level ``j``, each regridded to the top mesh; all of them are composed
  on the top mesh ``H_L``.

Errors (all added by the accountant to its budget):

* rounding: every rounding (``c`` level-0 ones of range ``h``, one per level-``i`` node
  instance of range ``H_i``, one per lower-level node regridded to the top of range
  ``H_L``) is a martingale difference with conditional mean zero and a conditional range
  known in advance, so one Azuma-Hoeffding bound covers the tree with
  :math:`V = \sum (\text{range})^2` (:meth:`LevelPlan.rounding_variance`);
* each composed node law differs from the exact law of its sum only by the mass its
  circular FFT aliased plus round-off; that total variation ``e_i`` is paid once per
  node instance (``N_i e_i``), because :math:`\|P*R - P'*R'\|_1 \le \|P-P'\|_1 +
  \|R-R'\|_1` and :math:`|\Delta \delta| \le \|\Delta P\|_1` for integrands bounded by 1.

With one level this is the two-level scheme (fine inner sums, coarse outer composition).
The planner (:func:`plan_levels`) picks the number of levels, the arities and the share of
the variance budget of each level by minimizing a cost model of the FFT lengths.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Sequence

from .compose import ComposedPMF, GridTooLargeError, compose_lattices
from .compose_regrid import compose_regridded_window, foldable
from .lattice import LatticePMF
from .regrid import regrid
from .error_weights import WeightedError

@lru_cache(maxsize=65536)
def _mixed_radix(node_counts: tuple[int, ...], count: int) -> tuple[tuple[int, int], ...]:
    """``(level, multiplicity)`` pairs of :meth:`LevelPlan.decompose` (cached: the planner
    asks for the same tree shapes and counts many times)."""
    uses = []
    rest = count
    for level in range(len(node_counts) - 1, -1, -1):
        d, rest = divmod(rest, node_counts[level])
        if d:
            uses.append((level, d))
    return tuple(uses)


@dataclass(frozen=True)
class LevelPlan:
    """A composition tree: fine mesh ``h``, arities ``m_1..m_L``, regrid factors
    ``f_1..f_L`` (``H_i = f_i H_{i-1}``).  ``L = 0`` is the single-level composition."""

    h: float
    arities: tuple[int, ...] = ()
    factors: tuple[int, ...] = ()
    #: compose each level's remainder nodes on their own mesh before regridding them to
    #: the top (one top rounding per level) instead of regridding them one by one
    partial_remainders: bool = False

    def __post_init__(self) -> None:
        if len(self.arities) != len(self.factors):
            raise ValueError("arities and factors must have the same length")
        if any(int(m) < 2 for m in self.arities) or any(int(f) < 1 for f in self.factors):
            raise ValueError("arities must be >= 2 and factors >= 1")

    @property
    def levels(self) -> int:
        return len(self.arities)

    @cached_property
    def meshes(self) -> tuple[float, ...]:
        """``(H_0, ..., H_L)``."""
        out = [self.h]
        for f in self.factors:
            out.append(out[-1] * f)
        return tuple(out)

    @cached_property
    def node_counts(self) -> tuple[int, ...]:
        """Steps per node, ``(n_0 = 1, ..., n_L)``."""
        out = [1]
        for m in self.arities:
            out.append(out[-1] * int(m))
        return tuple(out)

    def decompose(self, count: int) -> dict[int, int]:
        """``{level: multiplicity}`` of the nodes that make up ``count`` steps: as many
        top-level nodes as fit, the rest in mixed radix (each digit below the arity)."""
        return dict(_mixed_radix(self.node_counts, int(count)))

    def instances(self, count: int) -> dict[int, int]:
        """Number of node instances at each level ``i >= 1`` (each regridded once to
        ``H_i``) in the tree of ``count`` steps."""
        n = self.node_counts
        uses = self.decompose(count)
        return {i: sum(mult * (n[j] // n[i]) for j, mult in uses.items() if j >= i)
                for i in range(1, self.levels + 1)}

    def rounding_variance(self, counts: Sequence[int], extra_top: int = 0,
                          fine_factor: float = 1.0) -> float:
        """The Azuma variance :math:`V = \\sum (\\text{range})^2` of every rounding in the
        trees of the given component counts, plus ``extra_top`` steps rounded on the fine
        mesh and then once more on the top mesh (the core/tail split's ``J`` steps).

        The ``d_j`` lower-level nodes of a count's mixed-radix remainder are composed on
        their own mesh and regridded to the top once: one term of range ``H_L`` per
        level.  ``fine_factor`` weighs the trees' fine-level terms ``count h^2``: 1 for
        Hoeffding's range, about 1/3 where Bennett's bound with the certified variance
        ``h^2/12`` replaces it (engine/concentration.py; 0 gives the other terms alone)."""
        meshes = self.meshes
        top = meshes[-1]
        v = extra_top * (self.h ** 2 + top ** 2)
        for count in counts:
            v += fine_factor * count * self.h ** 2
            for i, inst in self.instances(count).items():
                v += inst * meshes[i] ** 2
            v += self._remainder_terms(count) * top ** 2
        return v

    def _remainder_terms(self, count: int) -> int:
        uses = self.decompose(count)
        if self.partial_remainders:
            return sum(1 for j in uses if j < self.levels)
        return sum(mult for j, mult in uses.items() if j < self.levels)

    def top_terms(self, counts: Sequence[int], extra_top: int = 0) -> int:
        """Number of roundings of range ``H_L`` (top-level node instances, one per
        remainder level, and the ``extra_top`` steps)."""
        terms = extra_top
        for count in counts:
            uses = self.decompose(count)
            terms += uses.get(self.levels, 0) + self._remainder_terms(count)
        return terms

    def describe(self) -> str:
        if not self.levels:
            return f"one level, mesh {self.h:.3g}"
        parts = [f"{m} x (mesh {H:.3g})" for m, H in zip(self.arities, self.meshes)]
        return " -> ".join(parts) + f" -> top mesh {self.meshes[-1]:.3g}"


#: cost of discretizing one fine point in the units of :func:`plan_cost` (one point of a
#: transform): measured 150 ns per fine point (two subsampled-Gaussian CDF evaluations)
#: against about 26 ns per unit at the first level of k = 1e8
_DISCRETIZE_UNITS = 6.0


def plan_cost(plan: LevelPlan, counts: Sequence[int], width, extra_width: float = 0.0
          ) -> tuple[float, int]:
    """Cost model (FFT points, weighted by the number of spectrum multiplications) and
    largest FFT length of ``plan``; ``width(n)`` is the composed window of ``n`` steps
    (loss units) and ``extra_width`` the window of the extra top-level laws."""
    meshes, n = plan.meshes, plan.node_counts
    k = int(sum(counts))
    cost = 0.0
    largest = 0

    def fft(pts: float, mults: int, items: int = 1, factor: int = 1) -> None:
        # one forward transform per distinct law, log2(mults) products and one inverse;
        # a level regridded by a foldable factor f folds its spectrum (about 0.2 of a
        # transform) and transforms back on pts / f points (engine/compose_regrid.py)
        nonlocal cost, largest
        largest = max(largest, int(pts))
        back = 0.2 + 0.5 / factor if foldable(factor) else 0.5
        cost += pts * (0.5 * items + back + math.log2(mults + 1) / 11.0)

    # the fine discretization: two CDF evaluations per fine point (about as dear as
    # _DISCRETIZE_UNITS points of a transform), once per distinct law
    cost += _DISCRETIZE_UNITS * len(counts) * width(1) / plan.h
    for i in range(1, plan.levels + 1):
        fft(width(n[i]) / meshes[i - 1], plan.arities[i - 1], factor=plan.factors[i - 1])
    if plan.partial_remainders:
        for count in counts:
            for j, mult in plan.decompose(count).items():
                if j < plan.levels and mult > 1:
                    fft(width(mult * n[j]) / meshes[j], mult,
                        factor=int(round(meshes[-1] / meshes[j])))
    top = plan.top_terms(counts)
    below = {j for c in counts for j in plan.decompose(c) if j < plan.levels}
    items = 1 + len(below) + (1 if extra_width else 0)
    if items > 2:
        # compose_tree composes everything but the widest item on its own window first
        rest = k - sum(c // n[-1] * n[-1] for c in counts)
        fft((width(max(rest, 1)) + extra_width) / meshes[-1], top, items - 1)
        items = 2
    fft((width(k) + extra_width) / meshes[-1], top, items)
    return cost, largest


@lru_cache(maxsize=4096)
def _terms(arities: tuple[int, ...], counts: tuple[int, ...], extra_top: int,
           partial: bool) -> tuple[dict[int, int], int]:
    """Node instances per level and the number of top-mesh roundings (its own node
    instances plus the remainders and the extra steps) of a tree shape; they do not depend
    on the meshes, so the planner computes them once per shape."""
    L = len(arities)
    probe = LevelPlan(1.0, arities, (1,) * L, partial)
    inst = {i: 0 for i in range(1, L + 1)}
    for c in counts:
        for i, v in probe.instances(c).items():
            inst[i] += v
    return inst, probe.top_terms(counts, extra_top)


def _make_plan(h: float, arities: tuple[int, ...], counts: Sequence[int],
               budget: float, extra_top: int = 0, top_weight: float = 1.0,
               partial: bool = False) -> LevelPlan | None:
    """Factors for ``arities`` spending ``budget`` (the coarse levels' share of the
    variance) over the levels, the top one ``top_weight`` times as much as each other;
    ``None`` when a level would not coarsen."""
    L = len(arities)
    inst, top_terms = _terms(tuple(arities), tuple(counts), extra_top, partial)
    weights = [1.0] * (L - 1) + [top_weight]
    factors: list[int] = []
    mesh = h
    for i in range(1, L + 1):
        terms = top_terms if i == L else inst[i]
        target = math.sqrt(budget * weights[i - 1] / sum(weights) / max(terms, 1))
        f = int(target / mesh)
        if f < 2:
            return None
        factors.append(f)
        mesh *= f
    return LevelPlan(h, tuple(arities), tuple(factors), partial)


def plan_levels(counts: Sequence[int], v_star: float, width, *,
                snap=lambda x: x, max_levels: int = 6, max_size: int = 2**26,
                extra_top: int = 0, extra_width: float = 0.0,
                fine_factor: float = 1.0) -> LevelPlan:
    """The tree minimizing the cost model whose rounding variance is within ``v_star``.

    Parameters
    ----------
    counts : sequence of int
        Counts of the composed components (all share the tree).
    v_star : float
        Azuma variance budget :math:`V^* = 2t^2/\\log(1/\\delta_H)`.
    width : callable
        ``width(n)``: window (loss units) of the ``n``-fold composition of one step.
    snap : callable
        Rounds a fine mesh down (so that discretizations can be cached).
    extra_top, extra_width : int, float
        Steps rounded to the top mesh outside the tree and the window of their law.
    fine_factor : float
        Weight of the trees' fine-level terms in the variance
        (:meth:`LevelPlan.rounding_variance`).

    Raises
    ------
    GridTooLargeError
        When the cheapest plan still needs an FFT longer than ``max_size``.
    """
    k = fine_factor * int(sum(counts)) + extra_top     # fine-level weight of the steps
    k_max = int(max(counts))
    best: tuple[float, LevelPlan] | None = None
    width = lru_cache(maxsize=None)(width)             # the same n recur across plans
    tried: set[LevelPlan] = set()                     # variants often give one plan
    for share in (0.45, 0.6, 0.75):
        h = snap(math.sqrt(share * v_star / k))
        budget = v_star - k * h * h
        for m1 in (2 ** e for e in range(2, 14)):
            if m1 > k_max:
                break
            for arity in (8, 16, 32):
                arities = [m1]
                while len(arities) <= max_levels:
                    for top_weight in (1.0, 4.0):
                        for partial in (False, True):
                            plan = _make_plan(h, tuple(arities), counts, budget, extra_top,
                                              top_weight, partial)
                            if plan is None or plan in tried:
                                continue
                            tried.add(plan)
                            if plan.rounding_variance(counts, extra_top,
                                                      fine_factor) > v_star:
                                continue
                            cost, largest = plan_cost(plan, counts, width, extra_width)
                            if largest > max_size:
                                cost *= 1e6          # only if nothing else fits
                            if best is None or cost < best[0]:
                                best = (cost, plan)
                    if math.prod(arities) * arity > k_max:
                        break
                    arities.append(arity)
    if best is None:                                  # no coarsening pays: one level
        return LevelPlan(snap(math.sqrt(v_star / k)))
    plan = best[1]
    _, largest = plan_cost(plan, counts, width, extra_width)
    if largest > max_size:
        raise GridTooLargeError(int(largest), max_size)
    return plan


@dataclass(frozen=True)
class Split:
    """``count = copies * inner + rest`` (used by the sampled two-level envelopes)."""

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


def _compose_then_regrid(law: LatticePMF, count: int, factor: int, tail: float,
                         max_size: int) -> tuple[LatticePMF, float, float, float, float]:
    """The ``count``-fold composition of ``law`` regridded by ``factor``: in the frequency
    domain where the factor allows it (``engine/compose_regrid.py``), else composed on
    the fine mesh and then regridded.  Returns the law, the spill bounds (upper, lower),
    the round-off bound and the width of the window that holds the round-off (the
    returned law is trimmed of zero end bins; its errors need not be)."""
    if foldable(factor):
        return compose_regridded_window(law, count, factor, tail_mass=tail,
                                        max_size=max_size)
    c = compose_lattices([(law, count)], tail_mass=tail, max_size=max_size)
    # regridding moves each fine point by less than a coarse mesh
    width = (c.probs.size - 1 + factor) * c.h
    return (regrid(_as_lattice(c), factor), c.spill_upper, c.spill_lower,
            c.numeric_error, width)


def level_tail_masses(plan: LevelPlan, counts: Sequence[int], budget: float) -> dict[int, float]:
    """Per-side spill allowed at each level's FFT so that the total-variation cost
    ``sum_i N_i * 4 * tail_i`` is ``budget``."""
    inst = {i: 0 for i in range(1, plan.levels + 1)}
    for c in counts:
        for i, v in plan.instances(c).items():
            inst[i] += v
    # + 1: each level may also compose one remainder partial node
    return {i: budget / (4.0 * plan.levels * (n + 1)) for i, n in inst.items()}


def compose_tree(components: Sequence[tuple[LatticePMF, int]], plan: LevelPlan, *,
                 inner_budget: float, tail_mass: float, max_size: int,
                 extra: Sequence[tuple[LatticePMF, int]] = (),
                 weighted: list[WeightedError] | None = None) -> tuple[ComposedPMF, float]:
    """Compose with the multi-level scheme; ``extra`` laws (already on the top mesh) join
    the top-level composition.

    When ``components`` is a list it is consumed: each entry is set to ``None`` once its
    first level is composed, so that the fine laws (the longest arrays of a long
    composition) are freed before the upper levels and the top composition run, if the
    caller holds no other reference to them.

    Returns the composed law on the top mesh and the total-variation error of the inner
    levels (already multiplied by the number of node instances that use them).  The
    round-off parts of that error are also appended to ``weighted``, each with its
    node's window and mass (:mod:`sampledprv.engine.error_weights`)."""
    if weighted is None:
        weighted = []
    counts = [int(c) for _, c in components]
    tails = level_tail_masses(plan, counts, inner_budget)
    meshes = plan.meshes
    top_level = plan.levels
    outer: list[tuple[LatticePMF, int]] = []
    tv_error = 0.0
    consumed = isinstance(components, list)
    for index in range(len(components)):
        pmf, count = components[index]
        if consumed:
            components[index] = None          # the caller handed its list over
        uses = plan.decompose(count)
        instances = plan.instances(count)
        need = max(uses)
        laws = [pmf]
        del pmf
        for i in range(1, need + 1):
            law, spill_up, spill_down, numeric, width = _compose_then_regrid(
                laws[-1], plan.arities[i - 1], plan.factors[i - 1], tails[i], max_size)
            tv_error += instances[i] * (2.0 * (spill_up + spill_down) + numeric)
            # the round-off lies on the node's window (the spills outside it stay
            # unweighted): engine/error_weights.py
            weighted.append(WeightedError.of(instances[i] * numeric, law, width=width))
            laws.append(law)
            if i - 1 not in uses:             # only the remainders need the lower laws
                laws[i - 1] = None
        for j, mult in uses.items():
            if j == top_level:
                outer.append((laws[j], mult))
                continue
            law = laws[j]
            to_top = int(round(meshes[-1] / meshes[j]))
            if not plan.partial_remainders:
                outer.append((regrid(law, to_top), mult))
                continue
            if mult > 1:                              # the remainder's partial node
                law, spill_up, spill_down, numeric, width = _compose_then_regrid(
                    law, mult, to_top, tails[j + 1], max_size)
                tv_error += 2.0 * (spill_up + spill_down) + numeric
                weighted.append(WeightedError.of(numeric, law, width=width))
                outer.append((law, 1))
            else:
                outer.append((regrid(law, to_top), 1))
        del laws
    outer.extend(extra)
    # the remainder nodes and the extra laws are narrow next to the top node's copies:
    # compose them first on their own (shorter) window, so that the top FFT transforms
    # two laws instead of one per item (plan_cost counts it so)
    widest = max(range(len(outer)), key=lambda i: outer[i][1] * outer[i][0].probs.size)
    rest = outer[:widest] + outer[widest + 1:]
    if len(rest) >= 2:
        pre = compose_lattices(rest, tail_mass=tails.get(top_level, tail_mass),
                               max_size=max_size)
        # the errors of the rest's law reach the result through a convolution with the
        # widest item's copies, a measure of mass |law|^c: total variation scales by it
        # (the rest holds W, of mass about e^{expected tail steps})
        law, c = outer[widest]
        carrier = min(1.0, float(law.probs.sum()) + law.p_inf) ** c
        tv_error += carrier * (2.0 * (pre.spill_upper + pre.spill_lower) + pre.numeric_error)
        weighted.append(WeightedError.of(pre.numeric_error, _as_lattice(pre), cap=carrier))
        outer = [outer[widest], (_as_lattice(pre), 1)]
    composed = compose_lattices(outer, tail_mass=tail_mass, max_size=max_size)
    return composed, tv_error


__all__ = ["LevelPlan", "plan_levels", "plan_cost", "compose_tree", "level_tail_masses",
           "Split", "split_count"]
