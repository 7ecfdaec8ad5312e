r"""The analytic accountant's answers: intervals for delta(epsilon) and epsilon(delta).

Pure functions of the built curves (:class:`~sampledprv.analytic.build.GridCurve`, one
per direction): :func:`delta_interval` and :func:`epsilon_interval` read each curve's
certified bounds (module docstring of :mod:`sampledprv.analytic.accountant`) and take
the maximum over directions; :func:`details` lists the error terms every interval
reports.  :class:`~sampledprv.Accountant` calls them with its curves, method and levels.
"""

from __future__ import annotations

import math

from ..core.advice import AdvisedError, Remedy
from ..core.interval import DETERMINISTIC, Interval

__all__ = ["delta_interval", "epsilon_interval", "details", "delta_part", "epsilon_part",
           "combine", "dominated"]

#: one direction's answer: ``(lower, estimate, upper, (upper error terms, lower ones))``
Part = tuple[float, float, float, tuple[float, float]]


def delta_part(c, eps: float) -> Part:
    r"""One curve's bounds on :math:`\delta(\varepsilon)` (:func:`delta_interval`)."""
    slack = c.t + c.shift
    e_up, e_low = c.error_upper(eps - slack), c.error_lower(eps + slack)
    up = min(1.0, math.exp(c.log_scale_upper) * (c.curve_high(eps - slack) + e_up))
    low = min(max(0.0, math.exp(c.log_scale_lower)
                  * (c.curve_low(eps + slack) - e_low)), up)
    return low, min(max(c.curve(eps), low), up), up, (e_up, e_low)


def combine(curves: dict, parts: dict, method: str, levels: dict) -> Interval:
    """The interval of the maximum over directions from each direction's :data:`Part`
    (``parts`` keyed like ``curves``)."""
    ps = [parts[d] for d in curves]
    return Interval(max(p[0] for p in ps), max(p[1] for p in ps), max(p[2] for p in ps),
                    DETERMINISTIC, 1.0, method, details(curves, [p[3] for p in ps], levels))


def dominated(parts: dict, direction: str) -> bool:
    """True when ``direction``'s upper end is at most another direction's lower end: then
    its lower end, estimate and upper end are all below that direction's lower end, and
    the maximum over directions (:func:`combine`) does not depend on them."""
    others = [p[0] for d, p in parts.items() if d != direction]
    return bool(others) and parts[direction][2] <= max(others)


def delta_interval(curves: dict, eps: float, method: str, levels: dict) -> Interval:
    r"""Certified interval for :math:`\delta(\varepsilon)`: the maximum over the
    ``curves`` (one per direction) of the bounds in the module docstring of
    :mod:`sampledprv.analytic.accountant` (the lattice curve read ``t + shift`` to the
    left for the upper end and to the right for the lower end, plus or minus its error
    terms, scaled by the relative rounding factors)."""
    return combine(curves, {d: delta_part(c, eps) for d, c in curves.items()}, method,
                   levels)


def epsilon_interval(curves: dict, delta: float, method: str, levels: dict) -> Interval:
    r"""Certified interval for :math:`\varepsilon(\delta)`: the curve bounds of
    :func:`delta_interval` inverted exactly, the maximum over the ``curves``.  A
    ``delta`` at or below the error terms is refused with the remedy that helps
    (raise ``delta``, or lower ``delta_error`` unless the round-off dominates)."""
    return combine(curves, {d: epsilon_part(c, delta) for d, c in curves.items()}, method,
                   levels)


def epsilon_part(c, delta: float) -> Part:
    r"""One curve's bounds on :math:`\varepsilon(\delta)` (:func:`epsilon_interval`);
    raises :class:`~sampledprv.core.advice.AdvisedError` where ``delta`` is at or below
    its error terms."""
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
    return low, min(max(est, low), up), up, \
        (c.error_upper(x_up if math.isfinite(x_up) else None), c.error_lower(x_low))


def details(curves: dict, used: list[tuple[float, float]], levels: dict) -> dict[str, object]:
    """The interval's details; ``used`` are the ``(upper, lower)`` additive error
    terms each direction's ends were computed with (they depend on where the curve
    was read)."""
    any_c = next(iter(curves.values()))
    return {
        **levels,
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
