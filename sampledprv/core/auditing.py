r"""Privacy audits: canary scores against the accountant's certified trade-off curve.

Two designs (``mode``):

``"runs"`` (default): every in-score comes from a run (or canary) *with* the record and
every out-score from one *without*, independently (many training runs, or one run with
independent canaries whose scores do not interact).  The attack "guess in when the score
exceeds t" has false-positive rate :math:`\mathrm{FPR}(t) = Q(\text{score} > t)` and
true-positive rate :math:`\mathrm{TPR}(t) = P(\text{score} > t)`.  Thresholds are the
out-scores of fixed ranks ``k`` (the ``k``-th largest, ``k`` in a set fixed in advance):
by the quantile coupling :math:`\mathrm{FPR}(X_{(k)}) \le_{st} U_{(k)} \sim
\mathrm{Beta}(k, m - k + 1)`, so the Clopper-Pearson upper bound for ``k - 1`` successes
out of ``m`` bounds it with probability ``1 - a`` (any score law, ties included); given
the threshold (a function of the out-scores only) the in-count is binomial and its
Clopper-Pearson lower bound holds with probability ``1 - a``.  Bonferroni over the
``2 |ranks|`` bounds gives all points together with the stated confidence.

``"one-run"``: ``m`` canaries, each included independently with probability 1/2 (Steinke,
Nasr and Jagielski, "Privacy Auditing with One (1) Training Run", NeurIPS 2023, arXiv
2305.08846).  The auditor guesses "in" for the ``k+`` highest scores and "out" for the
``k-`` lowest; ``v`` of the ``r = k+ + k-`` guesses are right.  Their Theorem 5.2 bounds
the chance of ``v`` or more correct guesses under :math:`(\varepsilon, \delta)`-DP; the
f-DP version (Mahloujifar, Melis and Chaudhuri, "Auditing f-Differential Privacy in One
Run", ICML 2025, arXiv 2410.22235) bounds it under a trade-off function, for which we use
our *certified* symmetric upper curve (a weaker trade-off function than the true one, so
the test stays valid) in place of a Gaussian-DP assumption.

Verdict: the accountant is contradicted ("the implementation leaks more than accounted")
when, on the event of the confidence bounds, some point lies above the certified upper
trade-off curve (``runs``), or the f-DP one-run test rejects the certified curve
(``one-run``), or the empirical epsilon lower bound exceeds the certified upper end.
Derivation: design notes, "Trade-off curves and audits".
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence, Tuple

import numpy as np

from .text_rows import text_rows
from .tradeoff import tradeoff_curve

__all__ = ["Audit", "AuditPoint", "AuditResult", "audit", "clopper_pearson", "load_scores",
           "one_run_p_value"]

CONSISTENT = "consistent"
LEAKS = "the implementation leaks more than accounted"
NOT_COMPARED = ("no accountant given: not compared, only epsilon_lower was computed "
                "(pass the accountant to test the scores against its certified curve)")


def clopper_pearson(k: int, n: int, significance: float, side: str) -> float:
    """One-sided Clopper-Pearson bound on a binomial rate from ``k`` successes of ``n``:
    ``side="upper"`` or ``"lower"``, each failing with probability at most
    ``significance``."""
    if not 0 <= k <= n or n <= 0:
        raise ValueError(f"need 0 <= k <= n and n > 0, got k={k}, n={n}")
    from scipy import stats  # noqa: PLC0415 - scipy.stats is slow to import; keep it lazy
    if side == "upper":
        return 1.0 if k >= n else float(stats.beta.isf(significance, k + 1, n - k))
    if side == "lower":
        return 0.0 if k <= 0 else float(stats.beta.ppf(significance, k, n - k + 1))
    raise ValueError(f"side must be 'upper' or 'lower', got {side!r}")


def _ranks(m: int) -> Tuple[int, ...]:
    """Ranks 1, 2, 3, 5, 8, ... (growing by about 1.5) up to ``m``: fixed before the
    scores are seen."""
    out, k = [], 1
    while k <= m:
        out.append(k)
        k = max(k + 1, int(math.floor(k * 1.5)))
    return tuple(out)


@dataclass(frozen=True)
class AuditPoint:
    """One attack point: threshold, counts, empirical rates and their confidence bounds,
    and the certified upper trade-off curve at the upper fpr bound."""

    threshold: float
    false_positives: int
    n_out: int
    true_positives: int
    n_in: int
    fpr: float
    tpr: float
    fpr_upper: float
    tpr_lower: float
    curve_upper: float
    violates: bool


@dataclass(frozen=True)
class AuditResult:
    """What an audit found.

    Attributes
    ----------
    epsilon_lower : float
        Empirical lower bound on epsilon at ``delta`` (holds with ``confidence`` if the
        mechanism is (epsilon, delta)-DP for no smaller epsilon, i.e. a certified lower
        bound on the true epsilon).
    epsilon_upper : float
        The accountant's certified upper end of ``epsilon(delta)`` (``nan`` without an
        accountant).
    points : tuple of AuditPoint
        The attack's points (``runs``) with their bounds; empty for ``one-run``.
    consistent : bool or None
        False when the scores contradict the certified curve at ``confidence``, True
        when they do not; ``None`` when nothing was compared (no accountant given), so
        that ``if result.consistent`` never reads an uncompared audit as a pass.
    verdict : str
        ``"consistent"``, ``"the implementation leaks more than accounted"`` or
        ``"no accountant given: not compared, ..."``.
    """

    epsilon_lower: float
    epsilon_upper: float
    delta: float
    points: Tuple[AuditPoint, ...]
    consistent: Optional[bool]
    verdict: str
    confidence: float
    mode: str
    details: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def gap(self) -> float:
        """``epsilon_upper - epsilon_lower`` (how much the audit leaves unexplained)."""
        return self.epsilon_upper - self.epsilon_lower

    def as_dict(self) -> dict:
        """Plain Python types (non-finite floats stay floats; the command line writes
        them as ``null`` with a ``*_nonfinite`` sibling key)."""
        return {"epsilon_lower": self.epsilon_lower, "epsilon_upper": self.epsilon_upper,
                "delta": self.delta, "consistent": self.consistent, "verdict": self.verdict,
                "confidence": self.confidence, "mode": self.mode,
                "points": [dict(p.__dict__) for p in self.points],
                "details": dict(self.details)}

    def __str__(self) -> str:
        return (f"audit ({self.mode}, confidence {self.confidence:g}): epsilon >= "
                f"{self.epsilon_lower:.4g} at delta {self.delta:g}; certified upper "
                f"{self.epsilon_upper:.4g}; {self.verdict}")


def _eps_from_point(fpr_up: float, tpr_low: float, delta: float) -> float:
    """Largest epsilon excluded by one point: (eps, delta)-DP in both directions gives
    ``TPR <= e^eps FPR + delta`` and ``1 - FPR <= e^eps (1 - TPR) + delta``."""
    best = 0.0
    if tpr_low - delta > 0 and fpr_up > 0:
        best = max(best, math.log((tpr_low - delta) / fpr_up))
    elif tpr_low - delta > 0:
        best = math.inf
    if 1.0 - fpr_up - delta > 0:
        if tpr_low < 1.0:
            best = max(best, math.log((1.0 - fpr_up - delta) / (1.0 - tpr_low)))
        else:
            best = math.inf
    return best


def one_run_p_value(m: int, guesses: int, correct: int, epsilon: float,
                    delta: float) -> float:
    r"""Steinke-Nasr-Jagielski (2023, Theorem 5.2): an upper bound on the probability of
    ``correct`` or more right guesses out of ``guesses`` among ``m`` canaries under
    :math:`(\varepsilon, \delta)`-DP: :math:`\beta + 2 m \delta \max_{i \ge 1}
    (P[W \ge v - i] - \beta)/i` with :math:`W \sim \mathrm{Bin}(r, e^\varepsilon /
    (1 + e^\varepsilon))` and :math:`\beta = P[W \ge v]`."""
    from scipy import stats  # noqa: PLC0415 - scipy.stats is slow to import; keep it lazy
    p = 1.0 / (1.0 + math.exp(-epsilon))
    beta = float(stats.binom.sf(correct - 1, guesses, p))
    if delta == 0.0 or correct <= 0:
        return min(1.0, beta)
    i = np.arange(1, correct + 1)
    tail = stats.binom.sf(correct - i - 1, guesses, p) - beta
    return float(min(1.0, beta + 2.0 * m * delta * float(np.max(tail / i))))


def _one_run_epsilon(m: int, guesses: int, correct: int, significance: float,
                     delta: float) -> float:
    """Largest epsilon whose (epsilon, delta) claim the outcome rejects at
    ``significance`` (0 if none)."""
    def f(eps: float) -> float:
        return significance - one_run_p_value(m, guesses, correct, eps, delta)
    if f(0.0) <= 0:
        return 0.0
    hi = 1.0
    while f(hi) > 0:
        hi *= 2.0
        if hi > 1e3:
            return math.inf
    from scipy.optimize import brentq  # noqa: PLC0415 - slow to import (CLI start-up); lazy
    return float(brentq(f, hi / 2.0 if hi > 1.0 else 0.0, hi, xtol=1e-6))


def _fdp_rejects(m: int, guesses: int, correct: int, significance: float,
                 inverse_upper: Any) -> bool:
    """Mahloujifar, Melis and Chaudhuri (2024/2025), the recursive bound on the chance of
    ``correct`` right guesses out of ``guesses`` under f-DP, with the blow-up inverse of
    our certified symmetric upper curve: True when the outcome is rejected at
    ``significance``."""
    r = significance * correct / m
    h = significance * (guesses - correct) / m
    for i in range(correct - 1, -1, -1):
        h_new = max(h, float(inverse_upper(min(r, 1.0))[0]))
        if h_new == h:
            break
        r = min(r + (i / (guesses - i)) * (h_new - h), 1.0)
        h = h_new
    return r + h > guesses / m


def load_scores(path: str) -> Tuple[np.ndarray, np.ndarray]:
    """Read canary scores: JSON ``{"in": [...], "out": [...]}`` (also ``scores_in`` /
    ``scores_out``), or text with two columns ``score member`` (member 1 = in, 0 = out;
    comments with ``#``, commas or whitespace)."""
    with open(path, "r", encoding="utf-8") as fh:
        text = fh.read()
    stripped = text.lstrip()
    if stripped.startswith("{"):
        data = json.loads(text)
        for a, b in (("in", "out"), ("scores_in", "scores_out")):
            if a in data and b in data:
                return np.asarray(data[a], float), np.asarray(data[b], float)
        raise ValueError(f"{path}: a JSON score file needs keys 'in' and 'out' (lists of "
                         "scores), got " + ", ".join(map(repr, data)))
    rows = []
    for n, line, parts in text_rows(text, str(path), "two columns 'score member' (member 1 "
                                    "= in, 0 = out)"):
        try:
            s, mbr = float(parts[0]), float(parts[1])
        except ValueError:
            if not rows:       # a header line
                continue
            raise ValueError(f"{path}, line {n}: not numbers: {line!r}") from None
        if mbr not in (0.0, 1.0):
            raise ValueError(f"{path}, line {n}: the second column must be 1 (in) or 0 "
                             f"(out), got {parts[1]!r}")
        rows.append((s, mbr))
    if not rows:
        raise ValueError(f"{path}: no scores found")
    arr = np.asarray(rows)
    return arr[arr[:, 1] == 1.0, 0], arr[arr[:, 1] == 0.0, 0]


def _check_scores(name: str, x: Any) -> np.ndarray:
    fix = (f"{name} must be real attack scores (a list or array of numbers, higher = more "
           "likely a member)")
    try:
        raw = np.asarray(x)
        if np.iscomplexobj(raw):
            raise TypeError("complex")
        a = raw.astype(np.float64).ravel()
    except (TypeError, ValueError) as exc:
        got = "complex numbers" if str(exc) == "complex" else f"{type(x).__name__} {x!r:.60}"
        raise ValueError(f"{fix}, got {got}; pass real numbers (np.real(...) of complex "
                         "scores, or the losses as floats)") from None
    if a.size == 0:
        raise ValueError(f"{name} is empty: give the attack scores of the canaries "
                         "(higher = more likely a member)")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} has NaN or infinite scores; drop or clip them first")
    return a


@dataclass(frozen=True)
class Audit:
    """An audit: canary scores (higher = more likely a member) and, optionally, the
    accountant whose certified curve they are tested against.  :meth:`run` returns the
    :class:`AuditResult`; :func:`audit` is ``Audit(...).run()``.

    Parameters
    ----------
    scores_in, scores_out : array-like
        Scores of the canaries that were in (out of) training.
    accountant : PrivacyAccountant, optional
        The accounted composition; without it only ``epsilon_lower`` is computed.
    delta : float
        The delta of the epsilon lower bound (and of the accountant's upper end).
    confidence : float
        Confidence of the whole audit (all bounds together).
    mode : {"runs", "one-run"}
        See the module docstring.
    direction : None, "remove" or "add"
        Curve of the verdict (``runs``): ``"remove"`` is the membership test itself
        (in-scores from :math:`P`, with the record); ``None`` (default) the worst case
        over both directions, valid for any attack.
    guesses : sequence of int, optional
        ``one-run``: the total numbers of guesses tried (each split evenly between
        "in" and "out"; default 1%, 2%, 5%, 10%, 20%, 50% and 100% of the canaries),
        Bonferroni over them.
    curve : TradeoffCurve, optional
        The accountant's certified curve, if already computed (``tradeoff_curve``; it is
        evaluated at any fpr, so one curve serves many audits).
    """

    scores_in: Any
    scores_out: Any
    accountant: Any = None
    delta: float = 1e-5
    confidence: float = 0.95
    mode: str = "runs"
    direction: Optional[str] = None
    guesses: Optional[Sequence[int]] = None
    curve: Any = None

    def run(self) -> AuditResult:
        s_in = _check_scores("scores_in", self.scores_in)
        s_out = _check_scores("scores_out", self.scores_out)
        if not 0.0 < self.confidence < 1.0:
            raise ValueError(f"confidence must lie in (0, 1), got {self.confidence!r}; "
                             "typical 0.95")
        if not 0.0 <= self.delta < 1.0:
            raise ValueError(f"delta must lie in [0, 1), got {self.delta!r}; typical 1e-5")
        if self.mode not in ("runs", "one-run"):
            raise ValueError(f"mode must be 'runs' or 'one-run', got {self.mode!r}")
        if self.mode == "runs":
            return self._runs(s_in, s_out)
        return self._one_run(s_in, s_out)

    # -- helpers ----------------------------------------------------------------------
    def _curve(self) -> Any:
        if self.curve is not None:
            return self.curve
        return tradeoff_curve(self.accountant, None, self.direction)

    def _certified(self) -> Tuple[float, float]:
        """(certified upper epsilon at delta, the accountant's confidence)."""
        acc = self.accountant
        if acc is None:
            return math.nan, 1.0
        if self.delta <= 0.0:
            return math.inf, 1.0
        iv = acc.epsilon(self.delta)
        return float(iv.upper), float(iv.confidence)

    def _verdict(self, contradicted: bool) -> Tuple[Optional[bool], str]:
        if self.accountant is None:
            return None, NOT_COMPARED
        return (not contradicted), (LEAKS if contradicted else CONSISTENT)

    def _runs(self, s_in: np.ndarray, s_out: np.ndarray) -> AuditResult:
        sig = 1.0 - self.confidence
        m_out, m_in = s_out.size, s_in.size
        ranks = _ranks(m_out)
        a = sig / (2 * len(ranks))
        out_sorted = np.sort(s_out)[::-1]
        in_sorted = np.sort(s_in)
        curve = None
        pts = []
        for k in ranks:
            t = float(out_sorted[k - 1])
            fp = int(np.sum(s_out > t))
            tp = int(in_sorted.size - np.searchsorted(in_sorted, t, side="right"))
            fpr_up = clopper_pearson(k - 1, m_out, a, "upper")
            tpr_low = clopper_pearson(tp, m_in, a, "lower")
            pts.append([t, fp, tp, fpr_up, tpr_low])
        cu = [math.nan] * len(pts)
        if self.accountant is not None:
            curve = self._curve()
            cu = list(curve.upper_at([p[3] for p in pts]))
        points = tuple(AuditPoint(t, fp, m_out, tp, m_in, fp / m_out, tp / m_in, fu, tl,
                                  float(c), bool(tl > c) if math.isfinite(c) else False)
                       for (t, fp, tp, fu, tl), c in zip(pts, cu))
        eps_low = max((_eps_from_point(p.fpr_upper, p.tpr_lower, self.delta) for p in points),
                      default=0.0)
        eps_up, acc_conf = self._certified()
        contradicted = any(p.violates for p in points) or (
            math.isfinite(eps_up) and eps_low > eps_up)
        ok, verdict = self._verdict(contradicted)
        details = {"ranks": list(ranks), "per_bound_significance": a,
                   "accountant_confidence": acc_conf,
                   "curve_certification": None if curve is None else curve.certification}
        return AuditResult(eps_low, eps_up, self.delta, points, ok, verdict,
                           self.confidence, "runs", details)

    def _one_run(self, s_in: np.ndarray, s_out: np.ndarray) -> AuditResult:
        sig = 1.0 - self.confidence
        scores = np.concatenate([s_in, s_out])
        member = np.concatenate([np.ones(s_in.size, bool), np.zeros(s_out.size, bool)])
        m = scores.size
        order = np.argsort(scores, kind="stable")
        guesses = sorted({int(g) for g in (self.guesses or
                          [max(2, int(round(f * m))) for f in
                           (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0)])})
        if any(g < 2 or g > m for g in guesses):
            raise ValueError(f"guesses must lie in [2, {m}] (the number of canaries), got "
                             f"{guesses}")
        a = sig / len(guesses)
        inv = None
        if self.accountant is not None:
            inv = self._curve().inverse_upper
        eps_low, rejected, rows = 0.0, False, []
        for r in guesses:
            k_minus = r // 2
            k_plus = r - k_minus
            top = order[m - k_plus:]
            bottom = order[:k_minus]
            v = int(member[top].sum() + (~member[bottom]).sum())
            e = _one_run_epsilon(m, r, v, a, self.delta)
            rej = bool(inv is not None and _fdp_rejects(m, r, v, a, inv))
            rows.append({"guesses": r, "correct": v, "epsilon_lower": e, "fdp_rejects": rej})
            eps_low = max(eps_low, e)
            rejected = rejected or rej
        eps_up, acc_conf = self._certified()
        contradicted = rejected or (math.isfinite(eps_up) and eps_low > eps_up)
        ok, verdict = self._verdict(contradicted)
        details = {"canaries": m, "tests": rows, "per_test_significance": a,
                   "accountant_confidence": acc_conf}
        return AuditResult(eps_low, eps_up, self.delta, (), ok, verdict, self.confidence,
                           "one-run", details)


def audit(scores_in: Any, scores_out: Any, accountant: Any = None, **kwargs: Any
          ) -> AuditResult:
    """Audit canary scores against an accountant's certified curve: ``Audit(scores_in,
    scores_out, accountant, **kwargs).run()`` (see :class:`Audit`)."""
    return Audit(scores_in, scores_out, accountant, **kwargs).run()
