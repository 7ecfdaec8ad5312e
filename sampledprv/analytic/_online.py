r"""Online accounting for :class:`sampledprv.Accountant` with a planned horizon.

With ``Accountant(..., horizon=H)`` the mesh ``h`` and the truncation level ``tau`` are
those a rebuild would use for a composition of ``H`` mechanisms, and the FFT length is
sized for the composition seen so far scaled up to ``H`` mechanisms.  Every later
``compose`` multiplies the running spectra in place (:mod:`sampledprv.engine.online`)
and queries are answered by Plancherel sums in ``O(n)``.  The certified terms are those
of a rebuild on the same mesh, with the *current* count ``K`` in Hoeffding's bound
:math:`\exp(-2t^2/(K h^2))`, the current truncation mass :math:`\sum_i c_i\,\text{outside}_i`
and Chernoff aliasing bounds from the accumulated log-MGFs.

Beyond the horizon (more than ``H`` mechanisms) or when the composed law outgrows the
grid, the spectra are rebuilt once for a doubled horizon; every such event is recorded
and reported by :meth:`sampledprv.Accountant.describe`.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from ._direction_curve import DirectionCurve
from ..engine.compose import _chernoff_window
from ..engine.discretize import Discretized, discretize, relative_terms
from ..engine.fft import next_fast_len
from ..engine.online import OnlineComposition, Outgrown
from ..mechanisms import Mechanism
from ..mechanisms.relations import privacy_loss
from ..core.advice import AdvisedWarning, Remedy

#: largest FFT length the online mode plans for (about 40 bytes per point per direction)
MAX_ONLINE_GRID = 2**23


@dataclass
class OnlineDirection(DirectionCurve):
    """One direction's running composition with its certified error terms (the
    interface the accountant's queries use; the bound-corrected curves and inverses are
    :class:`DirectionCurve`'s, shared with rebuilt curves)."""

    state: OnlineComposition
    outside: float
    hoeffding: float
    t: float
    mass_error: float
    #: relative rounding of the point masses and shift of the atom values (the same
    #: terms as the accountant's rebuilt curves: engine.discretize.relative_terms)
    log_scale_upper: float = 0.0
    log_scale_lower: float = 0.0
    shift: float = 0.0

    @property
    def spill_upper(self) -> float:
        return self.state.spill_upper

    @property
    def spill_lower(self) -> float:
        return self.state.spill_lower

    @property
    def numeric_error(self) -> float:
        return self.state.numeric_error + self.mass_error

    @property
    def mesh(self) -> float:
        return self.state.h

    @property
    def grid_points(self) -> int:
        return self.state.n

    def curve(self, eps: float) -> float:
        return self.state.delta(eps)

    def inverse(self, delta: float) -> float:
        return math.inf if delta <= 0 else self.state.epsilon(delta)

    # how DirectionCurve reads the running spectra
    @property
    def _eps_min(self) -> float:
        return self.state.eps_min

    def _lattice_delta(self, eps: float) -> float:
        return self.state._delta(eps, count=False)

    def _rounding(self, eps: float) -> float:
        return self.state.rounding_bound(eps)

    def _top_value(self, floor: float) -> float:
        return self.state.top_value()


class OnlinePlan:
    """Spectra of both directions on a grid planned for ``horizon`` mechanisms.

    Parameters
    ----------
    eps_error, delta_error : float
        The accountant's budgets.
    horizon : int
        Planned number of composed mechanisms.
    shares : tuple of float
        ``(hoeffding, outside, spill)`` shares of ``delta_error`` (as the accountant).
    snap : callable
        The accountant's mesh ladder.
    max_grid_size : int
        The accountant's FFT limit (the online grid also stays below ``2^23``).
    """

    def __init__(self, eps_error: float, delta_error: float, horizon: int,
                 shares: tuple[float, float, float], snap,
                 max_grid_size: int = MAX_ONLINE_GRID) -> None:
        self.t = eps_error
        self.delta_error = delta_error
        self.horizon = int(horizon)
        self.shares = shares
        self.snap = snap
        self.max_grid = min(int(max_grid_size), MAX_ONLINE_GRID)
        self.events: list[str] = []
        self.states: dict[str, OnlineComposition] = {}
        self.applied: dict[Mechanism, int] = {}
        self.h = self.tau = 0.0
        self.n = 0
        self._disc: dict[tuple, Discretized] = {}

    # ---- planning ---------------------------------------------------------------------
    def _discretized(self, mech: Mechanism, direction: str) -> Discretized:
        key = (mech, direction, self.h, self.tau)
        if key not in self._disc:
            self._disc[key] = discretize(privacy_loss(mech, direction), self.h, self.tau)
        return self._disc[key]

    def _plan(self, composition: dict[Mechanism, int], directions: tuple[str, ...],
              grow: float = 1.05) -> None:
        hoeff, outside, spill = self.shares
        v_star = 2.0 * self.t ** 2 / math.log(1.0 / (hoeff * self.delta_error))
        self.h = self.snap(math.sqrt(v_star / self.horizon))
        tau = outside * self.delta_error / (2.0 * self.horizon)
        self.tau = 10.0 ** math.floor(math.log10(tau))
        # discretizations on the current mesh survive a re-plan (a wider grid, or a
        # doubled horizon on the same rung of the ladder); the others are dropped
        self._disc = {k: d for k, d in self._disc.items() if k[2:] == (self.h, self.tau)}
        k_now = sum(composition.values())
        scale = max(1.0, self.horizon / k_now)
        width, sds = 0, []
        for direction in directions:
            comps = [(self._discretized(m, direction).pmf.trimmed(), max(1, round(c * scale)))
                     for m, c in composition.items()]
            lower, upper, _ = _chernoff_window(comps, math.log(spill * self.delta_error))
            longest = max(p.probs.size for p, _ in comps)
            width = max(width, int(math.ceil((upper - lower) / self.h)) + 2, longest)
            sds.append(max(1.0, upper - lower) / 20.0)
        n = next_fast_len(int(grow * width) + 16)
        if n > self.max_grid:
            raise Outgrown(f"a horizon of {self.horizon:,} mechanisms needs {n:,} grid points "
                           f"(online limit {self.max_grid:,})")
        self.n = n
        lam = np.geomspace(1e-3, 1e3, 37) / min(sds)
        self.states = {d: OnlineComposition(self.h, n, lam, spill * self.delta_error,
                                            eps_min=-self.t) for d in directions}
        self.applied = {}
        for d in directions:
            for m, c in composition.items():
                self.states[d].add(m, self._discretized(m, d).pmf, c)
        self.applied = dict(composition)

    # ---- updating ---------------------------------------------------------------------
    def update(self, composition: dict[Mechanism, int], directions: tuple[str, ...]) -> None:
        """Bring the spectra up to ``composition`` (``O(n)`` per new mechanism when it
        extends what was applied; a re-plan otherwise)."""
        k_now = sum(composition.values())
        if not self.states:
            if k_now > self.horizon:
                self.events.append(f"{k_now:,} mechanisms exceed the horizon of "
                                   f"{self.horizon:,} at the first query")
                self.horizon = max(2 * self.horizon, k_now)
            self._plan(composition, directions)
            self.events.append(f"planned at {k_now:,} mechanisms for a horizon of "
                               f"{self.horizon:,} ({self.n:,} points, mesh {self.h:.3g})")
        else:
            extends = all(composition.get(m, 0) >= c for m, c in self.applied.items())
            if k_now > self.horizon or not extends or set(directions) != set(self.states):
                old = self.horizon
                if k_now > self.horizon:
                    self.horizon = max(2 * self.horizon, k_now)
                self._plan(composition, directions)
                if k_now > old:
                    why = f"{k_now:,} mechanisms exceed the horizon of {old:,}"
                elif not extends:
                    why = "the composition changed other than by additions"
                else:
                    why = f"directions now {', '.join(directions)}"
                self.events.append(f"rebuilt at {k_now:,} mechanisms ({why}); new horizon "
                                   f"{self.horizon:,} ({self.n:,} points, mesh {self.h:.3g})")
            else:
                try:
                    for m, c in composition.items():
                        new = c - self.applied.get(m, 0)
                        if new > 0:
                            for d in directions:
                                self.states[d].add(m, self._discretized(m, d).pmf, new)
                    self.applied = dict(composition)
                except Outgrown as err:
                    # a new mechanism wider than the grid (DP-SGD with a smaller sigma
                    # later): re-plan from the current composition, whose widest
                    # component the new grid holds (the states are rebuilt, so a
                    # partial update above is discarded)
                    self._plan(composition, directions)
                    self.events.append(f"rebuilt at {k_now:,} mechanisms ({err}); "
                                       f"{self.n:,} points")
        grow = 1.05
        for _ in range(8):
            try:
                for s in self.states.values():
                    s.check()
                return
            except Outgrown as err:
                # the composition is wider than the one the grid was planned for (for
                # example a later, noisier mechanism): re-plan from the current one
                grow *= 1.5
                self._plan(composition, directions, grow)
                self.events.append(f"rebuilt at {k_now:,} mechanisms ({err}); "
                                   f"{self.n:,} points")
        raise Outgrown("the composition keeps outgrowing its grid")

    def curves(self, composition: dict[Mechanism, int]) -> dict[str, OnlineDirection]:
        """Direction curves with the certified terms of the current composition."""
        k_now = sum(composition.values())
        hoeffding = math.exp(-2.0 * self.t ** 2 / (k_now * self.h ** 2))
        out = {}
        for d, state in self.states.items():
            outside = mass_error = 0.0
            scale_up = scale_low = shift = 0.0
            for m, c in composition.items():
                disc = self._discretized(m, d)
                outside += c * disc.outside_mass
                mass_error += c * disc.mass_error
                scale_up, scale_low, shift = relative_terms(disc, c, scale_up, scale_low,
                                                            shift)
            out[d] = OnlineDirection(state, min(1.0, outside), hoeffding, self.t, mass_error,
                                     scale_up, scale_low, shift)
        return out


def warn_online_off(reason: str, horizon: int, eps_error: float) -> None:
    """Warn (once per accountant: the caller switches the online mode off for good) that
    every query will now rebuild by FFT, with the reason and what restores the online
    mode: a larger ``eps_error`` (a coarser mesh, hence a shorter grid) or a smaller
    ``horizon``."""
    warnings.warn(AdvisedWarning(
        f"online updates are off for this accountant ({reason}): each query after a "
        "change now rebuilds the composition by FFT, which is much slower per step. The "
        f"online grid holds at most min(max_grid_size, {MAX_ONLINE_GRID:,}) points; a "
        "coarser mesh or a shorter horizon needs fewer",
        [Remedy("eps_error", "set", float(f"{2 * eps_error:.2g}"), "Accountant",
                "the grid shrinks like 1/eps_error"),
         Remedy("horizon", "lower", note=f"now {horizon:,}; it is doubled automatically "
                "when the composition exceeds it")]), stacklevel=5)
