r"""Certified trade-off curves (f-DP) and mu-GDP brackets from any accountant.

For one direction with pair :math:`(P, Q)` (``"remove"``: :math:`P` with the record,
:math:`Q` without; ``"add"``: the two swapped) the attacker who tests :math:`Q` (null)
against :math:`P` with a (randomized) rejection rule :math:`\phi` has false-positive rate
:math:`\alpha = E_Q\phi` and true-positive rate :math:`E_P\phi`.  Its best true-positive
rate is

.. math:: \mathrm{TPR}(\alpha) = \sup\{E_P\phi : E_Q\phi \le \alpha\}
          = \inf_{\varepsilon \in \mathbb{R}} \big[e^{\varepsilon}\alpha + \delta(\varepsilon)\big],

with :math:`\delta(\varepsilon) = \sup_S P(S) - e^{\varepsilon} Q(S)` over *all* real
:math:`\varepsilon`.  Accountants answer :math:`\varepsilon \ge 0` only; for
:math:`\varepsilon < 0` the complement of :math:`S` gives the identity

.. math:: \delta_{P\|Q}(\varepsilon) = 1 - e^{\varepsilon} + e^{\varepsilon}\,\delta_{Q\|P}(-\varepsilon),

so the other direction's curve at :math:`-\varepsilon > 0` answers it.  Certified ends:

* upper: any evaluated :math:`\varepsilon` gives :math:`\mathrm{TPR}(\alpha) \le
  e^{\varepsilon}\alpha + \bar\delta(\varepsilon)`; the minimum over the evaluated points
  is a concave function of :math:`\alpha`, certified for every :math:`\alpha`;
* lower: on a grid :math:`\varepsilon_0 < \dots < \varepsilon_m` (``delta``
  non-increasing) the term is at least :math:`e^{\varepsilon_i}\alpha +
  \underline\delta(\varepsilon_{i+1})` on :math:`[\varepsilon_i, \varepsilon_{i+1}]`, at
  least :math:`\underline\delta(\varepsilon_0)` below :math:`\varepsilon_0` and at least
  :math:`e^{\varepsilon_m}\alpha` above :math:`\varepsilon_m`; the minimum of these (and
  at least :math:`\alpha`, the random test) is certified.

The grid is refined where the lower end is lost to it (branch and bound) and widened
where an end binds.  The worst case over directions is the larger curve at each
:math:`\alpha` (``direction=None``).  Derivation and conventions: design notes, "Trade-off
curves and audits".
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
from scipy.special import ndtr, ndtri

from .validation import in_interval
from .interval import DETERMINISTIC, PROBABILISTIC, Interval
from .tradeoff_args import (check_fpr as _check_fpr,
                            points_check as _points_check, probit_lower as _probit_lower,
                            query_fpr as _query_fpr, rtol_check as _rtol_check)

__all__ = ["tradeoff", "tradeoff_curve", "gdp_mu", "TradeoffCurve", "GDPBracket",
           "DirectionProfile"]

_DIRECTIONS = ("remove", "add")
_OTHER = {"remove": "add", "add": "remove"}
#: largest |epsilon| the grid reaches (e^50 alpha exceeds 1 for every alpha > 2e-22)
_EPS_CAP = 50.0
#: first grid spacing in epsilon
_STEP0 = 0.25
#: narrowest segment the refinement splits
_MIN_WIDTH = 1e-6
METHOD = "convex conjugate of the certified privacy profile over all real epsilon"


def _direction_name(direction: object) -> Optional[str]:
    if direction is None:
        return None
    name = getattr(direction, "value", direction)
    if name not in _DIRECTIONS:
        raise ValueError(f"direction must be None, 'remove' or 'add', got {direction!r}")
    return str(name)


def _simultaneous(acc: Any) -> bool:
    """True when every ``delta`` query of ``acc`` is certified on one event (a
    simultaneous envelope over all epsilon and both directions)."""
    flag = getattr(acc, "tradeoff_simultaneous", None)
    if flag is not None:
        return bool(flag() if callable(flag) else flag)
    return False


class _Queries:
    """Cached ``delta`` intervals of one accountant at ``(direction, |eps|)``, with the
    confidence bookkeeping of probabilistic certificates."""

    def __init__(self, acc: Any) -> None:
        self.acc = acc
        self.cache: Dict[Tuple[str, float], Tuple[float, float, float]] = {}
        self.certification = DETERMINISTIC
        self.failure = 0.0          # sum of 1 - confidence over the queries (union bound)
        self.max_failure = 0.0
        self.count = 0
        hook = getattr(acc, "tradeoff_delta_source", None)
        self.fast = hook() if callable(hook) else None

    def get(self, direction: str, eps: float) -> Tuple[float, float, float]:
        key = (direction, eps)
        hit = self.cache.get(key)
        if hit is not None:
            return hit
        self.count += 1
        if self.fast is not None and self.certification == PROBABILISTIC:
            # the accountant's own numbers, read without recomposing (the first query
            # went through delta() and recorded the certificate)
            lo, est, up = self.fast(direction, eps)
            self.failure += self.max_failure
        else:
            iv = self.acc.delta(eps, direction)
            if iv.certification != DETERMINISTIC:
                self.certification = PROBABILISTIC
                self.failure += 1.0 - iv.confidence
                self.max_failure = max(self.max_failure, 1.0 - iv.confidence)
            lo, est, up = float(iv.lower), float(iv.estimate), float(iv.upper)
        out = (min(max(lo, 0.0), 1.0), est, min(up, 1.0))
        self.cache[key] = out
        return out

    def confidence(self) -> float:
        """1 minus the failure probability of all queries together: the accountant's own
        level when its certificates hold simultaneously, else the union bound."""
        if self.certification == DETERMINISTIC:
            return 1.0
        fail = self.max_failure if _simultaneous(self.acc) else self.failure
        if fail >= 1.0:
            raise ValueError(
                f"the {self.count} delta queries of this probabilistic accountant hold "
                f"together only with probability 1 - {fail:.3g} (union bound: its intervals "
                "are not certified simultaneously over epsilon); lower its alpha or use an "
                "accountant with simultaneous envelopes (SampledAccountant, certify='envelope')")
        return 1.0 - fail


def _profile_at(q: _Queries, direction: str, eps: float) -> Tuple[float, float, float]:
    """``(lower, estimate, upper)`` of the direction's profile at a real ``eps``."""
    if eps >= 0.0:
        return q.get(direction, eps)
    lo, est, up = q.get(_OTHER[direction], -eps)
    e = math.exp(eps)
    base = -math.expm1(eps)            # 1 - e^eps, exact for small |eps|
    return (min(1.0, base + e * lo), min(1.0, base + e * est), min(1.0, base + e * up))


@dataclass(frozen=True)
class DirectionProfile:
    r"""The evaluated points of one direction's privacy profile over real epsilon.

    ``eps`` is increasing; ``lower``/``upper`` are certified bounds on
    :math:`\delta(\varepsilon)` there (``lower`` from one attained pair), ``estimate`` the
    accountant's estimate.  :meth:`tpr_upper` and :meth:`tpr_lower` are the certified
    ends of the best true-positive rate at *any* false-positive rate, from these points
    alone (module docstring)."""

    direction: str
    eps: np.ndarray
    lower: np.ndarray
    estimate: np.ndarray
    upper: np.ndarray

    def tpr_upper(self, fpr: np.ndarray) -> np.ndarray:
        """``min(1, min_j e^{eps_j} fpr + upper_j)``: concave, certified at every fpr."""
        a = np.asarray(fpr, dtype=np.float64)[..., None]
        return np.minimum(1.0, np.min(a * np.exp(self.eps) + self.upper, axis=-1))

    def tpr_estimate(self, fpr: np.ndarray) -> np.ndarray:
        a = np.asarray(fpr, dtype=np.float64)[..., None]
        return np.minimum(1.0, np.min(a * np.exp(self.eps) + self.estimate, axis=-1))

    def segment_terms(self, fpr: np.ndarray) -> np.ndarray:
        """Per fpr (rows): the lower terms of the left end, the segments and the right
        end (``m + 2`` columns)."""
        a = np.asarray(fpr, dtype=np.float64)[..., None]
        e = np.exp(self.eps)
        left = np.broadcast_to(self.lower[:1], a.shape[:-1] + (1,))
        mid = a * e[:-1] + self.lower[1:]
        right = a * e[-1:]
        return np.concatenate([left, mid, right], axis=-1)

    def tpr_lower(self, fpr: np.ndarray) -> np.ndarray:
        """``max(fpr, min(lower_0, min_i e^{eps_i} fpr + lower_{i+1}, e^{eps_m} fpr))``."""
        a = np.asarray(fpr, dtype=np.float64)
        return np.maximum(a, np.min(self.segment_terms(a), axis=-1))


class _Builder:
    """Branch and bound on the epsilon grid of one direction for a set of fprs."""

    def __init__(self, uq: _Queries, lqs: List[_Queries], direction: str) -> None:
        self.uq, self.lqs, self.direction = uq, lqs, direction
        self.points: Dict[float, Tuple[float, float, float]] = {}

    def add(self, eps_values: Sequence[float]) -> None:
        for e in eps_values:
            e = float(e)
            if e not in self.points:
                self.points[e] = _profile_at(self.uq, self.direction, e)

    def _lower_points(self, lq: _Queries, eps: np.ndarray) -> np.ndarray:
        return np.array([_profile_at(lq, self.direction, float(e))[0] for e in eps])

    def profiles(self) -> List[DirectionProfile]:
        """One profile per lower source (upper ends and estimates from the main
        accountant in each)."""
        eps = np.array(sorted(self.points))
        vals = np.array([self.points[e] for e in eps])
        lo, est, up = vals[:, 0], vals[:, 1], vals[:, 2]
        if self.lqs and self.lqs[0] is not self.uq:
            return [DirectionProfile(self.direction, eps, self._lower_points(lq, eps), est, up)
                    for lq in self.lqs]
        return [DirectionProfile(self.direction, eps, lo, est, up)]

    def refine(self, fpr: np.ndarray, rtol: float, atol: float, max_queries: int) -> None:
        """Refine the grid until, for every fpr, no segment that could bind loses more
        than ``rtol`` (relative) or ``atol`` to the grid, and no end binds below the
        upper end; or until ``max_queries`` points."""
        inner = fpr[(fpr > 0.0) & (fpr < 1.0)]
        if inner.size == 0:
            inner = np.array([0.5])
        hi = min(_EPS_CAP, math.log(1.0 / float(inner.min())) + 0.5)
        lo = -min(_EPS_CAP, math.log(1.0 / (1.0 - float(inner.max()))) + 0.5)
        n = int(math.ceil((hi - lo) / _STEP0))
        self.add(np.round(np.linspace(lo, hi, n + 1), 12))
        if np.any(fpr == 0.0):
            # fpr 0 is refined for itself (its upper end is the smallest upper delta, at
            # the right end of the grid), whatever the other rates asked
            inner = np.concatenate([[0.0], inner])
        for _ in range(200):
            if len(self.points) >= max_queries:
                break
            new: set = set()
            for prof in self.profiles():
                eps = prof.eps
                e = np.exp(eps)
                up = prof.tpr_upper(inner)
                terms = prof.segment_terms(inner)            # (n_fpr, m + 2)
                for r, a in enumerate(inner):
                    t = terms[r]
                    tol = max(atol, rtol * up[r])
                    if t[0] < up[r] - tol and eps[0] > -_EPS_CAP:
                        new.add(max(-_EPS_CAP, eps[0] - max(1.0, eps[-1] - eps[0])))
                    if t[-1] < up[r] - tol and eps[-1] < _EPS_CAP:
                        new.add(min(_EPS_CAP, eps[-1] + max(1.0, eps[-1] - eps[0])))
                    seg = t[1:-1]
                    # the best a segment could give with a perfect grid (its better end)
                    ends = a * e + prof.lower
                    best = np.minimum(ends[:-1], ends[1:])
                    lost = best - seg
                    width = np.diff(eps)
                    # only segments below what the grid's best points already give can
                    # bind the final lower end
                    reach = min(up[r], float(np.min(best)))
                    mark = (seg < reach - tol) & (lost > tol) & (width > _MIN_WIDTH)
                    for i in np.flatnonzero(mark):
                        new.add(0.5 * (eps[i] + eps[i + 1]))
            new -= set(self.points)
            if not new:
                break
            self.add(sorted(new)[: max(1, max_queries - len(self.points))])


def _sources(acc: Any) -> Tuple[_Queries, List[_Queries]]:
    """The accountant's queries for upper ends and the list of lower sources (each the
    profile of one attained pair)."""
    uq = _Queries(acc)
    hook = getattr(acc, "tradeoff_lower_sources", None)
    if hook is None:
        return uq, [uq]
    srcs = list(hook())
    if not srcs:
        return uq, [uq]
    return uq, [uq if s is acc else _Queries(s) for s in srcs]


def _directions(direction: object) -> Tuple[str, ...]:
    d = _direction_name(direction)
    return _DIRECTIONS if d is None else (d,)


def _check_accountant(acc: Any) -> None:
    if not callable(getattr(acc, "delta", None)):
        raise ValueError(f"accountant must be a PrivacyAccountant (with delta(epsilon, "
                         f"direction)), got {acc!r}")
    certify = getattr(acc, "certify", None)
    if certify == "seed":
        raise ValueError(
            "certify='seed' (GG paper, Theorem 6) bounds delta at each epsilon on its own, "
            "not simultaneously over all epsilon as a trade-off curve needs; use "
            "SampledAccountant(certify='envelope') (its envelopes hold for every epsilon "
            "at once)")


def _build(acc: Any, fpr: np.ndarray, direction: object, rtol: float, atol: float,
           max_queries: int) -> Tuple[Dict[str, _Builder], _Queries, List[_Queries]]:
    _check_accountant(acc)
    uq, lqs = _sources(acc)
    builders = {}
    for d in _directions(direction):
        b = _Builder(uq, lqs, d)
        b.refine(fpr, rtol, atol, max_queries)
        builders[d] = b
    return builders, uq, lqs


def _confidence(uq: _Queries, lqs: List[_Queries]) -> Tuple[str, float]:
    qs = [uq] + [q for q in lqs if q is not uq]
    cert = PROBABILISTIC if any(q.certification == PROBABILISTIC for q in qs) else DETERMINISTIC
    if cert == DETERMINISTIC:
        return cert, 1.0
    fail = sum(1.0 - q.confidence() for q in qs)
    return cert, 1.0 - fail


def tradeoff(acc: Any, fpr: Union[float, Sequence[float]], direction: object = None, *,
             rtol: float = 1e-3, atol: float = 1e-12,
             max_queries: int = 4000) -> Union[Interval, Tuple[Interval, ...]]:
    r"""Certified intervals on the attacker's best true-positive rate at ``fpr``.

    Parameters
    ----------
    acc : PrivacyAccountant
        Any accountant with a composition (its ``delta(epsilon, direction)`` is queried).
    fpr : float or sequence of float
        False-positive rates in ``[0, 1]``.
    direction : None, "remove" or "add"
        ``"remove"``: the membership attacker (positive: the record is in, so
        :math:`P` with the record against :math:`Q` without); ``"add"``: the swapped
        test.  ``None`` (default): the worst case, the larger of the two at each fpr.
    rtol, atol : float
        Grid accuracy: the epsilon grid is refined until it costs the lower end less
        than ``max(atol, rtol * upper)`` (the accountant's own widths remain).
    max_queries : int
        Most epsilon points per direction.

    Returns
    -------
    Interval or tuple of Interval
        One interval per fpr (a single one for a scalar ``fpr``).  ``details`` holds the
        per-direction ends (``"per_direction"``), the number of delta queries and the
        epsilon where the upper end is taken.  Probabilistic accountants: the intervals
        hold together with the stated confidence (design notes).
    """
    max_queries = _rtol_check(rtol, atol, max_queries)
    a = _query_fpr(fpr)
    builders, uq, lqs = _build(acc, a, direction, rtol, atol, int(max_queries))
    cert, conf = _confidence(uq, lqs)
    per = {}
    for d, b in builders.items():
        profs = b.profiles()
        up = profs[0].tpr_upper(a)
        low = np.minimum(np.max([p.tpr_lower(a) for p in profs], axis=0), up)
        est = np.clip(profs[0].tpr_estimate(a), low, up)
        arg = profs[0].eps[np.argmin(a[:, None] * np.exp(profs[0].eps) + profs[0].upper,
                                     axis=1)]
        per[d] = (low, est, up, arg, len(b.points))
    out = []
    for i, x in enumerate(a):
        lows = {d: float(v[0][i]) for d, v in per.items()}
        ests = {d: float(v[1][i]) for d, v in per.items()}
        ups = {d: float(v[2][i]) for d, v in per.items()}
        lo, est, up = max(lows.values()), max(ests.values()), max(ups.values())
        if x == 1.0:
            lo = est = up = 1.0
        details = {"fpr": float(x),
                   "per_direction": {d: (lows[d], ups[d]) for d in per},
                   "epsilon_at_upper": {d: float(v[3][i]) for d, v in per.items()},
                   "points": {d: v[4] for d, v in per.items()},
                   "delta_queries": uq.count + sum(q.count for q in lqs if q is not uq)}
        out.append(Interval(lo, min(max(est, lo), up), up, cert, conf, METHOD, details))
    if np.ndim(fpr) == 0:
        return out[0]
    return tuple(out)


@dataclass(frozen=True)
class TradeoffCurve:
    r"""Certified lower and upper functions of the best true-positive rate.

    ``fpr``, ``lower``, ``estimate``, ``upper`` tabulate the band on a grid; the methods
    :meth:`upper_at` and :meth:`lower_at` evaluate the certified ends at any fpr from
    the evaluated profile points (``profiles``, one list per direction: the upper end is
    the first profile's, the lower the best over the lower sources).  ``direction`` is
    ``None`` for the worst case over both directions.
    """

    fpr: np.ndarray
    lower: np.ndarray
    estimate: np.ndarray
    upper: np.ndarray
    direction: Optional[str]
    certification: str
    confidence: float
    profiles: Mapping[str, Tuple[DirectionProfile, ...]] = field(repr=False)
    #: ``(|eps|, max over both directions of the certified upper delta)``, for the
    #: symmetric curve of one-run audits (:meth:`symmetric_upper`)
    symmetric_points: Tuple[Tuple[float, ...], Tuple[float, ...]] = field(repr=False,
                                                                         default=((), ()))

    def __repr__(self) -> str:
        i = int(np.argmin(np.abs(self.fpr - 0.1))) if self.fpr.size else 0
        at = (f"; at fpr {self.fpr[i]:.3g}: tpr in [{self.lower[i]:.4g}, {self.upper[i]:.4g}]"
              if self.fpr.size else "")
        return (f"TradeoffCurve({self.fpr.size} fprs in [{self.fpr.min():.3g}, "
                f"{self.fpr.max():.3g}], direction={self.direction!r}, "
                f"{self.certification}, confidence {self.confidence:g}{at}; arrays: .fpr, "
                ".lower, .estimate, .upper)") if self.fpr.size else "TradeoffCurve(empty)"

    def upper_at(self, fpr: Union[float, Sequence[float]]) -> np.ndarray:
        """Certified upper end at any fpr (concave per direction; max over directions)."""
        a = _check_fpr(fpr)
        return np.max([p[0].tpr_upper(a) for p in self.profiles.values()], axis=0)

    def lower_at(self, fpr: Union[float, Sequence[float]]) -> np.ndarray:
        """Certified lower end at any fpr."""
        a = _check_fpr(fpr)
        return np.max([np.max([q.tpr_lower(a) for q in p], axis=0)
                       for p in self.profiles.values()], axis=0)

    def inverse_upper(self, tpr: Union[float, Sequence[float]]) -> np.ndarray:
        r"""For the *symmetric* upper curve :math:`U` (:meth:`symmetric_upper`) the
        smallest fpr with :math:`U(\mathrm{fpr}) \ge` ``tpr``: :math:`U^{-1}(x) =
        \max_j (x - \bar\delta_j) e^{-\varepsilon_j}` clipped to ``[0, 1]``."""
        eps, up = self.symmetric_upper()
        x = np.atleast_1d(np.asarray(tpr, dtype=np.float64))[:, None]
        return np.clip(np.max((x - up) * np.exp(-eps), axis=1), 0.0, 1.0)

    def symmetric_upper(self) -> Tuple[np.ndarray, np.ndarray]:
        r"""Points ``(eps, upper)`` of :math:`\max_d \bar\delta_d` (both directions' upper
        ends at each evaluated :math:`|\varepsilon|`), on a grid symmetric about 0: the
        negative side by the identity :math:`D(\varepsilon) = 1 - e^{\varepsilon} +
        e^{\varepsilon} D(-\varepsilon)` applied to the maximum.  Its conjugate is a
        symmetric concave curve above both directions' curves."""
        xs, up = self.symmetric_points
        xs, up = np.asarray(xs, dtype=np.float64), np.asarray(up, dtype=np.float64)
        pos = xs > 0
        neg = -xs[pos][::-1]
        up_neg = np.minimum(1.0, -np.expm1(neg) + np.exp(neg) * up[pos][::-1])
        return np.concatenate([neg, xs]), np.concatenate([up_neg, up])


def _default_grid(points: int) -> np.ndarray:
    z = np.linspace(-5.0, 5.0, points)
    return np.unique(np.concatenate([[0.0], ndtr(z), [1.0]]))


def tradeoff_curve(acc: Any, fpr: Optional[Sequence[float]] = None, direction: object = None,
                   *, points: int = 101, rtol: float = 1e-3, atol: float = 1e-12,
                   max_queries: int = 4000) -> TradeoffCurve:
    """Certified band of the best true-positive rate over a grid of fprs.

    ``fpr`` defaults to ``points`` rates equally spaced in probit scale between
    ``Phi(-5)`` and ``Phi(5)``, plus 0 and 1.  Other arguments as :func:`tradeoff`.
    The returned :class:`TradeoffCurve` also evaluates the certified ends at any fpr."""
    max_queries = _rtol_check(rtol, atol, max_queries)
    points = _points_check(points)
    a = _default_grid(int(points)) if fpr is None else np.sort(_query_fpr(fpr))
    builders, uq, lqs = _build(acc, a, direction, rtol, atol, int(max_queries))
    profiles = {d: tuple(b.profiles()) for d, b in builders.items()}
    up = np.max([p[0].tpr_upper(a) for p in profiles.values()], axis=0)
    low = np.minimum(np.max([np.max([q.tpr_lower(a) for q in p], axis=0)
                             for p in profiles.values()], axis=0), up)
    est = np.clip(np.max([p[0].tpr_estimate(a) for p in profiles.values()], axis=0), low, up)
    up[a == 1.0] = low[a == 1.0] = est[a == 1.0] = 1.0
    xs = sorted({abs(e) for b in builders.values() for e in b.points})
    sym = tuple(max(uq.get("remove", x)[2], uq.get("add", x)[2]) for x in xs)
    cert, conf = _confidence(uq, lqs)        # again: the symmetric points added queries
    return TradeoffCurve(a, low, est, up, _direction_name(direction), cert, conf, profiles,
                         (tuple(xs), sym))


@dataclass(frozen=True)
class GDPBracket:
    r"""Certified bracket on the smallest :math:`\mu` with
    :math:`\mathrm{TPR}(\alpha) \le \Phi(\Phi^{-1}(\alpha) + \mu)` for every
    :math:`\alpha` in ``fpr_range`` (both directions), and the best-fit :math:`\mu`.

    ``upper`` is ``inf`` when no finite :math:`\mu` could be certified (always the case
    when ``fpr_range`` reaches 0: an additive error floor on delta leaves a positive
    true-positive rate at fpr 0).  ``best_fit`` is the least-squares :math:`\mu` of the
    estimated curve in probit scale over the range (not certified)."""

    lower: float
    upper: float
    best_fit: float
    fpr_range: Tuple[float, float]
    certification: str
    confidence: float
    details: Mapping[str, object] = field(default_factory=dict, compare=False, repr=False)

    def __contains__(self, mu: float) -> bool:
        return self.lower <= mu <= self.upper

    def fit_note(self, digits: int = 6) -> str:
        """The best fit as text, labelled as not certified; empty when it is ``nan`` or
        outside the certified bracket (a fit there contradicts the certificate and
        would read as one)."""
        if not math.isfinite(self.best_fit) or self.best_fit not in self:
            return ""
        return f"uncertified best fit {self.best_fit:.{digits}g}"

    def __str__(self) -> str:
        fit = self.fit_note()
        return (f"mu in [{self.lower:.6g}, {self.upper:.6g}] ({fit + '; ' if fit else ''}"
                f"fpr in [{self.fpr_range[0]:.3g}, 1 - {self.fpr_range[0]:.3g}])")


def _mu_low_below_range(acc: Any, fpr_min: float, rtol: float, max_queries: int) -> float:
    r"""A finite lower end on :math:`\mu` from false-positive rates below ``fpr_min``.

    The best true-positive rate is non-decreasing in the fpr, so a certified
    :math:`L(\alpha') < 1` at :math:`\alpha' \le \alpha_0 = ` ``fpr_min`` gives
    :math:`\mathrm{TPR}(\alpha_0) \ge L(\alpha')` and :math:`\mu \ge
    \Phi^{-1}(L(\alpha')) - \Phi^{-1}(\alpha_0)`.  Used where the lower end rounds to
    1.0 inside the range (a curve within about 1e-16 of 1)."""
    if fpr_min <= 1e-300:
        return 0.0
    k = np.arange(1, 300)
    alphas = fpr_min * 10.0 ** (-k[: int(math.floor(math.log10(fpr_min / 1e-300)))])
    alphas = alphas[alphas >= 1e-300]
    if alphas.size == 0:
        return 0.0
    low = tradeoff_curve(acc, alphas, None, rtol=rtol, max_queries=max_queries).lower
    # tradeoff_curve sorts its fprs: low is in increasing alpha
    ok = low < 1.0
    if not ok.any():
        return 0.0
    return float(max(0.0, np.max(_probit_lower(low[ok])) - ndtri(fpr_min)))


def gdp_mu(acc: Any, *, fpr_min: float = 1e-6, points: int = 201, rtol: float = 1e-3,
           max_queries: int = 4000) -> GDPBracket:
    r"""Certified bracket on the mu-GDP parameter over ``[fpr_min, 1 - fpr_min]``.

    With the certified ends :math:`L \le \mathrm{TPR} \le U` (worst case over
    directions) on a grid :math:`\alpha_0 < \dots < \alpha_J` of the range:

    * lower: :math:`\max_j \Phi^{-1}(L(\alpha_j)) - \Phi^{-1}(\alpha_j)`;
    * upper: on :math:`[\alpha_j, \alpha_{j+1}]` the excess
      :math:`\Phi^{-1}(\mathrm{TPR}(\alpha)) - \Phi^{-1}(\alpha)` is at most
      :math:`\Phi^{-1}(U(\alpha_{j+1})) - \Phi^{-1}(\alpha_j)` (both monotone), so the
      maximum over segments bounds it on the whole range; ``inf`` where
      :math:`U = 1`.

    ``fpr_min = 0`` gives ``upper = inf`` unless the curve is certified to reach 0 at
    0 (it is not, through an additive floor).  Subsampled mechanisms approach the
    unsubsampled mu only at astronomically small fpr, so the bracket is a statement
    about the range, which it names."""
    fpr_min = in_interval("fpr_min", fpr_min, 0.0, 0.5, low_open=False, high_open=True,
                            hint="the bracket holds for fpr in [fpr_min, 1 - fpr_min]; "
                            "typical 1e-6")
    points = _points_check(points)
    max_queries = _rtol_check(rtol, 1e-12, max_queries)
    lo_a = max(fpr_min, 1e-300)
    z = np.linspace(ndtri(lo_a), -ndtri(lo_a), int(points))
    grid = ndtr(z)
    grid[0], grid[-1] = lo_a, 1.0 - lo_a
    curve = tradeoff_curve(acc, grid, None, points=points, rtol=rtol,
                           max_queries=max_queries)
    low, up, est = curve.lower, curve.upper, curve.estimate
    with np.errstate(divide="ignore", invalid="ignore"):
        za = ndtri(grid)
        # a lower end that rounds to 1.0 certifies nothing finite (ndtri(1) = inf): only
        # points with L < 1 count (design notes, "Finite mu-GDP lower ends")
        below = low < 1.0
        mu_low = float(np.max(_probit_lower(low[below]) - za[below])) \
            if below.any() else 0.0
        if not below.all():
            mu_low = max(mu_low, _mu_low_below_range(acc, lo_a, rtol, max_queries))
        seg = ndtri(np.clip(up[1:], 0.0, 1.0)) - za[:-1]
        mu_up = float(np.max(seg))
        fit_terms = ndtri(np.clip(est, 0.0, 1.0)) - za
    if fpr_min == 0.0 or not math.isfinite(mu_up):
        mu_up = math.inf
    ok = np.isfinite(fit_terms)
    best = float(np.mean(fit_terms[ok])) if ok.any() else math.nan
    mu_low = max(0.0, mu_low)
    return GDPBracket(mu_low, mu_up, best, (float(fpr_min), 1.0 - float(fpr_min)),
                      curve.certification, curve.confidence,
                      {"grid_points": int(grid.size)})
