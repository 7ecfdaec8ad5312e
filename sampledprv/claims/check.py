r"""Check a stated privacy guarantee against the mechanism: :func:`check_claim`.

A *claim* is what a library states about its mechanism: Renyi DP
(:math:`D_\alpha \le \varepsilon(\alpha)` at some orders), zCDP (:math:`D_\alpha \le
\rho\alpha` for every :math:`\alpha > 1`), or :math:`(\varepsilon, \delta)`-DP (pure DP
when :math:`\delta = 0`).  The checker computes, for every claimed point and both
directions of the neighbouring pair, a **certified lower bound** on the mechanism's true
value and compares it with the claim:

* built-in specs and :class:`~sampledprv.FinitePair` (``certification="exact"``): the
  Renyi divergence of the loss-quantized pair (:mod:`sampledprv.rdp.lower`; exact for
  finite pairs) and, as upper end, :func:`sampledprv.rdp.renyi_divergence` (or the exact
  atomic sum); :math:`\delta(\varepsilon)` from the analytic accountant's interval;
* :class:`~sampledprv.LogDensityPair`, :class:`~sampledprv.PrivacyLossSampler`, or a
  spec with ``method="sampled"`` (``certification="sampled"``): i.i.d. draws of the
  privacy loss, the empirical-Bernstein lower bound on a truncated moment
  (:func:`sampledprv.rdp.lower.sampled_moment_lower`) and the lower end of
  :class:`~sampledprv.SampledAccountant`; all bounds hold together with probability at
  least ``1 - alpha`` (union bound over orders, directions and points).

Verdicts per point: ``"refuted"`` when the lower bound exceeds the claim (certain for
exact checks, with confidence ``1 - alpha`` for sampled ones); ``"consistent"`` when the
computation supports the claim (exact: the certified upper end is below it, to
floating-point resolution; sampled: the point estimate is below it);
``"inconclusive: more samples would decide"`` (sampled: the estimate exceeds the claim
but the lower bound does not); ``"inconclusive: the certified bracket contains the
claim"`` (exact, when the bracket is wider than rounding, e.g. far tails).

Derivations: design notes, "Claim checks".
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, Dict, Mapping, Optional, Sequence, Tuple

import numpy as np

from ..core import validation as v

from ..analytic import Accountant
from ..mechanisms import Mechanism
from ..mechanisms.laws import loss_pair
from ..mechanisms.registry import family_of
from ..mechanisms.relations import resolve_bounds
from ..rdp.divergence import renyi_divergence
from ..rdp.lower import atomic_log_moment_upper, pair_log_moment_lower, sampled_moment_lower
from ..sampled import SampledAccountant
from ..sampled.histograms._numpy_histogram import numpy_loss_sampler

__all__ = ["ClaimPoint", "ClaimResult", "check_claim", "DEFAULT_CLAIM_ORDERS", "REFUTED",
           "CONSISTENT", "INCONCLUSIVE_SAMPLES", "INCONCLUSIVE_BRACKET"]

REFUTED = "refuted"
CONSISTENT = "consistent"
INCONCLUSIVE_SAMPLES = "inconclusive: more samples would decide"
INCONCLUSIVE_BRACKET = "inconclusive: the certified bracket contains the claim"

#: orders at which a zCDP claim (or a callable RDP claim) is checked by default
DEFAULT_CLAIM_ORDERS = (1.25, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 12.0, 16.0, 20.0,
                        32.0, 64.0)
#: relative floating-point resolution of the exact checks (ten times the outward rounding
#: of the library's upper bounds): a claim within it of the bound is "consistent"
RESOLUTION = 1e-10


@dataclass(frozen=True)
class ClaimPoint:
    """One claimed point and what the mechanism shows there.

    Attributes
    ----------
    quantity : {"renyi", "delta"}
        ``"renyi"``: the claim bounds :math:`D_\\alpha` (nats) at ``order``;
        ``"delta"``: it bounds :math:`\\delta(\\varepsilon)` at ``epsilon``.
    order, epsilon : float or None
        Where the claim is checked.
    claimed : float
        The claimed bound.
    lower : float
        Certified lower bound on the mechanism's value (maximum over directions).
    estimate : float
        Best estimate (exact value for finite pairs, plug-in for sampled checks).
    upper : float
        Certified upper bound (``inf`` when none: sampled checks).
    direction : str
        The direction whose lower bound is reported (``"remove"``, ``"add"``).
    verdict : str
        See the module docstring.
    """

    quantity: str
    order: Optional[float]
    epsilon: Optional[float]
    claimed: float
    lower: float
    estimate: float
    upper: float
    direction: str
    verdict: str

    def as_dict(self) -> dict:
        return {k: getattr(self, k) for k in ("quantity", "order", "epsilon", "claimed",
                                              "lower", "estimate", "upper", "direction",
                                              "verdict")}


@dataclass(frozen=True)
class ClaimResult:
    """The outcome of :func:`check_claim`.

    Attributes
    ----------
    mechanism : str
        What was checked.
    claim : str
        The claim, in words.
    points : tuple of ClaimPoint
    certification : {"exact", "sampled"}
    confidence : float
        1 for exact checks, ``1 - alpha`` for sampled ones (all points together).
    n_samples : int or None
        Draws per direction (sampled checks).
    """

    mechanism: str
    claim: str
    points: Tuple[ClaimPoint, ...]
    certification: str
    confidence: float
    n_samples: Optional[int] = None

    @property
    def refuted(self) -> bool:
        """True when some point is refuted."""
        return any(p.verdict == REFUTED for p in self.points)

    @property
    def refutations(self) -> Tuple[ClaimPoint, ...]:
        return tuple(p for p in self.points if p.verdict == REFUTED)

    @property
    def verdict(self) -> str:
        """``"refuted"`` if any point is, else an inconclusive verdict if any point has
        one, else ``"consistent"``."""
        if self.refuted:
            return REFUTED
        for p in self.points:
            if p.verdict != CONSISTENT:
                return p.verdict
        return CONSISTENT

    def point(self, order: Optional[float] = None,
              epsilon: Optional[float] = None) -> ClaimPoint:
        """The point at a Renyi ``order`` or at ``epsilon``."""
        for p in self.points:
            if (order is not None and p.order == order) or \
                    (epsilon is not None and p.epsilon == epsilon):
                return p
        raise KeyError(f"no claimed point at order={order!r}, epsilon={epsilon!r}")

    def as_dict(self) -> dict:
        return {"mechanism": self.mechanism, "claim": self.claim, "verdict": self.verdict,
                "certification": self.certification, "confidence": self.confidence,
                "n_samples": self.n_samples, "points": [p.as_dict() for p in self.points]}

    def to_json(self) -> str:
        return json.dumps(self.as_dict(), indent=2, default=float)

    def __str__(self) -> str:
        head = (f"claim {self.claim} for {self.mechanism}: {self.verdict} "
                f"({self.certification}, confidence {self.confidence:g})")
        lines = [head]
        for p in self.points:
            where = f"D_{p.order:g}" if p.quantity == "renyi" else f"delta({p.epsilon:g})"
            lines.append(f"  {where}: mechanism >= {p.lower:.6g} ({p.direction}), estimate "
                         f"{p.estimate:.6g}, upper {p.upper:.6g}; claimed {p.claimed:.6g}: "
                         f"{p.verdict}")
        return "\n".join(lines)


# ---- claims ----------------------------------------------------------------------------

def _renyi_claims(rdp: Any, zcdp: Any, orders: Optional[Sequence[float]]
                  ) -> Tuple[Dict[float, float], str]:
    """``{order: claimed D_order}`` and a description."""
    out: Dict[float, float] = {}
    words = []
    grid = tuple(orders) if orders is not None else DEFAULT_CLAIM_ORDERS
    for a in grid:
        a = v._as_float("orders", a)
        if not 1.0 < a < math.inf:
            raise ValueError(f"orders must be finite numbers > 1, got {a!r}")
    if zcdp is not None:
        rho = v.nonnegative("zcdp", zcdp)
        words.append(f"rho={rho:g} zCDP")
        for a in grid:
            out[float(a)] = rho * float(a)
    if rdp is not None:
        if callable(rdp):
            items = [(a, rdp(a)) for a in grid]
        elif isinstance(rdp, Mapping):
            items = list(rdp.items())
        else:
            try:
                items = [(a, e) for a, e in rdp]
            except (TypeError, ValueError):
                raise ValueError("rdp must be a mapping {order: epsilon}, a sequence of "
                                 "(order, epsilon) pairs or a callable order -> epsilon, got "
                                 f"{rdp!r}") from None
        if not items:
            raise ValueError("rdp is empty: give at least one (order, epsilon)")
        for a, e in items:
            a = v._as_float("rdp order", a)
            if not 1.0 < a < math.inf:
                raise ValueError(f"rdp orders must be finite numbers > 1, got {a!r}")
            e = v.nonnegative(f"rdp epsilon at order {a:g}", e)
            out[a] = min(out.get(a, math.inf), e)
        words.append("RDP " + ", ".join(f"D_{a:g}<={e:.6g}" for a, e in sorted(items)[:4])
                     + (", ..." if len(items) > 4 else ""))
    return dict(sorted(out.items())), " and ".join(words)


def _dp_claims(epsilon: Any, delta: Any) -> Tuple[Tuple[Tuple[float, float], ...], str]:
    if epsilon is None:
        if delta is not None:
            raise ValueError("delta was given without epsilon: an (epsilon, delta) claim "
                             "needs both (delta defaults to 0, pure DP)")
        return (), ""
    eps = np.atleast_1d(np.asarray(epsilon, dtype=np.float64))
    dl = np.atleast_1d(np.asarray(0.0 if delta is None else delta, dtype=np.float64))
    if dl.size == 1:
        dl = np.full(eps.size, float(dl[0]))
    elif eps.size == 1:
        eps = np.full(dl.size, float(eps[0]))
    if dl.size != eps.size:
        raise ValueError(f"epsilon and delta must have the same length (or one of them one "
                         f"value), got {eps.size} and {dl.size}")
    pts = []
    for e, d in zip(eps, dl):
        e = v.nonnegative("epsilon", float(e))
        d = v.in_interval("delta", float(d), 0.0, 1.0, low_open=False, high_open=True)
        pts.append((e, d))
    words = ", ".join(f"({e:g}, {d:g})-DP" if d > 0 else f"{e:g}-DP (pure)" for e, d in pts)
    return tuple(pts), words


# ---- the mechanism's side --------------------------------------------------------------

def _is_spec(mech: Any) -> bool:
    return isinstance(mech, Mechanism)


def _sampled_only(spec: Any) -> bool:
    """True for registered specs whose loss has no closed form (batch samplers)."""
    try:
        return bool(family_of(spec).extras.get("sampled_only"))
    except TypeError:
        return False


def _exact_renyi(spec: Any, order: float, upper_spec: Any = None
                 ) -> Dict[str, Tuple[float, float, float]]:
    """``direction -> (lower, estimate, upper)`` of ``D_order``: the lower end from the
    attained pair ``spec``, the upper end from ``upper_spec`` (default ``spec``)."""

    law_p, law_q = loss_pair(spec)
    laws = {"remove": (law_p, law_q), "add": (law_q.negated(), law_p.negated())}
    out = {}
    for d, (lp, lq) in laws.items():
        lm = pair_log_moment_lower(lp, lq, order)
        lower = max(0.0, lm / (order - 1.0))
        upper = math.inf
        if lp.cont_mass == 0 and lq.cont_mass == 0 and lp.mass_defect == 0 \
                and lq.mass_defect == 0:
            upper = max(0.0, atomic_log_moment_upper(lp, lq, order) / (order - 1.0))
        try:
            upper = min(upper, renyi_divergence(upper_spec or spec, order, d))
        except ValueError:
            pass
        out[d] = (lower, lower, upper)
    return out


def _exact_delta(spec: Any, eps: float, relation: object) -> Tuple[float, float, float, str]:
    acc = Accountant(eps_error=1e-3, delta_error=1e-12, neighbouring=relation).compose(spec)
    iv_r, iv_a = acc.delta(eps, "remove"), acc.delta(eps, "add")
    best = iv_r if iv_r.lower >= iv_a.lower else iv_a
    return (best.lower, max(0.0, iv_r.estimate, iv_a.estimate), max(iv_r.upper, iv_a.upper),
            "remove" if best is iv_r else "add")


def _sampled_losses(mech: Any, n: int, seed: Any) -> Dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    dirs = ("remove",) if getattr(mech, "symmetric", False) else ("remove", "add")
    out = {}
    for d, child in zip(dirs, rng.spawn(len(dirs))):
        try:
            f = numpy_loss_sampler(mech, d)
        except TypeError:
            raise ValueError(f"mechanism must be a sampledprv spec, FinitePair, LogDensityPair "
                             f"or PrivacyLossSampler, got {mech!r}") from None
        chunks, left = [], n
        while left > 0:
            k = min(left, 1 << 20)
            chunks.append(np.asarray(f(child, k), dtype=np.float64))
            left -= k
        out[d] = np.concatenate(chunks)
    return out


def _verdict_exact(lower: float, upper: float, claimed: float) -> str:
    tol = RESOLUTION * max(1.0, abs(claimed))
    if lower > claimed + tol:
        return REFUTED
    if upper <= claimed + tol:
        return CONSISTENT
    return INCONCLUSIVE_BRACKET


def _verdict_sampled(lower: float, estimate: float, claimed: float) -> str:
    if lower > claimed:
        return REFUTED
    if estimate > claimed:
        return INCONCLUSIVE_SAMPLES
    return CONSISTENT


def check_claim(mechanism: Any, *, rdp: Any = None, zcdp: Optional[float] = None,
                epsilon: Any = None, delta: Any = None,
                orders: Optional[Sequence[float]] = None, alpha: float = 0.05,
                method: str = "auto", n_samples: int = 10**6, seed: Any = 0,
                neighbouring: object = "add_remove") -> ClaimResult:
    r"""Check a stated privacy guarantee of ``mechanism`` (module docstring).

    Parameters
    ----------
    mechanism : Mechanism, FinitePair, LogDensityPair or PrivacyLossSampler
        One run of the mechanism (a built-in spec is taken in its worst case under
        ``neighbouring``).
    rdp : mapping, sequence of pairs or callable, optional
        Claimed Renyi DP: ``{order: epsilon}``, ``[(order, epsilon), ...]`` or
        ``epsilon(order)`` (evaluated at ``orders``); nats.
    zcdp : float, optional
        Claimed :math:`\rho`-zCDP: :math:`D_\alpha \le \rho\alpha`, checked at ``orders``.
    epsilon, delta : float or sequence, optional
        Claimed :math:`(\varepsilon, \delta)`-DP points (``delta`` defaults to 0: pure DP).
    orders : sequence of float, optional
        Orders at which ``zcdp`` and a callable ``rdp`` are checked (default
        :data:`DEFAULT_CLAIM_ORDERS`).
    alpha : float
        Failure probability of the sampled bounds, all points together.
    method : {"auto", "exact", "sampled"}
        ``"auto"``: exact for specs with a closed-form law, sampled otherwise (user
        inputs, batch samplers); :attr:`ClaimResult.certification` says which ran.
    n_samples : int
        Draws per direction for sampled checks.
    seed : int or SeedSequence
        Seed of the sampled checks.
    neighbouring : {"add_remove", "substitute"}
        Relation under which a built-in spec is resolved.

    Returns
    -------
    ClaimResult

    Raises
    ------
    ValueError
        No claim given, bad claim values, or ``method="exact"`` for a mechanism without
        an exact law.
    """

    claims_r, words_r = _renyi_claims(rdp, zcdp, orders)
    claims_dp, words_dp = _dp_claims(epsilon, delta)
    if not claims_r and not claims_dp:
        raise ValueError("no claim to check: give rdp=, zcdp= or epsilon= (with delta=)")
    alpha = v.in_interval("alpha", alpha, 0.0, 1.0, low_open=True, high_open=True)
    if method not in ("auto", "exact", "sampled"):
        raise ValueError(f"method must be 'auto', 'exact' or 'sampled', got {method!r}")
    spec = _is_spec(mechanism)
    if method == "exact" and not spec:
        raise ValueError(f"method='exact' needs a built-in spec or FinitePair, got "
                         f"{type(mechanism).__name__}; use method='sampled'")
    upper_spec, resolved = resolve_bounds(mechanism, neighbouring) if spec else \
        (mechanism, mechanism)
    sampled = method == "sampled" or not spec or \
        (method == "auto" and _sampled_only(resolved))
    if method == "exact" and _sampled_only(resolved):
        raise ValueError(f"method='exact': {type(mechanism).__name__} has no closed-form "
                         "privacy-loss law (its loss is only sampled); use method='sampled'")
    claim_words = " and ".join(w for w in (words_r, words_dp) if w)
    label = repr(mechanism) if spec else str(getattr(mechanism, "name", type(mechanism).__name__))
    points = []
    if not sampled:
        for a, c in claims_r.items():
            per = _exact_renyi(resolved, a, upper_spec)
            d = max(per, key=lambda k: per[k][0])
            lo, up = per[d][0], max(x[2] for x in per.values())
            est = max(x[1] for x in per.values())
            points.append(ClaimPoint("renyi", a, None, c, lo, est, up, d,
                                     _verdict_exact(lo, up, c)))
        for e, dl in claims_dp:
            lo, est, up, d = _exact_delta(mechanism, e, neighbouring)
            points.append(ClaimPoint("delta", None, e, dl, lo, est, up, d,
                                     _verdict_exact(lo, up, dl)))
        return ClaimResult(label, claim_words, tuple(points), "exact", 1.0)

    n = v.positive_int("n_samples", n_samples)
    if n < 100:
        raise ValueError(f"n_samples must be at least 100 for a sampled check, got {n}")
    ss = np.random.SeedSequence(seed if isinstance(seed, int) else None) \
        if not isinstance(seed, np.random.SeedSequence) else seed
    s_rdp, s_dp = ss.spawn(2)
    parts = (1 if claims_r else 0) + (1 if claims_dp else 0)
    a_part = alpha / parts
    losses = _sampled_losses(resolved, n, s_rdp)
    if claims_r:
        beta = a_part / (len(claims_r) * len(losses))
        for a, c in claims_r.items():
            best = (-math.inf, "remove")
            est = -math.inf
            for d, y in losses.items():
                lm, e = sampled_moment_lower(y, a - 1.0, beta, (a - 1.0) * c)
                lo = max(0.0, lm / (a - 1.0))
                if lo > best[0]:
                    best = (lo, d)
                est = max(est, max(0.0, e / (a - 1.0)))
            points.append(ClaimPoint("renyi", a, None, c, best[0], est, math.inf, best[1],
                                     _verdict_sampled(best[0], est, c)))
    if claims_dp:
        seed_dp = int(s_dp.generate_state(1)[0])
        acc = SampledAccountant(n, alpha=a_part / len(claims_dp), seed=seed_dp,
                                tail_bounds=False, progress=False)
        acc.compose(resolved)
        for e, dl in claims_dp:
            iv_r = acc.delta(e, "remove")
            iv_a = iv_r if getattr(resolved, "symmetric", False) else acc.delta(e, "add")
            best = iv_r if iv_r.lower >= iv_a.lower else iv_a
            # plug-in estimate from the raw draws: mean of (1 - e^{eps - Y})_+
            est = max(float(np.mean(-np.expm1(np.minimum(e - y, 0.0))))
                      for y in losses.values())
            points.append(ClaimPoint("delta", None, e, dl, best.lower, est,
                                     max(iv_r.upper, iv_a.upper),
                                     "remove" if best is iv_r else "add",
                                     _verdict_sampled(best.lower, est, dl)))
    return ClaimResult(label, claim_words, tuple(points), "sampled", 1.0 - alpha,
                       n_samples=n)
