r"""Building the analytic accountant's curves: plan, discretize, compose, wrap.

:class:`CurveBuilder` holds what a build needs (the accuracy targets, the grid limit and
the cache of discretized steps) and turns a resolved composition into one certified
curve per direction (:class:`GridCurve`): by exact enumeration when every law is atomic
and small (:meth:`CurveBuilder.exact`), else by FFT on one level or a multi-level tree
(:meth:`CurveBuilder.rebuilt`).  The method and its error terms are those of the module
docstring of :mod:`sampledprv.analytic.accountant` (design notes, "Coupling bound").
:class:`~sampledprv.analytic.accountant.Accountant` is the facade that composes, caches
and answers queries.
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from ..core.advice import AdvisedError, Remedy
from ..engine.compose import ComposedPMF, GridTooLargeError, compose_lattices
from ..engine.concentration import rounding_tail_bound
from ..engine.core_tail import split_step, tail_cap, tail_mixture
from ..engine.curve import LatticePoints, PrivacyCurve
from ..engine.discretize import discretize, relative_terms
from ..engine.error_weights import WeightedError
from ..engine.evolving import LevelPlan, compose_tree, level_tail_masses, plan_cost, plan_levels
from ..engine.exact_atoms import MAX_ATOMS, compose_atoms, enumeration_size
from ..engine.grid_plan import check_composition, composed_width
from ..engine.regrid import regrid
from ..engine import workers
from ..mechanisms import Mechanism
from ..mechanisms.relations import privacy_loss
from ._direction_curve import DirectionCurve

__all__ = ["CurveBuilder", "Built", "GridCurve", "directions_of", "snap", "METHOD",
           "METHOD_ONLINE", "SHARES"]

METHOD = "mean-preserving discretization + Hoeffding coupling (GLW Thm 5.5) + FFT"
METHOD_ONLINE = ("mean-preserving discretization + Hoeffding coupling (GLW Thm 5.5) + online "
                 "FFT spectra read by Plancherel sums")
METHOD_MULTI_LEVEL = ("mean-preserving discretization + multi-level FFT with randomized "
                      "regridding + Bennett (fine level) / Azuma-Hoeffding coupling")
METHOD_EXACT = ("exact enumeration of the composed atoms (count vectors), certified "
                "floating-point bounds; no discretization")

# shares of delta_error
_HOEFFDING, _OUTSIDE, _SPILL = 0.5, 0.2, 0.1   # spill share is per side
#: the three shares, as the online plan takes them
SHARES = (_HOEFFDING, _OUTSIDE, _SPILL)
#: self-compositions at least this long use the multi-level scheme (engine/evolving.py)
_MULTI_LEVEL_COUNT = 16384
#: discretized steps of at most this many lattice points are kept for later builds; longer
#: ones (the fine cores of k >= 1e7: 40 MiB per direction at 1e8) are rebuilt instead, so
#: that they are freed as soon as the tree's first level has used them (peak memory)
_CACHE_POINTS = 2**20
#: expected number of tail steps of a split law (engine/core_tail.py)
_TAIL_STEPS = 8.0
#: directions are built in parallel threads only below this FFT length (peak memory)
_PARALLEL_GRID = 2**25
#: fine-level weight the planner gives a tree of continuous laws when Bennett's bound
#: replaces Hoeffding's there (engine/concentration.py): the certified variance of
#: nearest rounding is about ``h^2/12`` (``1/3`` of Hoeffding's ``h^2/4``), with 5 %
#: for its excess at the chosen mesh and Bennett's ``phi`` above ``x^2/2``
_BENNETT_FACTOR = 1.05 / 3.0
#: ... taken only where the coarse laws predict ``12 v / h^2 <= _BENNETT_PREDICTED`` at
#: the fine mesh (the excess over 1 shrinks in proportion to ``h``)
_BENNETT_PREDICTED = 1.03


class _BennettShortfall(Exception):
    """A direction's certified fine-level variance exceeded what the plan assumed (its
    rounding term would exceed the ``_HOEFFDING`` share): the build is planned again with
    Hoeffding's weight."""



@dataclass(frozen=True)
class Plan:
    """What :meth:`CurveBuilder.plan` decides: the tree, its Azuma variance, the core/tail
    cut points per (mechanism, direction) and the tail-step cap ``J`` per mechanism (with
    its binomial tail bound)."""

    tree: LevelPlan
    variance: float
    cuts: dict
    caps: dict
    largest: int = 0      # predicted longest FFT of the tree
    #: the fine-level weight the tree was planned with (1: Hoeffding; engine/evolving.py)
    fine_factor: float = 1.0
    #: the squared ranges of every rounding but the trees' fine level (engine/concentration.py)
    rest_variance: float = 0.0


@dataclass(frozen=True)
class BuildContext:
    """What every direction of one rebuild shares: the composition, the plan, the
    truncation level ``tau``, the Hoeffding term, the core/tail regrid factor and the
    spill budgets of the tree's inner levels (``tails``) and of its top (``top_tail``)."""

    composition: dict
    decided: Plan
    tau: float
    k_total: int
    hoeffding: float
    top_factor: int
    inner_budget: float
    tails: object
    top_tail: float


def directions_of(composition: dict) -> tuple[str, ...]:
    """The directions to build: one when every mechanism's pair is symmetric."""
    symmetric = all(m.symmetric for m in composition)
    return ("remove",) if symmetric else ("remove", "add")


def truncation_level(delta_error: float, k_total: int) -> float:
    """Per-step truncation mass ``tau``: the ``_OUTSIDE`` share of ``delta_error`` split
    over both tails of ``k_total`` steps, rounded down to a power of ten (so that caches
    survive small changes of ``k``)."""
    tau = _OUTSIDE * delta_error / (2.0 * k_total)
    return 10.0 ** math.floor(math.log10(tau))


@dataclass(frozen=True)
class Grid:
    """What a curve keeps of its composed law besides the curve itself (the masses are
    dropped once the curve's tail sums are built)."""

    h: float
    points: int
    spill_upper: float
    spill_lower: float

    @classmethod
    def of(cls, composed: ComposedPMF) -> "Grid":
        return cls(composed.h, int(composed.probs.size), composed.spill_upper,
                   composed.spill_lower)


@dataclass(frozen=True)
class GridCurve(DirectionCurve):
    composed: Grid
    outside: float        # bound on P(some mechanism left its window)
    hoeffding: float
    t: float

    curve_: PrivacyCurve
    numeric_error: float  # FFT round-off + discretization rounding (composed)
    #: log of the factors (1 + r_i)^c_i and (1 - r_i)^c_i that the relative rounding of
    #: the point masses costs the upper and lower curves, and the shift sum c_i e_i of the
    #: composed loss from the rounding of atom values (design notes, "Floating point")
    #: and from the discretization shifts' mean errors (design notes, "Coupling bound")
    log_scale_upper: float = 0.0
    log_scale_lower: float = 0.0
    shift: float = 0.0
    #: the parts of ``numeric_error`` that lie on the windows of inner pieces (tree
    #: nodes, discretized steps), re-weighted where the curve is queried
    #: (engine/error_weights.py)
    weighted: tuple[WeightedError, ...] = ()

    @property
    def spill_upper(self) -> float:
        return self.composed.spill_upper

    @property
    def spill_lower(self) -> float:
        return self.composed.spill_lower

    @property
    def mesh(self) -> float:
        return self.composed.h

    @property
    def grid_points(self) -> int:
        return self.composed.points

    def curve(self, eps: float) -> float:
        return self.curve_.delta(eps)

    def inverse(self, delta: float) -> float:
        return math.inf if delta <= 0 else self.curve_.epsilon(delta)

    # how DirectionCurve reads the rebuilt curve
    @property
    def _eps_min(self) -> float:
        return self.curve_.eps_min

    def _lattice_delta(self, eps: float) -> float:
        return self.curve_.delta(eps)

    def _rounding(self, eps: float) -> float:
        return self.curve_.rounding_bound(eps)

    def _top_value(self, floor: float) -> float:
        return float(self.curve_.values[-1]) if self.curve_.values.size else floor

def snap(h: float) -> float:
    """Round a mesh down to the ladder 2^(j/4) so that caches survive small changes."""
    return 2.0 ** (math.floor(4.0 * math.log2(h)) / 4.0)


@dataclass(frozen=True)
class Built:
    """The curves of one build, with the method that made them and its levels (the
    details every interval reports: meshes, rounding variance, tree)."""

    curves: dict
    method: str
    levels: dict


@dataclass
class CurveBuilder:
    """Plans and builds the curves of a resolved composition (module docstring).

    Parameters
    ----------
    eps_error, delta_error, max_grid_size
        The accountant's accuracy targets and grid limit.
    cache
        Discretized steps by ``(mechanism, direction, mesh, tau, cut, factor)``, kept
        across builds (a later :meth:`~sampledprv.Accountant.compose` reuses them while
        the mesh stays on the same rung of :func:`snap`'s ladder); only steps of at most
        ``_CACHE_POINTS`` points, longer ones are freed after their first tree level.
    """

    eps_error: float
    delta_error: float
    max_grid_size: int
    cache: dict = field(default_factory=dict)

    def plan(self, composition: dict[Mechanism, int], tau: float = 1e-20,
              directions: tuple[str, ...] = ("remove",), bennett: bool = True) -> "Plan":
        r"""The composition tree, the core/tail cuts and the Azuma variance.

        The rounding errors enter one Azuma-Hoeffding bound
        :math:`P(\sum > t) \le \exp(-2t^2/V)` with budget
        :math:`V^* = 2t^2/\log(1/\delta_H)`.  Short compositions spend it on the fine
        mesh alone (``V = K h^2``).  When a self-composition reaches
        ``_MULTI_LEVEL_COUNT``, continuous laws are split into core and tail
        (:meth:`split_laws`) and the tree of
        :func:`~sampledprv.engine.evolving.plan_levels` (multi-level, randomized
        regridding) shares the budget between its levels.  When every law of the tree is
        continuous and the coarse laws predict a rounding variance near ``h^2/12`` at its
        fine mesh, the tree is planned with the fine level weighted ``_BENNETT_FACTOR``
        (Bennett's bound, engine/concentration.py; ``bennett=False`` plans with
        Hoeffding's weight 1)."""
        t = self.eps_error
        v_star = 2.0 * t * t / math.log(1.0 / (_HOEFFDING * self.delta_error))
        counts = list(composition.values())
        k_total = sum(counts)
        if max(counts) < _MULTI_LEVEL_COUNT:
            plan = LevelPlan(snap(math.sqrt(v_star / k_total)))
            return Plan(plan, plan.rounding_variance(counts), {}, {})
        cuts, caps, coarse, slope = self.split_laws(composition, tau, directions)
        tree_counts = [c - caps.get(m, (0, 0.0))[0] for m, c in composition.items()]
        extra = sum(j for j, _ in caps.values())
        factors = (_BENNETT_FACTOR, 1.0) if bennett and slope is not None else (1.0,)
        try:
            width = composed_width(coarse, max(tree_counts))
            for factor in factors:
                plan = plan_levels(tree_counts, v_star, width, snap=snap,
                                   max_size=self.max_grid_size, extra_top=extra,
                                   fine_factor=factor)
                if factor == 1.0 or 1.0 + slope * plan.h <= _BENNETT_PREDICTED:
                    break
        except GridTooLargeError as err:
            raise self.grid_error(err, k_total, snap(math.sqrt(v_star / k_total))) \
                from None
        largest = plan_cost(plan, tree_counts, width)[1] if plan.levels else 0
        # ``variance``: Hoeffding's V (the squared ranges), whatever the planning weight
        return Plan(plan, plan.rounding_variance(tree_counts, extra), cuts, caps,
                    largest, factor, plan.rounding_variance(tree_counts, extra, 0.0))

    def split_laws(self, composition: dict[Mechanism, int], tau: float,
                    directions: tuple[str, ...]) -> tuple[dict, dict, list, float | None]:
        r"""Core/tail cuts of the long self-compositions, with coarse laws for sizing.

        A mechanism composed at least ``_MULTI_LEVEL_COUNT`` times whose laws are purely
        continuous (no atoms, no mass at :math:`+\infty`) is split at the points where
        each tail holds ``_TAIL_STEPS / (2 count)`` (:mod:`sampledprv.engine.core_tail`):
        about ``_TAIL_STEPS`` tail steps are expected, and at most ``J`` happen except
        with probability ``tail_cap``'s bound (its share of ``_OUTSIDE * delta_error``).

        Returns
        -------
        cuts : dict
            ``(mechanism, direction) -> (lo, hi)`` of the split laws.
        caps : dict
            ``mechanism -> (J, P(more than J tail steps))``.
        coarse : list
            Each law (its core when split) on 2048 cells: what the tree planner sizes
            the composed width from.
        slope : float or None
            The largest ``(12 v / s^2 - 1) / s`` of the coarse laws (``v`` the certified
            rounding variance on their mesh ``s``): the predicted excess of ``12 v / h^2``
            over 1 at a mesh ``h`` is about ``slope * h``.  ``None`` when some law has
            atoms (its rounding errors need not be near-uniform).
        """
        slope: float | None = 0.0
        cuts: dict[tuple[Mechanism, str], tuple[float, float]] = {}
        caps: dict[Mechanism, tuple[int, float]] = {}
        coarse: list = []
        n_split = sum(1 for m, c in composition.items() if c >= _MULTI_LEVEL_COUNT)
        for mech, count in composition.items():
            laws = {d: privacy_loss(mech, d) for d in directions}
            split = count >= _MULTI_LEVEL_COUNT and all(
                law.cont_mass > 0 and not law.atom_values.size and law.p_pos_inf == 0
                for law in laws.values())
            for direction, law in laws.items():
                if split:
                    side = _TAIL_STEPS / (2.0 * count)
                    lo, hi = law.lower_point(side), law.upper_point(side)
                    cuts[(mech, direction)] = (lo, hi)
                    step = max(hi - lo, 1e-12) / 2048
                    window = (int(np.floor(lo / step + 0.5)), int(np.floor(hi / step + 0.5)))
                    d = discretize(law, step, 0.0, window=window)
                else:
                    lo, hi = law.lower_point(tau), law.upper_point(tau)
                    step = max(hi - lo, 1e-12) / 2048
                    d = discretize(law, step, tau)
                coarse.append(d.pmf.trimmed())
                if law.atom_values.size or law.p_pos_inf > 0 or slope is None:
                    slope = None
                else:
                    slope = max(slope, (12.0 * d.rounding_variance / step ** 2 - 1.0) / step)
            if split:
                caps[mech] = tail_cap(count, _TAIL_STEPS / count * (1.0 + 1e-9),
                                      _OUTSIDE * self.delta_error / (2.0 * n_split))
        return cuts, caps, coarse, slope

    def rebuilt(self, composition: dict[Mechanism, int],
                only: tuple[str, ...] | None = None,
                share: workers.CoreShare | None = None) -> "Built":
        """Plan (:meth:`plan`), check every grid size before allocating
        (:meth:`check_grids`), then compose each direction (:meth:`build_direction`;
        the two directions in parallel threads below ``_PARALLEL_GRID``).  ``only``
        builds those directions alone, on the plan of the whole build (the same curves
        as a whole build gives them; a direction built alone gets every core's worker
        threads).  ``share``: the cores are shared with other builds at work (each
        direction a member of it, :class:`~sampledprv.engine.workers.CoreShare`)."""
        try:
            return self._rebuilt(composition, bennett=True, only=only, share=share)
        except _BennettShortfall:
            return self._rebuilt(composition, bennett=False, only=only, share=share)

    def _rebuilt(self, composition: dict[Mechanism, int], bennett: bool,
                 only: tuple[str, ...] | None = None,
                 share: workers.CoreShare | None = None) -> "Built":
        k_total = sum(composition.values())
        tau = truncation_level(self.delta_error, k_total)
        every = directions_of(composition)
        decided = self.plan(composition, tau, every, bennett=bennett)
        directions = every if only is None else tuple(d for d in every if d in only)
        plan, variance = decided.tree, decided.variance
        tree_counts = [c - decided.caps.get(m, (0, 0.0))[0] for m, c in composition.items()]
        inner_budget = _SPILL * self.delta_error
        ctx = BuildContext(
            composition=composition, decided=decided, tau=tau, k_total=k_total,
            hoeffding=math.exp(-2.0 * self.eps_error ** 2 / variance),
            top_factor=int(round(plan.meshes[-1] / plan.h)),
            inner_budget=inner_budget,
            tails=level_tail_masses(plan, tree_counts, inner_budget),
            top_tail=(0.5 if plan.levels else 1.0) * _SPILL * self.delta_error)
        try:
            for direction in directions:
                self.check_grids(ctx, direction)
        except GridTooLargeError as err:
            raise self.grid_error(err, k_total, plan.h) from None

        # the two directions are independent; FFTs and large ufuncs release the GIL, so
        # two threads use two cores -- unless the grids are so long that two at once
        # would double the peak memory (then one after the other: every direction is
        # built either way)
        # the cores beyond one per direction at work share that direction's transforms
        # (engine/workers.py: the same floats whatever the thread count)
        parallel = len(directions) > 1 and decided.largest < _PARALLEL_GRID
        per_direction = workers.available_cores() // (len(directions) if parallel else 1)

        def build(direction: str) -> GridCurve:
            if share is not None:
                with share.member(), workers.using_threads(share):
                    return self.build_direction(ctx, direction)
            with workers.using_threads(per_direction):
                return self.build_direction(ctx, direction)
        if parallel:
            with ThreadPoolExecutor(max_workers=len(directions)) as pool:
                built = list(pool.map(build, directions))
        else:
            built = [build(d) for d in directions]
        levels = {"mesh_fine": plan.h, "mesh_coarse": plan.meshes[-1],
                  "rounding_variance": variance, "levels": plan.describe(),
                  "rounding_bound": "Bennett (fine level) + Azuma-Hoeffding"
                  if plan.levels or decided.fine_factor < 1.0 else "Hoeffding",
                  "fine_weight": decided.fine_factor}
        if decided.caps:
            levels["levels"] += "; core/tail split: " + ", ".join(
                f"at most {cap} tail steps of {composition[m]:,} (P(more) <= {b:.1e})"
                for m, (cap, b) in decided.caps.items())
        return Built(dict(zip(directions, built)),
                     METHOD_MULTI_LEVEL if plan.levels else METHOD, levels)

    def check_grids(self, ctx: "BuildContext", direction: str) -> None:
        """Size every grid of ``direction`` before anything proportional to it is
        allocated (:func:`~sampledprv.engine.grid_plan.check_composition`; the split laws'
        tree levels were sized by the planner).  Raises ``GridTooLargeError``."""
        plan, h, meshes, nodes = ctx.decided.tree, ctx.decided.tree.h, \
            ctx.decided.tree.meshes, ctx.decided.tree.node_counts
        laws = [(privacy_loss(m, direction), c) for m, c in ctx.composition.items()
                if m not in ctx.decided.caps]
        for i in range(1, plan.levels + 1):
            for law, c in laws:
                if c >= nodes[i]:
                    check_composition([(law, nodes[i])], h, ctx.tau, ctx.tails[i],
                                      self.max_grid_size, mesh_out=meshes[i - 1])
        if not ctx.decided.caps:
            check_composition(laws, h, ctx.tau, ctx.top_tail, self.max_grid_size,
                              mesh_out=meshes[-1])

    def discretized_step(self, ctx: "BuildContext", mech: Mechanism, direction: str,
                          cut: tuple[float, float] | None):
        """One mechanism's law in ``direction`` on the mesh (split into core and tail at
        ``cut`` when the planner split it), cached across queries and rebuilds when it has
        at most ``_CACHE_POINTS`` lattice points."""
        h = ctx.decided.tree.h
        key = (mech, direction, h, ctx.tau, cut, ctx.top_factor if cut else None)
        if key in self.cache:
            return self.cache[key]
        law = privacy_loss(mech, direction)
        try:
            step = (split_step(law, h, ctx.tau, ctx.top_factor, *cut) if cut else
                    discretize(law, h, ctx.tau, self.max_grid_size))
        except GridTooLargeError as err:
            raise self.grid_error(err, ctx.k_total, h) from None
        if (step.core.pmf if cut else step.pmf).probs.size <= _CACHE_POINTS:
            self.cache[key] = step
        return step

    def build_direction(self, ctx: "BuildContext", direction: str) -> GridCurve:
        """Compose ``direction``: discretize each step, collect its certified terms
        (truncation mass, mass and window errors, relative rounding, shifts; the core/tail
        mixture ``W`` of a split law), compose by FFT (one level or the tree) and wrap the
        curve with its error terms."""
        plan, h, decided = ctx.decided.tree, ctx.decided.tree.h, ctx.decided
        comps, extra, outside, mass_error, tv = [], [], 0.0, 0.0, 0.0
        weighted: list[WeightedError] = []
        scale_up = scale_low = shift = 0.0
        fine: list[tuple[int, float, float]] = []   # (steps, variance bound, h) per law
        for mech, count in ctx.composition.items():
            cut = decided.cuts.get((mech, direction))
            d = self.discretized_step(ctx, mech, direction, cut)
            if cut:
                cap, cap_bound = decided.caps[mech]
                w, w_error = tail_mixture(regrid(d.core.pmf, ctx.top_factor), d.tail,
                                          count, cap)
                # W (mass about e^{expected tail steps}) is convolved with the tree's
                # c^{*(count - cap)}, of mass at most |c|^(count - cap): its error in
                # total variation shrinks by that factor (the tree's own error is
                # counted apart)
                w_error *= min(1.0, float(d.core.pmf.probs.sum()) ** (count - cap))
                comps.append((d.core.pmf, count - cap))
                extra.append((w, 1))
                outside += count * d.core.outside_mass + cap_bound
                mass_error += count * (d.core.mass_error + d.mass_error)
                tv += w_error
                # at most ``cap`` steps are tail steps on the event the Azuma bound
                # covers: each moves the sum by at most the tail's mean error
                shift += cap * d.tail_mean_error
                d = d.core
                fine.append((count - cap, d.rounding_variance, h))
            else:
                comps.append((d.pmf, count))
                fine.append((count, d.rounding_variance, h))
                outside += count * d.outside_mass
                mass_error += count * d.mass_error
            # the bucket masses' rounding lies on the step's window
            weighted.append(WeightedError.of(count * d.window_error, d.pmf))
            scale_up, scale_low, shift = relative_terms(d, count, scale_up, scale_low,
                                                        shift)
        d = None           # the fine laws now live only in comps, which compose_tree empties
        rounding = ctx.hoeffding
        if plan.levels or decided.fine_factor < 1.0:
            # Bennett on the fine level with the certified variances (never above
            # Hoeffding's term); a plan that assumed less variance than certified is
            # redone, before anything is composed
            rounding = min(rounding, rounding_tail_bound(self.eps_error, fine,
                                                         decided.rest_variance))
            if decided.fine_factor < 1.0 and \
                    rounding > _HOEFFDING * self.delta_error * (1.0 + 1e-9):
                raise _BennettShortfall(direction)
        try:
            if plan.levels:
                composed, tree_tv = compose_tree(
                    comps, plan, inner_budget=ctx.inner_budget, tail_mass=ctx.top_tail,
                    max_size=self.max_grid_size, extra=extra, weighted=weighted)
                tv += tree_tv
            else:
                composed = compose_lattices(comps, tail_mass=ctx.top_tail,
                                            max_size=self.max_grid_size)
        except GridTooLargeError as err:
            raise self.grid_error(err, ctx.k_total, h) from None
        curve = PrivacyCurve(LatticePoints(composed.offset, composed.h, composed.shift,
                                           composed.probs.size),
                             composed.probs, composed.p_inf,
                             eps_min=-(self.eps_error + shift))
        return GridCurve(Grid.of(composed), min(1.0, outside), rounding,
                               self.eps_error,
                               curve, composed.numeric_error + mass_error + tv,
                               scale_up, scale_low, shift, tuple(weighted))

    def exact(self, composition: dict[Mechanism, int]) -> "Built | None":
        """Curves by exact enumeration (``engine/exact_atoms.py``) when every law is
        atomic and the composition has at most ``MAX_ATOMS`` atoms; ``None`` otherwise.
        The interval is then the exact curve widened by floating-point bounds only (no
        Hoeffding term, no ``eps_error`` slack)."""
        directions = directions_of(composition)
        laws = {d: [(privacy_loss(m, d), c) for m, c in composition.items()]
                for d in directions}
        for d in directions:
            size = enumeration_size(laws[d])
            if size is None or size > MAX_ATOMS:
                return None
        curves = {}
        for d in directions:
            ex = compose_atoms(laws[d])
            composed = ComposedPMF(probs=ex.probs, offset=0, h=0.0, shift=0.0, p_inf=ex.p_inf,
                                   spill_upper=0.0, spill_lower=0.0, numeric_error=0.0)
            curve = PrivacyCurve(ex.values, ex.probs, ex.p_inf, eps_min=-ex.shift)
            curves[d] = GridCurve(Grid.of(composed), 0.0, 0.0, 0.0, curve,
                                        ex.mass_error,
                                        ex.log_scale_upper, ex.log_scale_lower, ex.shift)
        return Built(curves, METHOD_EXACT, {})

    def grid_error(self, err: GridTooLargeError, k_total: int, h: float) -> AdvisedError:
        return AdvisedError(
            f"eps_error={self.eps_error} for {k_total:,} composed mechanisms needs an "
            f"FFT grid of {err.needed:,} points (mesh h={h:.3g}), above "
            f"max_grid_size={self.max_grid_size:,}",
            [Remedy("eps_error", "set", 1.1 * self.eps_error * err.needed / self.max_grid_size,
                    "Accountant", "the grid shrinks like 1/eps_error"),
             Remedy("max_grid_size", "set", float(err.needed), "Accountant",
                    f"if you have ~{24 * err.needed / 2**30:.1f} GiB of memory")])
