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

from ..core import validation as v
from ..core.advice import AdvisedError
from ..core.concurrency import guarded
from ..core.contract import PrivacyAccountant
from ..core.interval import DETERMINISTIC, Interval, fixed_size_bracket
from ..engine import workers
from ..engine.online import Outgrown
from ..mechanisms import Gaussian, Mechanism
from ..mechanisms.base import Direction, NeighbouringRelation, as_direction, as_relation
from ..mechanisms.relations import privacy_loss, resolve_bounds, resolve_relation
from ._online import OnlinePlan, warn_online_off
from .answers import (combine, delta_interval, delta_part, dominated, epsilon_interval,
                      epsilon_part)
from .build import (METHOD, METHOD_ONLINE, SHARES, CurveBuilder, GridCurve, directions_of,
                    snap, _MULTI_LEVEL_COUNT)

#: the screening curves of a long composition are built at ``_SCREEN_FACTOR`` times
#: ``eps_error`` (at most 1): a direction whose screened upper end is below another
#: direction's lower end does not move the maximum over directions and is not refined
_SCREEN_FACTOR = 30.0
#: ... for compositions of at least this many steps of one mechanism: below it the two
#: directions' full builds side by side are as fast on two cores (DP-SGD at k = 1e6:
#: 0.50 s whole process against 0.59 s screened; at 1e7 1.15 s against 1.0 s, at 1e8
#: 3.8-4.3 s against 2.9-3.2 s)
_SCREEN_COUNT = 2**21

__all__ = ["Accountant"]

# the curves are rebuilt after unpickling or copying (core/concurrency.py)
@guarded("compose", "composition", "_build", "delta", "epsilon", "describe", "__repr__",
         transient=("_curves", "_fine", "_screen"))
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
        #: plans, discretizes (caching the steps) and composes (analytic/build.py)
        self._builder = CurveBuilder(self.eps_error, self.delta_error, self.max_grid_size)
        self._curves: dict[str, GridCurve] | None = None
        #: full-accuracy curves of some directions (built one direction at a time where a
        #: query needs no more) and the screening curves of the others
        self._fine: dict[str, GridCurve] | None = None
        self._screen: dict[str, GridCurve] | None = None
        self._screen_builder = CurveBuilder(min(1.0, _SCREEN_FACTOR * self.eps_error),
                                            self.delta_error, self.max_grid_size)
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
        self._fine = None
        self._screen = None
        self._ends = None
        return self

    @property
    def composition(self) -> tuple[tuple[Mechanism, int], ...]:
        """The composed ``(mechanism, count)`` pairs."""
        return tuple(self._composition.items())

    def _build(self) -> dict[str, GridCurve]:
        """The curves of the current composition, built once and cached until the next
        :meth:`compose`: online spectra when a ``horizon`` was given (and fits), else an
        exact enumeration when every law is atomic and small enough, else the FFT
        composition (:class:`~sampledprv.analytic.build.CurveBuilder`)."""
        if self._curves is not None:
            return self._curves
        if not self._composition:
            raise ValueError("nothing composed yet: call compose(mechanism, count) first")
        if self.horizon is not None and self._online_refused is None:
            curves = self._build_online()
            if curves is not None:
                return curves
        composition = self._effective_composition()
        if self._exact(composition):
            return self._curves
        return self._fine_curves(directions_of(composition))

    def _exact(self, composition: dict[Mechanism, int]) -> bool:
        """Take the exact enumeration's curves where every law is atomic and small enough
        (:meth:`~sampledprv.analytic.build.CurveBuilder.exact`); True when it did."""
        exact = self._builder.exact(composition)
        if exact is None:
            return False
        self._curves, self._method, self._levels = exact.curves, exact.method, exact.levels
        return True

    def _fine_curves(self, directions,
                     share: workers.CoreShare | None = None) -> dict[str, GridCurve]:
        """Full-accuracy FFT curves of ``directions``, building those not built yet (on
        the plan of the whole composition: the same curves as one build of all); once
        every direction is built they are :attr:`_curves`.  ``share``: the cores are
        shared with another build at work."""
        composition = self._effective_composition()
        every = directions_of(composition)
        have = dict(self._fine or {})
        missing = tuple(d for d in every if d in directions and d not in have)
        if missing:
            built = self._builder.rebuilt(composition,
                                          only=None if missing == every else missing,
                                          share=share)
            have.update(built.curves)
            self._method, self._levels = built.method, built.levels
        self._fine = have
        if all(d in have for d in every):
            self._curves = {d: have[d] for d in every}
        return {d: have[d] for d in every if d in directions}

    def _screens(self) -> bool:
        """True when queries over both directions start from screening curves: a long
        FFT composition (at least ``_SCREEN_COUNT`` steps of one mechanism) with two
        directions, no online spectra and no exact enumeration."""
        if self._curves is not None or (self.horizon is not None
                                        and self._online_refused is None):
            return False
        composition = self._effective_composition()
        if len(directions_of(composition)) < 2 or \
                max(composition.values()) < max(_MULTI_LEVEL_COUNT, _SCREEN_COUNT):
            return False
        return not (self._screen is None and self._fine is None
                    and self._exact(composition))

    def _screened(self, part, x: float) -> Interval:
        r"""The interval of a query over both directions, refining only the directions
        that can move it.

        The first query builds the first direction (``remove``, the dominant one of the
        subsampled mechanisms: a guess, which only decides what is built first) at full
        accuracy and the other's screening curve (``_SCREEN_FACTOR`` times ``eps_error``:
        a few percent of a full build) side by side, sharing the cores
        (:class:`~sampledprv.engine.workers.CoreShare`: the full build takes both once the
        screening one is done).  Each query reads every
        direction's bounds (``part``: :func:`~sampledprv.analytic.answers.epsilon_part`
        or :func:`~sampledprv.analytic.answers.delta_part`) from its full-accuracy curve
        where built, else from its screening curve.  A screened direction whose upper end
        is at most another direction's lower end cannot change the maximum over
        directions (:func:`~sampledprv.analytic.answers.dominated`) and stays screened;
        every other screened direction (and one whose screening curve cannot resolve the
        query) is built at full accuracy, and the query is read again.  Both readings
        are certified, so the interval is certified either way; where a direction was
        screened the interval is the other direction's (in practice the full build's,
        but for the ``delta_error_*`` details: design notes), and
        ``details["screened"]`` names it."""
        composition = self._effective_composition()
        every = directions_of(composition)
        if self._screen is None:
            self._screen = {}
            if not self._fine:
                first, rest = every[0], every[1:]
                share = workers.CoreShare(workers.available_cores())
                with ThreadPoolExecutor(max_workers=2) as pool:
                    full = pool.submit(self._fine_curves, (first,), share)
                    screen = pool.submit(self._screen_builder.rebuilt, composition, rest,
                                         share)
                    full.result()
                    self._screen.update(screen.result().curves)
        while True:
            fine = self._fine or {}
            missing = tuple(d for d in every if d not in fine and d not in self._screen)
            if missing:
                self._screen.update(self._screen_builder.rebuilt(composition, missing).curves)
            curves = {d: fine.get(d, self._screen.get(d)) for d in every}
            parts, refine = {}, []
            for d, c in curves.items():
                try:
                    parts[d] = part(c, x)
                except AdvisedError:
                    if d in fine:
                        raise
                    refine.append(d)
            if not refine:
                refine = [d for d in every if d not in fine and not dominated(parts, d)]
            if not refine:
                iv = combine(curves, parts, self._method, self._levels)
                iv.details["screened"] = {d: self._screen_builder.eps_error
                                          for d in every if d not in fine}
                return iv
            self._fine_curves(tuple(refine))

    def _build_online(self) -> dict | None:
        """Online spectra (see ``horizon``); ``None`` when the horizon needs a grid above
        the online limit (then every query rebuilds, and :meth:`describe` says why)."""
        composition = self._resolved_composition()
        directions = directions_of(composition)
        if self._online is None:
            self._online = OnlinePlan(self.eps_error, self.delta_error, self.horizon,
                                      SHARES, snap, self.max_grid_size)
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
    def _select(self, direction: object) -> dict[str, GridCurve]:
        """The curves a query uses: both directions (``None``) or one (a long FFT
        composition builds only that one)."""
        if direction is not None and self._screens():
            d = as_direction(direction).value
            return self._fine_curves((d,))
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
        if direction is None and self._screens():
            return self._screened(delta_part, eps)
        return delta_interval(self._select(direction), eps, self._method, self._levels)

    def epsilon(self, delta: float, direction: object = None) -> Interval:
        """Certified interval for :math:`\\varepsilon(\\delta) = \\inf\\{\\varepsilon \\ge 0 :
        \\delta(\\varepsilon) \\le \\delta\\}`.

        ``direction="remove"`` / ``"add"`` (or :class:`~sampledprv.Direction`) answers
        that direction only; the default ``None`` is the maximum over both.  In a
        composition of at least ``2^21`` steps a direction that cannot move the maximum
        is read from a coarser certified curve and named in ``details["screened"]``
        (the interval is then the other direction's, in practice the full build's; design
        notes, "Screening the dominated direction")."""
        delta = v.in_interval("delta", delta, 0.0, 1.0, low_open=True, high_open=True)
        bracketed = self._bracketed("epsilon", delta, direction)
        if bracketed is not None:
            return bracketed
        if direction is None and self._screens():
            return self._screened(epsilon_part, delta)
        return epsilon_interval(self._select(direction), delta, self._method,
                                self._levels)

    def __repr__(self) -> str:
        parts = ", ".join(f"{m!r} x{c}" for m, c in self._composition.items())
        rel = "" if self.neighbouring is NeighbouringRelation.ADD_REMOVE else \
            f", neighbouring={self.neighbouring.value!r}"
        return (f"Accountant(eps_error={self.eps_error}, delta_error={self.delta_error}{rel}; "
                f"{parts})")
