"""The additive error terms of a direction's curve and the searches that invert it.

Shared by the accountant's rebuilt curves and the online directions: both provide
``hoeffding``, ``outside``, ``spill_upper``, ``spill_lower``, ``numeric_error``,
``mesh``, ``curve_high`` / ``curve_low`` (the computed lattice curve with its
floating-point bound) and ``inverse_high`` / ``inverse_low``.  Curves whose numeric
error has parts on inner pieces' windows list them in ``weighted``; those parts are
re-weighted by where the curve is read (:mod:`sampledprv.engine.error_weights`), so the
error terms are functions of the lattice argument ``x`` and the ends of an interval are
found by bisection."""

from __future__ import annotations

import math
from typing import Callable

from ..engine.error_weights import WeightedError, weighted_total

#: relative accuracy of the ends found by bisection where the error terms depend on the
#: point (the returned end is always on the safe side; 1e-10 of epsilon is far below any
#: eps_error)
_SOLVE_TOL = 1e-10


def _bisect(good: float, bad: float, ok: Callable[[float], bool]) -> float:
    """Bisection between a point ``good`` where ``ok`` holds and ``bad`` where it does
    not (either order), to ``_SOLVE_TOL`` relative; returns a point where it holds."""
    while abs(good - bad) > _SOLVE_TOL * max(1.0, abs(good)):
        mid = 0.5 * (good + bad)
        if mid == good or mid == bad:
            break
        if ok(mid):
            good = mid
        else:
            bad = mid
    return good


class CurveErrorTerms:
    """Mixin: error terms at a point and the inversions that use them."""

    #: parts of ``numeric_error`` on inner pieces' windows (none: constant terms)
    weighted: tuple[WeightedError, ...] = ()

    def numeric_at(self, x: float | None = None) -> float:
        """The numeric error of the lattice curve at ``x`` (``None``: the unweighted
        bound, valid everywhere; ``inf``: its floor, where every inner piece has its
        smallest weight)."""
        if x is None or not self.weighted or self.mesh <= 0:
            return self.numeric_error
        return weighted_total(self.weighted, self.numeric_error,
                              self.numeric_error + self.spill_upper + self.spill_lower,
                              self.mesh, self.curve_high, x)

    def error_upper(self, x: float | None = None) -> float:
        """All additive terms of the upper curve at lattice argument ``x``."""
        return self.hoeffding + self.outside + self.spill_upper + self.numeric_at(x)

    def error_lower(self, x: float | None = None) -> float:
        """All additive terms of the lower curve at lattice argument ``x``."""
        return self.hoeffding + self.spill_upper + self.spill_lower + self.numeric_at(x)

    def solve_upper(self, target: float) -> float:
        """The smallest ``x`` (to bisection accuracy, on the safe side) with
        ``curve_high(x) + error_upper(x) <= target``: both terms are non-increasing."""
        def ok(x: float) -> bool:
            return self.curve_high(x) + self.error_upper(x) <= target
        const = self.error_upper()
        if not self.weighted:
            return self.inverse_high(target - const) if target > const else math.inf
        floor = self.error_upper(math.inf)
        if target <= floor:
            return math.inf
        lo = self.inverse_high(target - floor)        # no smaller x can do
        if not math.isfinite(lo) or ok(lo):
            return lo
        # the terms do not grow to the right of lo: the inverse at the target less the
        # terms at lo satisfies the condition, and the terms hardly change in between
        # (so this is the smallest x up to a negligible amount); bisect if it failed
        e_lo = self.error_upper(lo)
        if target > e_lo:
            x1 = self.inverse_high(target - e_lo)
            if math.isfinite(x1) and ok(x1):
                return x1
        hi = self.inverse_high(target - const) if target > const else math.inf
        if not math.isfinite(hi):
            step = max(self.mesh, 1e-12)
            hi = lo + step
            while not ok(hi):
                if step > 1e6:
                    return math.inf
                step *= 2.0
                hi = lo + step
        return _bisect(hi, lo, ok)

    def solve_lower(self, target: float, floor: float) -> float:
        """A large ``x >= floor`` with ``curve_low(x) - error_lower(x) >= target`` (any
        such ``x`` gives a valid lower end; ``floor`` where none is found)."""
        def ok(x: float) -> bool:
            return self.curve_low(x) - self.error_lower(x) >= target
        lo = self.inverse_low(target + self.error_lower(), floor)    # satisfies (or floor)
        if not self.weighted:
            return lo
        hi = self.inverse_low(target + self.error_lower(math.inf), floor)
        if hi <= lo:
            return lo
        if ok(hi):
            return hi
        # fixed point x = inverse_low(target + error_lower(x)) from hi: the terms hardly
        # change near the answer, so a step or two lands on a valid point
        x = hi
        for _ in range(3):
            x = self.inverse_low(target + self.error_lower(x), floor)
            if x <= lo:
                return lo
            if ok(x):
                return x
        return _bisect(lo, hi, ok)


__all__ = ["CurveErrorTerms"]
