r"""One direction's composed curve with its certified error terms: the part shared by the
rebuilt curves (:class:`sampledprv.analytic.accountant.Accountant`) and the online ones
(:mod:`sampledprv.analytic._online`).

A subclass says how to read its lattice curve (:meth:`_lattice_delta`, :meth:`_rounding`,
:attr:`_eps_min`, :meth:`_top_value`, :meth:`curve`, :meth:`inverse`); the bound-corrected
curves and their inverses are written here once:

* ``curve_high(eps)`` / ``curve_low(eps)``: the computed curve plus / minus its
  floating-point error, so that the exact curve of the composed lattice law lies between
  them.  Below ``eps_min`` the upper curve uses ``delta(x) <= delta(y) + (y - x)`` for
  ``x < y`` (a sub-probability curve has slope at least -1);
* ``inverse_high(delta)``: a point ``x`` with ``curve_high(x) <= delta``, at or just above
  the computed inverse (steps from ``2^-44`` relative, doubling, 64 at most);
* ``inverse_low(delta, floor)``: a point ``x`` with ``curve_low(x) >= delta``, at or just
  below the computed inverse, or ``floor`` once ``x`` reaches it.
"""

from __future__ import annotations

import math

from ._error_terms import CurveErrorTerms

__all__ = ["DirectionCurve"]


class DirectionCurve(CurveErrorTerms):
    """Bound-corrected curve and inverses of one direction (see the module docstring)."""

    # ---- what a subclass provides ---------------------------------------------------------
    @property
    def _eps_min(self) -> float:
        """Smallest ``eps`` the lattice curve answers."""
        raise NotImplementedError

    def _lattice_delta(self, eps: float) -> float:
        """The computed curve at ``eps >= _eps_min`` (not counted as a user query)."""
        raise NotImplementedError

    def _rounding(self, eps: float) -> float:
        """Bound on the floating-point error of :meth:`_lattice_delta` at ``eps``."""
        raise NotImplementedError

    def _top_value(self, floor: float) -> float:
        """The largest lattice point (``floor`` when the curve has none)."""
        raise NotImplementedError

    def curve(self, eps: float) -> float:
        raise NotImplementedError

    def inverse(self, delta: float) -> float:
        raise NotImplementedError

    # ---- shared ---------------------------------------------------------------------------
    def curve_high(self, eps: float) -> float:
        """Upper bound on the exact curve of the composed lattice law at ``eps``."""
        lo = self._eps_min
        if eps < lo:
            return self.curve_high(lo) + (lo - eps)
        return self._lattice_delta(eps) + self._rounding(eps)

    def curve_low(self, eps: float) -> float:
        """Lower bound on the exact curve of the composed lattice law at ``eps``."""
        return self._lattice_delta(eps) - self._rounding(eps)

    def inverse_high(self, delta: float) -> float:
        """A point ``x`` with ``curve_high(x) <= delta`` (so the exact lattice curve is
        at most ``delta`` there), at or just above the computed inverse."""
        x = self.inverse(delta)
        step = 2.0 ** -44 * max(1.0, abs(x)) if math.isfinite(x) else 0.0
        for _ in range(64):
            if not math.isfinite(x) or self.curve_high(x) <= delta:
                return x
            x += step
            step *= 2.0
        return math.inf

    def inverse_low(self, delta: float, floor: float) -> float:
        """A point ``x`` with ``curve_low(x) >= delta`` at or just below the computed
        inverse; ``floor`` is returned once ``x`` reaches it (a lower bound at or below
        ``floor`` is not needed)."""
        x = self.inverse(delta)
        if not math.isfinite(x):
            x = self._top_value(floor)
        step = 2.0 ** -44 * max(1.0, abs(x))
        for _ in range(64):
            if x <= floor or self.curve_low(x) >= delta:
                return max(x, floor)
            x -= step
            step *= 2.0
        return floor
