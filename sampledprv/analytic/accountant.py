r"""The analytic accountant: deterministic certified intervals for compositions.

Method (``docs/design-notes.md``; Gopi, Lee, Wutschitz 2021, Thm 5.5, with a sharper
constant).  For every mechanism and direction the exact privacy-loss law :math:`Y_i`
is discretized on a common mesh ``h`` (:mod:`sampledprv.engine.discretize`) into
:math:`\tilde Y_i = R_i + \mu_i`.  On the event ``G`` that every :math:`Y_i` falls in
its window, :math:`Z_i = Y_i - \tilde Y_i` are independent, mean zero, with range
``h``, so by Hoeffding

.. math:: P\Big(\sum_i Z_i > t\Big) \le \exp\!\big(-2t^2 / (K h^2)\big) =: \delta_H,

with ``K`` the number of composed mechanisms and ``t = eps_error``.  Since
:math:`f_\varepsilon(s) = (1-e^{\varepsilon-s})_+` is increasing and bounded by 1,

.. math::
   \delta_{\tilde S}(\varepsilon + t) - \delta_H - \text{spill}
   \le \delta_S(\varepsilon) \le
   \delta_{\tilde S}(\varepsilon - t) + \delta_H + P(G^c) + \text{spill},

where :math:`\tilde S = \sum \tilde Y_i` is computed by FFT
(:mod:`sampledprv.engine.compose`), "spill" is the Chernoff bound on the mass the
circular FFT aliased, plus the estimated floating-point error.  The mesh is chosen so
that :math:`\delta_H` is half of ``delta_error``; windows so that the other terms
share the rest.  ``epsilon(delta)`` inverts these bounds exactly.  The estimate is the
curve of :math:`\tilde S` itself.
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np


from ..core import validation as v
from ..core.advice import AdvisedError, Remedy
from ..core.concurrency import guarded
from ..engine.compose import ComposedPMF, GridTooLargeError, compose_lattices
from ..engine.curve import LatticePoints, PrivacyCurve
from ..engine.discretize import Discretized, discretize, relative_terms
from ..engine.core_tail import split_step, tail_cap, tail_mixture
from ..engine.grid_plan import check_composition, composed_width
from ..engine.regrid import regrid
from ..engine.evolving import LevelPlan, compose_tree, level_tail_masses, plan_cost, plan_levels
from ..engine.exact_atoms import MAX_ATOMS, compose_atoms, enumeration_size
from ..engine.online import Outgrown
from ..engine.error_weights import WeightedError
from ._direction_curve import DirectionCurve
from ._online import OnlinePlan, warn_online_off
from ..core.interval import DETERMINISTIC, Interval, fixed_size_bracket
from ..core.contract import PrivacyAccountant
from ..mechanisms import Gaussian, Mechanism
from ..mechanisms.base import Direction, NeighbouringRelation, as_direction, as_relation
from ..mechanisms.relations import privacy_loss, resolve_bounds, resolve_relation

__all__ = ["Accountant"]

METHOD = "mean-preserving discretization + Hoeffding coupling (GLW Thm 5.5) + FFT"
METHOD_ONLINE = ("mean-preserving discretization + Hoeffding coupling (GLW Thm 5.5) + online "
                 "FFT spectra read by Plancherel sums")
METHOD_MULTI_LEVEL = ("mean-preserving discretization + multi-level FFT with randomized "
                      "regridding + Azuma-Hoeffding coupling")
METHOD_EXACT = ("exact enumeration of the composed atoms (count vectors), certified "
                "floating-point bounds; no discretization")

# shares of delta_error
_HOEFFDING, _OUTSIDE, _SPILL = 0.5, 0.2, 0.1   # spill share is per side
#: self-compositions at least this long use the multi-level scheme (engine/evolving.py)
_MULTI_LEVEL_COUNT = 16384
#: expected number of tail steps of a split law (engine/core_tail.py)
_TAIL_STEPS = 8.0
#: directions are built in parallel threads only below this FFT length (peak memory)
_PARALLEL_GRID = 2**25


@dataclass(frozen=True)
class _Plan:
    """What :meth:`Accountant._plan` decides: the tree, its Azuma variance, the core/tail
    cut points per (mechanism, direction) and the tail-step cap ``J`` per mechanism (with
    its binomial tail bound)."""

    tree: LevelPlan
    variance: float
    cuts: dict
    caps: dict
    largest: int = 0      # predicted longest FFT of the tree


@dataclass(frozen=True)
class _BuildContext:
    """What every direction of one rebuild shares: the composition, the plan, the
    truncation level ``tau``, the Hoeffding term, the core/tail regrid factor and the
    spill budgets of the tree's inner levels (``tails``) and of its top (``top_tail``)."""

    composition: dict
    decided: _Plan
    tau: float
    k_total: int
    hoeffding: float
    top_factor: int
    inner_budget: float
    tails: object
    top_tail: float


def _directions(composition: dict) -> tuple[str, ...]:
    """The directions to build: one when every mechanism's pair is symmetric."""
    symmetric = all(m.symmetric for m in composition)
    return ("remove",) if symmetric else ("remove", "add")


def _truncation_level(delta_error: float, k_total: int) -> float:
    """Per-step truncation mass ``tau``: the ``_OUTSIDE`` share of ``delta_error`` split
    over both tails of ``k_total`` steps, rounded down to a power of ten (so that caches
    survive small changes of ``k``)."""
    tau = _OUTSIDE * delta_error / (2.0 * k_total)
    return 10.0 ** math.floor(math.log10(tau))


@dataclass(frozen=True)
class _Grid:
    """What a curve keeps of its composed law besides the curve itself (the masses are
    dropped once the curve's tail sums are built)."""

    h: float
    points: int
    spill_upper: float
    spill_lower: float

    @classmethod
    def of(cls, composed: ComposedPMF) -> "_Grid":
        return cls(composed.h, int(composed.probs.size), composed.spill_upper,
                   composed.spill_lower)


@dataclass(frozen=True)
class _DirectionCurve(DirectionCurve):
    composed: _Grid
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


# the curves are rebuilt after unpickling or copying (core/concurrency.py)
@guarded("compose", "composition", "_build", "delta", "epsilon", "describe", "__repr__",
         transient=("_curves",))
class Accountant(PrivacyAccountant):
    r"""Deterministic certified accountant for analytic mechanisms.

    Parameters
    ----------
    eps_error : float
        Half-width budget in epsilon: intervals for ``epsilon(delta)`` are about
        ``2 * eps_error`` wide.  Smaller values need a finer mesh
        (``h ~ eps_error / sqrt(K log(1/delta_error))``).
    delta_error : float
        Total budget of the additive delta errors (concentration, truncation,
        aliasing, round-off).  Keep it well below the deltas you query (at least
        10x); ``epsilon(delta)`` refuses ``delta`` at or below the realised error.
    neighbouring : {"add_remove", "substitute"} or NeighbouringRelation
        Neighbouring relation.  ``sensitivity`` stays the per-record bound, so under
        ``"substitute"`` a sum can move by twice it; specs that cannot certify a relation
        raise a :class:`ValueError` naming both at :meth:`compose`.  ``neighboring=``
        (dp-accounting's and Opacus' spelling) is accepted as the same argument.
    max_grid_size : int
        Largest FFT length; beyond it a :class:`ValueError` says which accuracy to
        loosen.
    merge_gaussians : bool
        Compose all (unsubsampled) Gaussian mechanisms in closed form first: ``c_i``
        runs of ``Gaussian`` with :math:`\mu_i = \Delta_i/\sigma_i` are exactly one
        Gaussian with :math:`\mu = \sqrt{\sum_i c_i \mu_i^2}`.  This is exact and
        makes k-fold Gaussians free; switch it off to exercise the FFT path.  The online
        mode (``horizon``) composes Gaussians like any other mechanism.
    horizon : int, optional
        Planned number of composed mechanisms (for example the number of training
        steps).  The mesh is then the one a rebuild would use for ``horizon``
        mechanisms and stays fixed: each later :meth:`compose` multiplies spectra in
        place and :meth:`delta` / :meth:`epsilon` are answered by Plancherel sums in
        ``O(n)`` (:mod:`sampledprv.engine.online`), with the same certified terms as a
        rebuild on that mesh (Hoeffding with the current count).  Past the horizon the
        spectra are rebuilt once for a doubled horizon; :meth:`describe` reports it.
        ``None`` (default): every query after a change rebuilds by FFT on the mesh
        planned for the current composition.

    Examples
    --------
    >>> import sampledprv as sp
    >>> acc = sp.Accountant(eps_error=0.01, delta_error=1e-10)
    >>> acc = acc.compose(sp.PoissonSubsampled(sp.Gaussian(sigma=1.0), q=0.01), count=1000)
    >>> iv = acc.epsilon(delta=1e-5)
    >>> iv.lower <= iv.estimate <= iv.upper
    True
    """

    def __init__(self, eps_error: float = 0.01, delta_error: float = 1e-10, *,
                 neighbouring: str = "add_remove", max_grid_size: int = 2**26,
                 merge_gaussians: bool = True, horizon: int | None = None,
                 neighboring: str | None = None) -> None:
        self.eps_error = v.in_interval("eps_error", eps_error, 0.0, 1.0, low_open=True,
                                       high_open=False, hint="typical values are 1e-3 to 0.1")
        self.merge_gaussians = bool(merge_gaussians)
        self.delta_error = v.in_interval("delta_error", delta_error, 0.0, 1e-2,
                                         low_open=True, high_open=True,
                                         hint="typical values are 1e-12 to 1e-8")
        if neighboring is not None:     # dp-accounting's and Opacus' spelling
            if neighbouring != "add_remove" and as_relation(neighbouring) is not \
                    as_relation(neighboring):
                raise ValueError(f"give neighbouring= or neighboring= (the same argument), "
                                 f"not both: got {neighbouring!r} and {neighboring!r}")
            neighbouring = neighboring
        self.neighbouring: NeighbouringRelation = as_relation(neighbouring)
        self.max_grid_size = v.positive_int("max_grid_size", max_grid_size)
        self._composition: dict[Mechanism, int] = {}
        self._discretized: dict[tuple, Discretized] = {}
        self._curves: dict[str, _DirectionCurve] | None = None
        self.horizon = None if horizon is None else v.positive_int("horizon", horizon)
        self._online: OnlinePlan | None = None
        self._online_refused: str | None = None
        self._method = METHOD
        self._levels: dict[str, float] = {}
        #: resolved composition given directly (the two inner accountants of bracketed
        #: compositions); ``None``: resolve ``_composition`` under ``neighbouring``
        self._pairs: dict[Mechanism, int] | None = None
        #: ``(upper, lower)`` inner accountants when some spec's two ends come from
        #: different pairs (fixed-size batches under substitution), else ``None``
        self._ends: tuple["Accountant", "Accountant"] | None = None

    # ---- building the composition ----------------------------------------------------
    def compose(self, mechanism: Mechanism, count: int = 1) -> "Accountant":
        """Add ``count`` runs of ``mechanism``; returns ``self`` so calls chain.

        Calling again later (a training job adding steps) is cheap: discretizations are
        cached and reused as long as the mesh stays on the same rung of its ladder."""
        if not isinstance(mechanism, Mechanism):
            raise ValueError(f"mechanism must be a sampledprv mechanism spec, got {mechanism!r}")
        count = v.positive_int("count", count)
        if mechanism not in self._composition:
            # fail early on unsupported specs and relations
            for r in resolve_bounds(mechanism, self.neighbouring):
                privacy_loss(r, "remove")
        self._composition[mechanism] = self._composition.get(mechanism, 0) + count
        self._curves = None
        self._ends = None
        return self

    @property
    def composition(self) -> tuple[tuple[Mechanism, int], ...]:
        """The composed ``(mechanism, count)`` pairs."""
        return tuple(self._composition.items())

    # ---- numerics -----------------------------------------------------------------------
    @staticmethod
    def _snap(h: float) -> float:
        """Round a mesh down to the ladder 2^(j/4) so that caches survive small changes."""
        return 2.0 ** (math.floor(4.0 * math.log2(h)) / 4.0)

    def _plan(self, composition: dict[Mechanism, int], tau: float = 1e-20,
              directions: tuple[str, ...] = ("remove",)) -> "_Plan":
        r"""The composition tree, the core/tail cuts and the Azuma variance.

        The rounding errors enter one Azuma-Hoeffding bound
        :math:`P(\sum > t) \le \exp(-2t^2/V)` with budget
        :math:`V^* = 2t^2/\log(1/\delta_H)`.  Short compositions spend it on the fine
        mesh alone (``V = K h^2``).  When a self-composition reaches
        ``_MULTI_LEVEL_COUNT``, continuous laws are split into core and tail
        (:meth:`_split_laws`) and the tree of
        :func:`~sampledprv.engine.evolving.plan_levels` (multi-level, randomized
        regridding) shares the budget between its levels."""
        t = self.eps_error
        v_star = 2.0 * t * t / math.log(1.0 / (_HOEFFDING * self.delta_error))
        counts = list(composition.values())
        k_total = sum(counts)
        if max(counts) < _MULTI_LEVEL_COUNT:
            plan = LevelPlan(self._snap(math.sqrt(v_star / k_total)))
            return _Plan(plan, plan.rounding_variance(counts), {}, {})
        cuts, caps, coarse = self._split_laws(composition, tau, directions)
        tree_counts = [c - caps.get(m, (0, 0.0))[0] for m, c in composition.items()]
        extra = sum(j for j, _ in caps.values())
        try:
            width = composed_width(coarse, max(tree_counts))
            plan = plan_levels(tree_counts, v_star, width, snap=self._snap,
                               max_size=self.max_grid_size, extra_top=extra)
        except GridTooLargeError as err:
            raise self._grid_error(err, k_total, self._snap(math.sqrt(v_star / k_total))) \
                from None
        largest = plan_cost(plan, tree_counts, width)[1] if plan.levels else 0
        return _Plan(plan, plan.rounding_variance(tree_counts, extra), cuts, caps, largest)

    def _split_laws(self, composition: dict[Mechanism, int], tau: float,
                    directions: tuple[str, ...]) -> tuple[dict, dict, list]:
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
        """
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
                    coarse.append(discretize(law, step, 0.0, window=window).pmf.trimmed())
                else:
                    lo, hi = law.lower_point(tau), law.upper_point(tau)
                    coarse.append(discretize(law, max(hi - lo, 1e-12) / 2048, tau).pmf.trimmed())
            if split:
                caps[mech] = tail_cap(count, _TAIL_STEPS / count * (1.0 + 1e-9),
                                      _OUTSIDE * self.delta_error / (2.0 * n_split))
        return cuts, caps, coarse

    def _build(self) -> dict[str, _DirectionCurve]:
        """The curves of the current composition, built once and cached until the next
        :meth:`compose`: online spectra when a ``horizon`` was given (and fits), else an
        exact enumeration when every law is atomic and small enough, else the FFT
        composition (:meth:`_build_rebuilt`)."""
        if self._curves is not None:
            return self._curves
        if not self._composition:
            raise ValueError("nothing composed yet: call compose(mechanism, count) first")
        if self.horizon is not None and self._online_refused is None:
            curves = self._build_online()
            if curves is not None:
                return curves
        composition = self._effective_composition()
        exact = self._build_exact(composition)
        if exact is not None:
            return exact
        return self._build_rebuilt(composition)

    def _build_rebuilt(self, composition: dict[Mechanism, int]) -> dict[str, _DirectionCurve]:
        """Plan (:meth:`_plan`), check every grid size before allocating
        (:meth:`_check_grids`), then compose each direction (:meth:`_build_direction`;
        the two directions in parallel threads below ``_PARALLEL_GRID``)."""
        k_total = sum(composition.values())
        tau = _truncation_level(self.delta_error, k_total)
        directions = _directions(composition)
        decided = self._plan(composition, tau, directions)
        plan, variance = decided.tree, decided.variance
        tree_counts = [c - decided.caps.get(m, (0, 0.0))[0] for m, c in composition.items()]
        inner_budget = _SPILL * self.delta_error
        ctx = _BuildContext(
            composition=composition, decided=decided, tau=tau, k_total=k_total,
            hoeffding=math.exp(-2.0 * self.eps_error ** 2 / variance),
            top_factor=int(round(plan.meshes[-1] / plan.h)),
            inner_budget=inner_budget,
            tails=level_tail_masses(plan, tree_counts, inner_budget),
            top_tail=(0.5 if plan.levels else 1.0) * _SPILL * self.delta_error)
        try:
            for direction in directions:
                self._check_grids(ctx, direction)
        except GridTooLargeError as err:
            raise self._grid_error(err, k_total, plan.h) from None

        # the two directions are independent; FFTs and large ufuncs release the GIL, so
        # two threads use two cores -- unless the grids are so long that two at once
        # would double the peak memory (then one after the other: every direction is
        # built either way)
        if len(directions) > 1 and decided.largest < _PARALLEL_GRID:
            with ThreadPoolExecutor(max_workers=len(directions)) as pool:
                built = list(pool.map(lambda d: self._build_direction(ctx, d), directions))
        else:
            built = [self._build_direction(ctx, d) for d in directions]
        curves = dict(zip(directions, built))
        self._curves = curves
        self._method = METHOD_MULTI_LEVEL if plan.levels else METHOD
        self._levels = {"mesh_fine": plan.h, "mesh_coarse": plan.meshes[-1],
                        "rounding_variance": variance, "levels": plan.describe()}
        if decided.caps:
            self._levels["levels"] += "; core/tail split: " + ", ".join(
                f"at most {cap} tail steps of {composition[m]:,} (P(more) <= {b:.1e})"
                for m, (cap, b) in decided.caps.items())
        return curves

    def _check_grids(self, ctx: "_BuildContext", direction: str) -> None:
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

    def _discretized_step(self, ctx: "_BuildContext", mech: Mechanism, direction: str,
                          cut: tuple[float, float] | None):
        """One mechanism's law in ``direction`` on the mesh (split into core and tail at
        ``cut`` when the planner split it), cached across queries and rebuilds."""
        h = ctx.decided.tree.h
        key = (mech, direction, h, ctx.tau, cut, ctx.top_factor if cut else None)
        if key not in self._discretized:
            law = privacy_loss(mech, direction)
            try:
                self._discretized[key] = (
                    split_step(law, h, ctx.tau, ctx.top_factor, *cut) if cut else
                    discretize(law, h, ctx.tau, self.max_grid_size))
            except GridTooLargeError as err:
                raise self._grid_error(err, ctx.k_total, h) from None
        return self._discretized[key]

    def _build_direction(self, ctx: "_BuildContext", direction: str) -> _DirectionCurve:
        """Compose ``direction``: discretize each step, collect its certified terms
        (truncation mass, mass and window errors, relative rounding, shifts; the core/tail
        mixture ``W`` of a split law), compose by FFT (one level or the tree) and wrap the
        curve with its error terms."""
        plan, h, decided = ctx.decided.tree, ctx.decided.tree.h, ctx.decided
        comps, extra, outside, mass_error, tv = [], [], 0.0, 0.0, 0.0
        weighted: list[WeightedError] = []
        scale_up = scale_low = shift = 0.0
        for mech, count in ctx.composition.items():
            cut = decided.cuts.get((mech, direction))
            d = self._discretized_step(ctx, mech, direction, cut)
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
            else:
                comps.append((d.pmf, count))
                outside += count * d.outside_mass
                mass_error += count * d.mass_error
            # the bucket masses' rounding lies on the step's window
            weighted.append(WeightedError.of(count * d.window_error, d.pmf))
            scale_up, scale_low, shift = relative_terms(d, count, scale_up, scale_low,
                                                        shift)
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
            raise self._grid_error(err, ctx.k_total, h) from None
        curve = PrivacyCurve(LatticePoints(composed.offset, composed.h, composed.shift,
                                           composed.probs.size),
                             composed.probs, composed.p_inf,
                             eps_min=-(self.eps_error + shift))
        return _DirectionCurve(_Grid.of(composed), min(1.0, outside), ctx.hoeffding,
                               self.eps_error,
                               curve, composed.numeric_error + mass_error + tv,
                               scale_up, scale_low, shift, tuple(weighted))

    def _build_exact(self, composition: dict[Mechanism, int]) -> dict | None:
        """Curves by exact enumeration (``engine/exact_atoms.py``) when every law is
        atomic and the composition has at most ``MAX_ATOMS`` atoms; ``None`` otherwise.
        The interval is then the exact curve widened by floating-point bounds only (no
        Hoeffding term, no ``eps_error`` slack)."""
        directions = _directions(composition)
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
            curves[d] = _DirectionCurve(_Grid.of(composed), 0.0, 0.0, 0.0, curve,
                                        ex.mass_error,
                                        ex.log_scale_upper, ex.log_scale_lower, ex.shift)
        self._curves = curves
        self._method = METHOD_EXACT
        self._levels = {}
        return curves

    def _grid_error(self, err: GridTooLargeError, k_total: int, h: float) -> AdvisedError:
        return AdvisedError(
            f"eps_error={self.eps_error} for {k_total:,} composed mechanisms needs an "
            f"FFT grid of {err.needed:,} points (mesh h={h:.3g}), above "
            f"max_grid_size={self.max_grid_size:,}",
            [Remedy("eps_error", "set", 1.1 * self.eps_error * err.needed / self.max_grid_size,
                    "Accountant", "the grid shrinks like 1/eps_error"),
             Remedy("max_grid_size", "set", float(err.needed), "Accountant",
                    f"if you have ~{24 * err.needed / 2**30:.1f} GiB of memory")])

    def _build_online(self) -> dict | None:
        """Online spectra (see ``horizon``); ``None`` when the horizon needs a grid above
        the online limit (then every query rebuilds, and :meth:`describe` says why)."""
        composition = self._resolved_composition()
        directions = _directions(composition)
        if self._online is None:
            self._online = OnlinePlan(self.eps_error, self.delta_error, self.horizon,
                                      (_HOEFFDING, _OUTSIDE, _SPILL), self._snap,
                                      self.max_grid_size)
        try:
            self._online.update(composition, directions)
        except Outgrown as err:
            self._online_refused = str(err)
            self._online = None
            warn_online_off(self._online_refused, self.horizon, self.eps_error)
            return None
        curves = self._online.curves(composition)
        self._curves = curves
        self._method = METHOD_ONLINE
        h = self._online.h
        self._levels = {"mesh_fine": h, "mesh_coarse": h,
                        "rounding_variance": sum(composition.values()) * h * h}
        return curves

    def describe(self) -> str:
        """How this accountant computes its intervals, in a few lines: the method, the
        grid, and (with a ``horizon``) every online re-plan or the reason online updates
        are off."""
        lines = [f"Accountant(eps_error={self.eps_error:g}, delta_error={self.delta_error:g}): "
                 f"{sum(self._composition.values()):,} mechanisms, "
                 f"{len(self._composition)} distinct"]
        ends = self._bracket() if self._composition else None
        if ends is not None:
            for name, inner in zip(("upper end (symmetric dominating pair)",
                                    "lower end (attained member pair u = 2C, v = 0)"), ends):
                body = inner.describe().splitlines()[1:]
                lines.append(f"{name}:")
                lines.extend("  " + x for x in body if not x.startswith("online updates"))
            lines.append("online updates: off (fixed-size batches under substitution take "
                         "their two ends from two compositions)")
            return "\n".join(lines)
        if self._composition:
            curves = self._build()
            c = next(iter(curves.values()))
            lines.append(f"method: {self._method}")
            if c.mesh > 0:
                lines.append(f"grid: {max(x.grid_points for x in curves.values()):,} points, "
                             f"mesh {c.mesh:.3g}, directions {', '.join(curves)}")
                lines.append("epsilon shift (value and mean-preserving-shift errors, added "
                             "to eps_error): " + ", ".join(f"{d} {x.shift:.2g}"
                                                          for d, x in curves.items()))
            else:
                lines.append(f"atoms: {max(x.grid_points for x in curves.values()):,} "
                             f"(exact, no mesh), directions {', '.join(curves)}")
            if self._levels.get("levels"):
                lines.append(f"tree: {self._levels['levels']}")
        if self.horizon is None:
            lines.append("online updates: off (no horizon); each query after a change "
                         "rebuilds by FFT")
        elif self._online_refused is not None:
            lines.append(f"online updates: off ({self._online_refused}); each query after "
                         "a change rebuilds by FFT")
        else:
            lines.append(f"online updates: on, horizon {self.horizon:,}"
                         + (f" (now {self._online.horizon:,})" if self._online is not None
                            and self._online.horizon != self.horizon else ""))
            for event in (self._online.events if self._online is not None else []):
                lines.append(f"  - {event}")
        return "\n".join(lines)

    def supports(self, mechanism: object) -> bool:
        """True when :meth:`compose` accepts ``mechanism`` under this relation."""
        if not isinstance(mechanism, Mechanism):
            return False
        try:
            for r in resolve_bounds(mechanism, self.neighbouring):
                privacy_loss(r, "remove")
        except (TypeError, ValueError):
            return False
        return True

    def settings(self) -> dict[str, object]:
        """Type and settings (JSON-ready)."""
        return {"type": "analytic", "eps_error": self.eps_error,
                "delta_error": self.delta_error, "neighbouring": self.neighbouring.value}

    def _resolved_composition(self) -> dict[Mechanism, int]:
        """The composition under the relation: each spec replaced by the spec of its
        worst-case pair for it."""
        if self._pairs is not None:
            return dict(self._pairs)
        resolved: dict[Mechanism, int] = {}
        for m, c in self._composition.items():
            r = resolve_relation(m, self.neighbouring)
            resolved[r] = resolved.get(r, 0) + c
        return resolved

    def _bracket(self) -> tuple["Accountant", "Accountant"] | None:
        """The ``(upper, lower)`` inner accountants when some composed spec takes its two
        ends from different pairs (:func:`~sampledprv.mechanisms.relations.resolve_bounds`: fixed-size
        batches under substitution), else ``None``.  Each composes the resolved pairs of
        its end; the upper one the symmetric dominating pairs, the lower one the attained
        member pairs."""
        if self._pairs is not None:
            return None
        if self._ends is not None:
            return self._ends
        bounds = {m: resolve_bounds(m, self.neighbouring) for m in self._composition}
        if all(u is lo for u, lo in bounds.values()):
            return None
        ends = []
        for i in (0, 1):
            inner = Accountant(self.eps_error, self.delta_error,
                               max_grid_size=self.max_grid_size,
                               merge_gaussians=self.merge_gaussians)
            pairs: dict[Mechanism, int] = {}
            for m, c in self._composition.items():
                r = bounds[m][i]
                pairs[r] = pairs.get(r, 0) + c
            inner._pairs = pairs
            inner._composition = dict(pairs)
            ends.append(inner)
        self._ends = (ends[0], ends[1])
        return self._ends

    def _bracketed(self, query: str, x: float, direction: object) -> Interval | None:
        """The interval of a bracketed composition: upper end from the upper accountant,
        lower end from the lower one, estimate from the upper one (clipped)."""
        ends = self._bracket()
        if ends is None:
            return None
        return fixed_size_bracket(getattr(ends[0], query)(x, direction),
                                  getattr(ends[1], query)(x, direction), DETERMINISTIC, 1.0)

    def _effective_composition(self) -> dict[Mechanism, int]:
        """The resolved composition with Gaussians merged in closed form (if enabled)."""
        resolved = self._resolved_composition()
        if not self.merge_gaussians:
            return resolved
        gaussians = {m: c for m, c in resolved.items() if isinstance(m, Gaussian)}
        if len(gaussians) == 0 or (len(gaussians) == 1 and next(iter(gaussians.values())) == 1):
            return resolved
        out = {m: c for m, c in resolved.items() if not isinstance(m, Gaussian)}
        mu = math.sqrt(sum(c * m.mu ** 2 for m, c in gaussians.items()))
        try:
            merged = Gaussian(sigma=1.0 / mu)
        except ValueError:
            raise ValueError(
                f"the composed Gaussians add up to mu = sqrt(sum count * mu_i^2) = {mu:.4g}, "
                f"a privacy loss centred at mu^2/2 = {0.5 * mu * mu:.4g}, beyond what any "
                "accountant represents; the composition is not private in any useful sense "
                "(delta(epsilon) is about 1 for every epsilon below that): use fewer runs "
                "or more noise") from None
        out[merged] = out.get(merged, 0) + 1
        return out

    # ---- queries -------------------------------------------------------------------------
    def _select(self, direction: object) -> dict[str, _DirectionCurve]:
        """The curves a query uses: both directions (``None``) or one."""
        curves = self._build()
        if direction is None:
            return curves
        d = as_direction(direction).value
        # a symmetric composition has one curve, the same in both directions
        return {d: curves[d] if d in curves else curves[Direction.REMOVE.value]}

    def delta(self, epsilon: float, direction: object = None) -> Interval:
        """Certified interval for :math:`\\delta(\\varepsilon) = \\max` over directions of
        :math:`E[(1 - e^{\\varepsilon - Y})_+]` of the composition.

        ``direction="remove"`` / ``"add"`` (or :class:`~sampledprv.Direction`) answers
        that direction only; the default ``None`` is the maximum over both."""
        eps = v.nonnegative("epsilon", epsilon)
        bracketed = self._bracketed("delta", eps, direction)
        if bracketed is not None:
            return bracketed
        curves = self._select(direction)
        lows, ests, ups, used = [], [], [], []
        for c in curves.values():
            slack = c.t + c.shift
            e_up, e_low = c.error_upper(eps - slack), c.error_lower(eps + slack)
            up = min(1.0, math.exp(c.log_scale_upper) * (c.curve_high(eps - slack) + e_up))
            low = min(max(0.0, math.exp(c.log_scale_lower)
                          * (c.curve_low(eps + slack) - e_low)), up)
            ups.append(up)
            lows.append(low)
            ests.append(min(max(c.curve(eps), low), up))
            used.append((e_up, e_low))
        return Interval(max(lows), max(ests), max(ups), DETERMINISTIC, 1.0, self._method,
                        self._details(curves, used))

    def epsilon(self, delta: float, direction: object = None) -> Interval:
        """Certified interval for :math:`\\varepsilon(\\delta) = \\inf\\{\\varepsilon \\ge 0 :
        \\delta(\\varepsilon) \\le \\delta\\}`.

        ``direction="remove"`` / ``"add"`` (or :class:`~sampledprv.Direction`) answers
        that direction only; the default ``None`` is the maximum over both."""
        delta = v.in_interval("delta", delta, 0.0, 1.0, low_open=True, high_open=True)
        bracketed = self._bracketed("epsilon", delta, direction)
        if bracketed is not None:
            return bracketed
        curves = self._select(direction)
        lows, ests, ups, used = [], [], [], []
        for c in curves.values():
            # the least the error terms can be (the round-off's weights at their floor)
            e_up, numeric = c.error_upper(math.inf), c.numeric_at(math.inf)
            # the curve bound is scale * (lattice curve + e_up): solve for the lattice curve
            d_up = delta * math.exp(-c.log_scale_upper)
            if d_up <= e_up:
                terms = (f"its error terms add up to {e_up:.3g} (Hoeffding {c.hoeffding:.2g}, "
                         f"truncation {c.outside:.2g}, aliasing {c.spill_upper:.2g}, "
                         f"round-off {numeric:.2g})")
                if numeric >= 0.5 * e_up:
                    # delta_error sets the other terms; the floating-point round-off of
                    # the composition (CDF and FFT rounding, growing with the number of
                    # composed mechanisms) is what it is
                    remedies = [Remedy("delta", "raise", float(f"{10 * e_up:.1g}"),
                                       note="the round-off of this composition dominates; "
                                            "a smaller delta_error does not lower it")]
                elif numeric >= 0.1 * d_up:
                    # a smaller delta_error lowers every term but the round-off, which
                    # alone is within 10x of delta: it would not be enough on its own
                    # (and the next query would say so: no advice loop)
                    floor = float(f"{10 * numeric:.1g}")
                    remedies = [Remedy("delta", "raise", float(f"{10 * e_up:.1g}")),
                                Remedy("delta_error", "set", float(f"{floor / 100:.1g}"),
                                       "Accountant",
                                       f"together with delta >= {floor:.1g}: the round-off "
                                       f"{numeric:.2g} does not shrink with delta_error")]
                else:
                    remedies = [Remedy("delta_error", "set", float(f"{delta / 100:.1g}"),
                                       "Accountant", "at most delta/10")]
                raise AdvisedError(
                    f"delta={delta:.3g} is below what this accountant resolves: {terms}",
                    remedies)
            slack = c.t + c.shift
            # the error terms depend on where the curve is read (engine/error_weights.py)
            x_up = c.solve_upper(d_up)
            x_low = c.solve_lower(delta * math.exp(-c.log_scale_lower), slack)
            up = x_up + slack
            low = max(0.0, x_low - slack)
            est = c.inverse(delta)
            ups.append(up)
            lows.append(low)
            ests.append(min(max(est, low), up))
            used.append((c.error_upper(x_up if math.isfinite(x_up) else None),
                         c.error_lower(x_low)))
        return Interval(max(lows), max(ests), max(ups), DETERMINISTIC, 1.0, self._method,
                        self._details(curves, used))

    def _details(self, curves: dict[str, _DirectionCurve],
                 used: list[tuple[float, float]]) -> dict[str, object]:
        """The interval's details; ``used`` are the ``(upper, lower)`` additive error
        terms each direction's ends were computed with (they depend on where the curve
        was read)."""
        any_c = next(iter(curves.values()))
        return {
            **self._levels,
            "mesh": any_c.mesh,
            "grid_points": int(max(c.grid_points for c in curves.values())),
            "directions": tuple(curves),
            "hoeffding": any_c.hoeffding,
            "truncation": {d: c.outside for d, c in curves.items()},
            "spill_upper": {d: c.spill_upper for d, c in curves.items()},
            "spill_lower": {d: c.spill_lower for d, c in curves.items()},
            "numeric_error": {d: c.numeric_error for d, c in curves.items()},
            # epsilon terms added to eps_error on each side: the atoms' value errors and
            # the discretization shifts' mean errors, summed over the composition
            "epsilon_shift": {d: c.shift for d, c in curves.items()},
            "delta_error_upper": max(u for u, _ in used),
            "delta_error_lower": max(lo for _, lo in used),
            "delta_error_upper_unweighted": max(c.error_upper() for c in curves.values()),
            "delta_error_lower_unweighted": max(c.error_lower() for c in curves.values()),
        }

    def __repr__(self) -> str:
        parts = ", ".join(f"{m!r} x{c}" for m, c in self._composition.items())
        rel = "" if self.neighbouring is NeighbouringRelation.ADD_REMOVE else \
            f", neighbouring={self.neighbouring.value!r}"
        return (f"Accountant(eps_error={self.eps_error}, delta_error={self.delta_error}{rel}; "
                f"{parts})")
