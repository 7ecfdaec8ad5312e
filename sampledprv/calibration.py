r"""Calibrate a mechanism parameter to a target ``(epsilon, delta)``.

:func:`calibrate` finds the smallest ``x`` (a parameter whose growth improves privacy, such
as a noise scale) for which ``make_mechanism(x)`` composed ``count`` times is
``(epsilon, delta)``-DP *as certified by the accountant's upper bound*:

1. **Bracket** in :math:`u = \log x`: start from ``bracket`` (or ``x = 1``) and expand
   geometrically (factor 4) until the estimate :math:`\hat\varepsilon(x)` straddles the
   target.
2. **Brent's method** (:func:`scipy.optimize.brentq`) on
   :math:`u \mapsto \hat\varepsilon(e^u) - \varepsilon_{target}`.
3. **Certify**: if the upper bound :math:`\bar\varepsilon(x)` exceeds the target, step ``x``
   up by the factor :math:`(\bar\varepsilon/\varepsilon_{target})^{1/\kappa}` (``kappa`` the
   local elasticity :math:`-d\log\hat\varepsilon/d\log x` from the Brent iterates) until
   it does not, then run Brent on :math:`\bar\varepsilon - \varepsilon_{target}` between
   the last failing and the first passing ``x``, and return the smallest ``x`` seen whose
   certified upper bound meets the target.

The three stages are the functions ``_bracket``, ``_solve_estimate`` and ``_certify`` of
this module, sharing one memo of evaluations.  A target that cannot be certified raises
:class:`~sampledprv.core.advice.AdvisedError` saying why: the estimate itself never reaches it
(raise epsilon or delta, fewer compositions), or the estimate does but the accountant's
resolution keeps the upper bound above it (``eps_error`` / ``n_samples``).

Every evaluation uses a fresh accountant, so the answer never depends on the search
order.  The accountant is anything with the ``compose(spec, count=...)`` /
``epsilon(delta=...) -> Interval`` contract: :class:`sampledprv.Accountant` (default,
deterministic) or :class:`sampledprv.SampledAccountant` (its upper bounds hold with the
stated probability; give the factory a fixed seed to make the search deterministic).
"""

from __future__ import annotations

import copy
import math
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Optional, Tuple

from .core import validation as v
from .core.advice import AdvisedError, Remedy
from .core.interval import Interval
from .mechanisms import GeneralizedGaussian, Mechanism, PoissonSubsampled
from .analytic import accountant as _acc_module
from .core.contract import PrivacyAccountant
from .mechanisms.generalized_gaussian import check_beta

__all__ = ["Calibration", "calibrate", "calibrate_generalized_gaussian"]

_X_MIN, _X_MAX = 1e-6, 1e8


@dataclass(frozen=True)
class Calibration:
    """Result of :func:`calibrate`.

    Attributes
    ----------
    x : float
        The calibrated parameter (``float(result)`` gives it too).
    interval : Interval
        The certified epsilon interval of ``make_mechanism(x)`` composed ``count`` times at
        ``delta``; ``interval.upper <= target_epsilon``.
    evaluations : int
        Number of accountant evaluations (each composes from scratch).
    mechanism : object
        ``make_mechanism(x)`` (a spec, or whatever the accountant composes).
    target_epsilon, delta : float
    count : int
    """

    x: float
    interval: Interval
    evaluations: int
    mechanism: Any
    target_epsilon: float
    delta: float
    count: int
    trace: Tuple[Tuple[float, float, float], ...] = field(default=(), repr=False, compare=False)

    def __float__(self) -> float:
        return self.x

    @property
    def slack(self) -> float:
        """Relative gap ``(target - upper) / target`` (>= 0; small means tight)."""
        return (self.target_epsilon - self.interval.upper) / self.target_epsilon


def _accountant_factory(accountant: Any) -> Callable[[], Any]:
    """Turn ``accountant=`` into a zero-argument factory of fresh accountants."""
    if accountant is None:
        return _acc_module.Accountant
    if isinstance(accountant, type):
        return accountant
    if isinstance(accountant, PrivacyAccountant):
        template = accountant  # an instance: deep-copied, so what it holds counts too
        return lambda: copy.deepcopy(template)
    if callable(accountant):
        return accountant
    raise ValueError("accountant must be None, an accountant class or zero-argument factory "
                     "(e.g. lambda: sp.Accountant(eps_error=0.005)), or an accountant instance "
                     f"(used as a template); got {accountant!r}")


def calibrate(make_mechanism: Callable[[float], Mechanism], *, count: int, epsilon: float,
              delta: float, accountant: Any = None,
              bracket: Optional[Tuple[float, float]] = None, rtol: float = 1e-3,
              max_evaluations: int = 80, progress: Optional[bool] = None) -> Calibration:
    r"""Smallest ``x`` with certified ``epsilon(delta) <= epsilon`` for ``count`` compositions.

    Parameters
    ----------
    make_mechanism : callable ``x -> mechanism``
        A spec (or anything the accountant's ``compose`` takes, e.g. a
        ``LogDensityPair`` for the sampled accountant).  Privacy must improve as ``x``
        grows, e.g.
        ``lambda s: sp.PoissonSubsampled(sp.GeneralizedGaussian(1.5, s), q=0.01)``.
        Invalid parameters raise :class:`ValueError` from the spec itself.
    count : int
        Number of compositions (>= 1).
    epsilon, delta : float
        The target: ``epsilon > 0``, ``0 < delta < 1``.
    accountant : None, class, factory or instance
        ``None``: :class:`sampledprv.Accountant` with its defaults.  A class or a
        zero-argument callable is called once per evaluation (e.g.
        ``lambda: sp.SampledAccountant(seed=0)``).  An instance is deep-copied per
        evaluation, so mechanisms it already composed count against the budget
        (calibrate the rest of a budget).
    bracket : (float, float), optional
        Initial search interval ``0 < lo < hi``; it is widened geometrically if it does
        not straddle the target (within ``[1e-6, 1e8]`` beyond the bracket).
    rtol : float
        Relative tolerance on ``x`` for the Brent steps.
    max_evaluations : int
        Budget of accountant evaluations.
    progress : bool or None
        A tqdm bar on ``stderr`` counting the evaluations (stage, ``x`` and the interval
        so far).  ``True``/``False`` force it on/off; ``None`` (default) shows it on a
        terminal once the search has run for more than about 2 s.

    Returns
    -------
    Calibration
        ``result.x`` and the certified ``result.interval`` (``upper <= epsilon``).

    Raises
    ------
    ValueError
        Bad arguments, or a target that cannot be certified.  The latter are
        :class:`~sampledprv.core.advice.AdvisedError`: the message says what limits the search
        (the target itself, or the accountant's accuracy: ``eps_error`` of the analytic
        accountant, ``n_samples`` of the sampled one) and which setting to change.
    """
    count = v.positive_int("count", count)
    target = v.positive("epsilon", epsilon)
    delta = v.in_interval("delta", delta, 0.0, 1.0, low_open=True, high_open=True,
                          hint="delta is the failure probability of (epsilon, delta)-DP")
    rtol = v.in_interval("rtol", rtol, 0.0, 0.1, low_open=True, high_open=False)
    max_evaluations = v.positive_int("max_evaluations", max_evaluations)
    if progress is not None and not isinstance(progress, bool):
        raise ValueError(f"progress must be True, False or None, got {progress!r}")
    if not callable(make_mechanism):
        raise ValueError("make_mechanism must be a callable x -> mechanism spec, e.g. "
                         "lambda s: sp.GeneralizedGaussian(beta=1.5, scale=s)")
    if bracket is None:
        lo = hi = 1.0
    else:
        lo, hi = (v.positive("bracket[0]", bracket[0]), v.positive("bracket[1]", bracket[1]))
        if not lo < hi:
            raise ValueError(f"bracket must be (lo, hi) with lo < hi, got {bracket!r}")
    ev = _Evaluations(make_mechanism, _accountant_factory(accountant), count, target, delta,
                      max_evaluations, min(_X_MIN, lo), max(_X_MAX, hi))
    ev.bar = _SearchProgress(progress, max_evaluations)
    try:
        ev.bar.stage = "bracket"
        lo, hi = _bracket(ev, lo, hi)                   # 1. bracket the estimate
        ev.bar.stage = "solve"
        x = _solve_estimate(ev, lo, hi, rtol)           # 2. Brent on the estimate
        ev.bar.stage = "certify"
        x = _certify(ev, x, rtol)                       # 3. certify the upper bound
    finally:
        ev.bar.close()
    return Calibration(x=x, interval=ev.cache[x], evaluations=len(ev.cache),
                       mechanism=make_mechanism(x), target_epsilon=target, delta=delta,
                       count=count,
                       trace=tuple((k, iv.estimate, iv.upper) for k, iv in ev.cache.items()))


class _SearchProgress:
    """tqdm bar over the accountant evaluations of a search (lazy: opened once the search
    has run :data:`_AUTO_PROGRESS_S` seconds in automatic mode, on a terminal only)."""

    def __init__(self, mode: Optional[bool], total: int) -> None:
        self.mode, self.total, self.stage = mode, total, ""
        self.t0 = time.perf_counter()
        self.bar: Any = None
        self.count = 0
        if mode is None:
            try:
                tty = bool(sys.stderr.isatty())
            except (AttributeError, ValueError):
                tty = False
            self.mode = None if tty else False
        if self.mode is not False:
            try:
                from tqdm.auto import tqdm  # noqa: PLC0415 - optional at import time
            except ImportError:
                if self.mode:
                    raise ImportError("progress=True needs the tqdm package: pip install "
                                      "tqdm (or progress=False)") from None
                self.mode = False
                return
            self._tqdm = tqdm

    def step(self, x: float, iv: Interval) -> None:
        self.count += 1
        if self.mode is False:
            return
        if self.bar is None and (self.mode or time.perf_counter() - self.t0 > _AUTO_PROGRESS_S):
            self.bar = self._tqdm(total=self.total, desc="calibrate", unit="evaluation",
                                  initial=self.count - 1, file=sys.stderr)
        if self.bar is not None:
            self.bar.set_postfix_str(f"{self.stage}: x={x:.6g}, epsilon in "
                                     f"[{iv.lower:.4g}, {iv.upper:.4g}]", refresh=False)
            self.bar.update(1)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


_AUTO_PROGRESS_S = 2.0


class _Evaluations:
    """Memoized accountant evaluations ``x -> epsilon(delta)`` interval of the composition."""

    bar: Optional[_SearchProgress] = None

    def __init__(self, make_mechanism: Callable[[float], Any], factory: Callable[[], Any],
                 count: int, target: float, delta: float, max_evaluations: int,
                 x_min: float, x_max: float) -> None:
        self.make_mechanism, self.factory = make_mechanism, factory
        self.count, self.target, self.delta = count, target, delta
        self.max_evaluations, self.x_min, self.x_max = max_evaluations, x_min, x_max
        self.cache: Dict[float, Interval] = {}

    def __call__(self, x: float) -> Interval:
        if x in self.cache:
            return self.cache[x]
        if len(self.cache) >= self.max_evaluations:
            raise AdvisedError(
                f"calibrate stopped after max_evaluations={self.max_evaluations} accountant "
                "evaluations without meeting its tolerance",
                [Remedy("max_evaluations", "raise"),
                 Remedy("rtol", "raise", note="a coarser answer needs fewer evaluations")])
        mech = self.make_mechanism(x)
        if mech is None:
            raise ValueError(f"make_mechanism({x!r}) returned None, not a mechanism")
        acc = self.factory()
        result = acc.compose(mech, count=self.count)
        acc = acc if result is None else result
        self.cache[x] = acc.epsilon(delta=self.delta)
        if self.bar is not None:
            self.bar.step(x, self.cache[x])
        return self.cache[x]

    def estimate(self, x: float) -> float:
        e = self(x).estimate
        return e if math.isfinite(e) else 1e6 * self.target

    def elasticity(self, x: float) -> float:
        """Local ``-d log eps / d log x`` from the two evaluations nearest ``x`` (else 1)."""
        pts = sorted((k, iv.estimate) for k, iv in self.cache.items()
                     if math.isfinite(iv.estimate) and iv.estimate > 0)
        near = sorted(pts, key=lambda p: abs(math.log(p[0] / x)))[:2]
        if len(near) == 2 and near[0][0] != near[1][0]:
            k = -math.log(near[0][1] / near[1][1]) / math.log(near[0][0] / near[1][0])
            if 0.05 < k < 20:
                return k
        return 1.0

    # -- why a target cannot be met ------------------------------------------------------
    def unreachable(self, x: float) -> AdvisedError:
        """The estimate itself stays above the target at the largest ``x``."""
        iv = self(x)
        return AdvisedError(
            f"target epsilon={self.target:g} at delta={self.delta:g} is unreachable: at "
            f"x={x:g}, the largest parameter tried, {self.count} composition(s) still give "
            f"epsilon {iv.estimate:g} (certified upper {iv.upper:g})",
            [Remedy("epsilon", "raise"), Remedy("delta", "raise"),
             Remedy("count", "lower", note="or the sampling rate q"),
             Remedy("bracket", "raise", note="a bracket with a larger upper end, if larger "
                                             "parameters are meaningful")])

    def accuracy_limited(self, x: float) -> AdvisedError:
        """The estimate meets the target but the certified upper bound cannot."""
        iv = self(x)
        gap = iv.upper - iv.estimate
        problem = (f"target epsilon={self.target:g} at delta={self.delta:g} is below what the "
                   f"accountant can certify: at x={x:g} the estimate is {iv.estimate:g} but the "
                   f"certified upper bound is {iv.upper:g}, {gap:.2g} above it")
        if iv.certification == "deterministic":
            eps_error = getattr(self.factory(), "eps_error", None)
            problem += (", and that margin is set by the accountant's eps_error"
                        + (f" = {eps_error:g}" if eps_error is not None else "")
                        + ", not by the mechanism")
            return AdvisedError(problem, [
                Remedy("eps_error", "set", float(f"{self.target / 2:.1g}"), "Accountant",
                       "the upper bound is about eps_error above the estimate"),
                Remedy("epsilon", "raise")])
        problem += ", a margin set by the number of samples"
        return AdvisedError(problem, [
            Remedy("n_samples", "raise", note="the margin shrinks like n_samples**-0.5"),
            Remedy("epsilon", "raise")])

    def no_finite_upper(self, x: float) -> AdvisedError:
        iv = self(x)
        return AdvisedError(
            f"the accountant certified no finite upper bound at x={x:g} (estimate "
            f"{iv.estimate:g}, target {self.target:g}, delta={self.delta:g})",
            [Remedy("n_samples", "raise", note="below the sampled accountant's floor no upper "
                                               "bound is finite"),
             Remedy("delta", "raise")])


def _bracket(ev: _Evaluations, lo: float, hi: float) -> Tuple[float, float]:
    """Stage 1: expand ``[lo, hi]`` geometrically (factor 4) until the estimate straddles
    the target (``est(lo) > target >= est(hi)``), or ``lo`` hits the bottom of the range
    (every ``x`` in range meets the target)."""
    while ev.estimate(hi) > ev.target:
        if hi >= ev.x_max:
            raise ev.unreachable(hi)
        lo, hi = hi, min(hi * 4.0, ev.x_max)
    while ev.estimate(lo) <= ev.target:
        if lo <= ev.x_min:
            break
        lo, hi = max(lo / 4.0, ev.x_min), lo
    return lo, hi


def _log_var(a: float, b: float):
    """log-space variable -> x, returning the bracket ends exactly (no re-evaluation)."""
    la, lb = math.log(a), math.log(b)
    return la, lb, (lambda t: a if t == la else b if t == lb else math.exp(t))


def _solve_estimate(ev: _Evaluations, lo: float, hi: float, rtol: float) -> float:
    """Stage 2: Brent's method on ``u -> est(e^u) - target`` over the bracket."""
    if ev.estimate(lo) <= ev.target:
        return lo
    from scipy.optimize import brentq  # noqa: PLC0415 - slow to import (CLI start-up); lazy
    la, lb, to_x = _log_var(lo, hi)
    u = brentq(lambda t: ev.estimate(to_x(t)) - ev.target, la, lb, xtol=rtol / 4,
               rtol=1e-12, maxiter=100)
    return to_x(u)


def _certify(ev: _Evaluations, x: float, rtol: float) -> float:
    """Stage 3: step ``x`` up until the certified upper bound meets the target, then
    Brent on the upper bound between the last failing and the first passing ``x``; the
    smallest passing ``x`` seen is returned."""
    kappa = ev.elasticity(x)
    if not math.isfinite(ev(x).upper):
        raise ev.no_finite_upper(x)
    fail = None
    while ev(x).upper > ev.target:
        if x >= ev.x_max:
            if ev(x).estimate <= ev.target:
                raise ev.accuracy_limited(x)
            raise ev.unreachable(x)
        fail = x
        ratio = ev(x).upper / ev.target
        factor = ratio ** (1.0 / kappa) if math.isfinite(ratio) else 2.0
        x = min(x * max(factor, 1.0 + rtol / 2), ev.x_max)
    if fail is not None:
        from scipy.optimize import brentq  # noqa: PLC0415 - slow to import; lazy
        la, lb, to_x = _log_var(fail, x)
        try:
            brentq(lambda t: ev(to_x(t)).upper - ev.target, la, lb, xtol=rtol / 4,
                   rtol=1e-12, maxiter=50)
        except ValueError:
            pass  # upper not monotone in x on this stretch: keep the passing x found
    return min(k for k, iv in ev.cache.items() if iv.upper <= ev.target and k <= x)


def calibrate_generalized_gaussian(beta: float, *, epsilon: float, delta: float,
                                   count: int = 1, q: float = 1.0, sensitivity: float = 1.0,
                                   accountant: Any = None, rtol: float = 1e-3) -> Calibration:
    """Calibrate the GG scale: ``GeneralizedGaussian(beta, scale, sensitivity)`` (Poisson
    subsampled at rate ``q`` when ``q < 1``) composed ``count`` times.

    The noise multiplier of the result is ``result.x / sqrt(2)`` (per unit sensitivity).
    """
    check_beta(beta)                      # validate beta and sensitivity up front
    v.positive("sensitivity", sensitivity)
    q = v.in_interval("q", q, 0.0, 1.0, low_open=True, high_open=False,
                      hint="q is the Poisson sampling rate (batch size / dataset size)")

    def make(s: float) -> Mechanism:
        gg = GeneralizedGaussian(beta, s, sensitivity)
        return gg if q == 1.0 else PoissonSubsampled(gg, q)

    return calibrate(make, count=count, epsilon=epsilon, delta=delta, accountant=accountant,
                     bracket=(0.5 * sensitivity, 2.0 * sensitivity), rtol=rtol)
