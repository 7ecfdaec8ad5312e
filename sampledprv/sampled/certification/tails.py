r"""What is known about a privacy loss beyond its samples: Renyi bounds and loss ranges.

A histogram of ``n`` draws says nothing about the tail it has not seen; the envelope
method (:mod:`sampledprv.sampled.certification.envelopes`) must put a Clopper-Pearson mass of about
:math:`\ln(1/a)/n` beyond its last threshold.  Two kinds of side information bound
that tail deterministically:

Renyi bounds.  For the "remove" loss :math:`Y = \log p(w)/q(w)`, :math:`w \sim P`,

.. math:: E\big[e^{(\lambda - 1) Y}\big] = \int p^\lambda q^{1-\lambda}
          = e^{(\lambda - 1) D_\lambda(P \| Q)},

and for the "add" loss :math:`\log q/p` under :math:`Q` the same with
:math:`D_\lambda(Q \| P)`.  An upper bound :math:`D_\lambda \le \bar D_\lambda` is
therefore a bound on the moment generating function at :math:`s = \lambda - 1 > 0`,
and Markov's inequality gives the Chernoff bound

.. math:: P[Y \ge t] \le \min_{\lambda} \exp\big((\lambda - 1)(\bar D_\lambda - t)\big)

for every ``t`` (the minimum over the orders available).  A Renyi bound is supplied as
a callable ``renyi(order, direction) -> float`` (an upper bound on :math:`D_\lambda`,
``math.inf`` where none is known), evaluated on :data:`DEFAULT_ORDERS`, or as a table
``{order: value}`` (both directions) or ``{"remove": {...}, "add": {...}}``.  An order
at which the callable raises :class:`OverflowError` is skipped (no bound there); any
other exception propagates.  Built-in specs supply theirs through
:func:`sampledprv.rdp.renyi_divergence` (orders it refuses with :class:`ValueError` are
skipped).

Loss ranges.  ``loss_range=(lo, hi)`` declares :math:`lo \le Y \le hi` almost surely
(pure-DP mechanisms, randomized response); then :math:`P[Y \ge t] = 0` for
:math:`t > hi`.  Built-in specs whose loss is bounded (Laplace, randomized response,
pure DP and their subsampled versions) supply the support of their exact law.

Both are *premises*: a certificate that uses them holds with probability
:math:`1 - \alpha` only if they are true.  :meth:`TailBound.check_samples` compares
them with the samples and raises when the samples prove them false (see there).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from numbers import Real
from typing import Any, Callable, Mapping, Optional, Union

import numpy as np

from ...engine import LatticePMF

__all__ = ["DEFAULT_ORDERS", "RenyiTable", "as_renyi", "as_loss_range", "TailBound",
           "tail_bound", "compose_kwargs", "RANGE_RTOL"]

DIRECTIONS = ("remove", "add")

#: Orders at which a callable Renyi bound is evaluated: :math:`\lambda - 1` runs over
#: :math:`2^{j/4}`, :math:`j = -24 \dots 68` (``1/64`` to ``2^17``), rounded to integers
#: above 16 (integer-order closed forms apply there).  Consecutive orders differ by a
#: factor of at most :math:`2^{1/4}`, which costs at most about 1% of the Chernoff
#: exponent of a Gaussian-like tail.
DEFAULT_ORDERS: np.ndarray = np.unique(np.array(
    [1.0 + 2.0 ** (j / 4.0) if 2.0 ** (j / 4.0) < 16 else float(round(1.0 + 2.0 ** (j / 4.0)))
     for j in range(-24, 69)]))

#: Relative tolerance of the loss-range check (float rounding of ``log p - log q``).
RANGE_RTOL = 1e-9

RenyiInput = Union[Callable[[float, str], float], Mapping[Any, Any], "RenyiTable"]


# ---------------------------------------------------------------------------------------
# inputs
# ---------------------------------------------------------------------------------------

def _order(x: Any, where: str) -> float:
    try:
        lam = float(x)
    except (TypeError, ValueError):
        raise ValueError(f"{where}: Renyi order {x!r} is not a number; use orders > 1 "
                         "such as 2, 4, 8") from None
    if not (lam > 1.0 and math.isfinite(lam)):
        raise ValueError(f"{where}: Renyi order {x!r} must be a finite number > 1 (orders "
                         "<= 1 give no tail bound); drop it from the table")
    return lam


def _divergence(x: Any, where: str) -> float:
    if isinstance(x, bool) or not isinstance(x, (Real, str)):
        raise ValueError(f"{where}: Renyi divergence {x!r} must be a number >= 0 (or inf)")
    try:
        d = float(x)
    except ValueError:
        raise ValueError(f"{where}: Renyi divergence {x!r} is not a number") from None
    if math.isnan(d) or d < 0:
        raise ValueError(f"{where}: Renyi divergence {x!r} must be >= 0 (a divergence is "
                         "never negative) or inf where no bound is known")
    return d


@dataclass(frozen=True)
class RenyiTable:
    r"""Upper bounds on Renyi divergences at finitely many orders, per direction.

    Attributes
    ----------
    remove, add : tuple of (order, value)
        :math:`\bar D_\lambda(P\|Q)` ("remove") and :math:`\bar D_\lambda(Q\|P)` ("add"),
        orders ``> 1`` in increasing order (nats).
    """

    remove: tuple[tuple[float, float], ...]
    add: tuple[tuple[float, float], ...]

    @classmethod
    def from_mapping(cls, table: Mapping[Any, Any]) -> "RenyiTable":
        """``{order: value}`` (both directions) or ``{"remove": {...}, "add": {...}}``.

        Orders may be strings (TOML/JSON keys), ``"inf"`` values are allowed."""
        if not isinstance(table, Mapping) or not table:
            raise ValueError(f"renyi table must be a non-empty mapping {{order: divergence}} "
                             f"or {{'remove': {{...}}, 'add': {{...}}}}, got {table!r}")
        keys = set(table)
        if keys & set(DIRECTIONS):
            if not keys <= set(DIRECTIONS):
                raise ValueError(f"renyi table mixes directions and orders ({sorted(map(str, keys))}); "
                                 "give either {order: value} for both directions or "
                                 "{'remove': {order: value}, 'add': {order: value}}")
            parts = {d: table.get(d, {}) for d in DIRECTIONS}
        else:
            parts = {d: table for d in DIRECTIONS}
        out = {}
        for d, tab in parts.items():
            if not isinstance(tab, Mapping):
                raise ValueError(f"renyi[{d!r}] must be a mapping {{order: divergence}}, "
                                 f"got {tab!r}")
            rows = {}
            for k, v in tab.items():
                lam = _order(k, f"renyi[{d!r}]")
                rows[lam] = _divergence(v, f"renyi[{d!r}][{k!r}]")
            out[d] = tuple(sorted(rows.items()))
        return cls(out["remove"], out["add"])

    def __call__(self, order: float, direction: str) -> float:
        """The tabulated bound (``inf`` for orders not in the table)."""
        return dict(getattr(self, direction)).get(float(order), math.inf)

    def orders(self, direction: str) -> np.ndarray:
        return np.array([o for o, _ in getattr(self, direction)], dtype=np.float64)


def as_renyi(renyi: Optional[RenyiInput]) -> Optional[Union[Callable, RenyiTable]]:
    """Validate a ``renyi=`` argument: ``None``, a callable or a table (-> RenyiTable)."""
    if renyi is None or isinstance(renyi, RenyiTable):
        return renyi
    if isinstance(renyi, Mapping):
        return RenyiTable.from_mapping(renyi)
    if callable(renyi):
        return renyi
    raise ValueError(f"renyi must be a callable renyi(order, direction) -> float, a table "
                     f"{{order: divergence}} or None, got {renyi!r}")


def as_loss_range(loss_range: Any) -> Optional[tuple]:
    """Validate ``loss_range``: ``None``, ``(lo, hi)`` or ``{"remove": (lo, hi), "add": ...}``.

    Returns ``None`` or ``((lo, hi) for remove, (lo, hi) for add)``."""
    if loss_range is None:
        return None

    def pair(x: Any, where: str) -> tuple[float, float]:
        try:
            lo, hi = (float(v) for v in x)
        except (TypeError, ValueError):
            raise ValueError(f"{where} must be a pair (lo, hi) of numbers with lo < hi, got "
                             f"{x!r}") from None
        if math.isnan(lo) or math.isnan(hi) or not lo < hi or lo == math.inf \
                or hi == -math.inf:
            raise ValueError(f"{where} must be a pair (lo, hi) with lo < hi, got {x!r}")
        return lo, hi
    if isinstance(loss_range, tuple) and len(loss_range) == 2 and \
            all(isinstance(x, tuple) for x in loss_range):      # normalized per direction
        return tuple(pair(x, f"loss_range[{d!r}]") for x, d in zip(loss_range, DIRECTIONS))
    if isinstance(loss_range, Mapping):
        if not set(loss_range) <= set(DIRECTIONS):
            raise ValueError(f"loss_range keys must be 'remove'/'add', got {sorted(loss_range)}")
        full = (-math.inf, math.inf)
        return tuple(pair(loss_range[d], f"loss_range[{d!r}]") if d in loss_range else full
                     for d in DIRECTIONS)
    p = pair(loss_range, "loss_range")
    return (p, p)


# ---------------------------------------------------------------------------------------
# the tail bound of one direction
# ---------------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class TailBound:
    r"""Deterministic upper bound on :math:`P[Y \ge t]` for one direction's loss ``Y``.

    Attributes
    ----------
    orders, divergences : numpy.ndarray
        Orders :math:`\lambda > 1` and finite bounds :math:`\bar D_\lambda` (nats).
    lo, hi : float
        Declared loss range (``-inf``/``inf`` when none).
    source : str
        Where the bound comes from, in words (used in :attr:`Interval.method`).
    """

    orders: np.ndarray
    divergences: np.ndarray
    lo: float = -math.inf
    hi: float = math.inf
    source: str = ""

    @property
    def has_renyi(self) -> bool:
        return self.orders.size > 0

    @property
    def hi_eff(self) -> float:
        """``hi`` widened by the rounding tolerance :data:`RANGE_RTOL`."""
        return self.hi + RANGE_RTOL * max(1.0, abs(self.hi)) if math.isfinite(self.hi) \
            else self.hi

    @property
    def lo_eff(self) -> float:
        return self.lo - RANGE_RTOL * max(1.0, abs(self.lo)) if math.isfinite(self.lo) \
            else self.lo

    def log_sf(self, t: np.ndarray) -> np.ndarray:
        r""":math:`\log` of the bound on :math:`P[Y \ge t]`: the best Chernoff exponent
        :math:`\min(0, \min_\lambda (\lambda-1)(\bar D_\lambda - t))`, ``-inf`` above ``hi``."""
        t = np.asarray(t, dtype=np.float64)
        out = np.zeros(t.shape)
        if self.has_renyi:
            s = self.orders - 1.0
            c = s * self.divergences
            for i in range(0, t.size, 4096):          # (orders x points) in blocks
                blk = t.reshape(-1)[i:i + 4096]
                out.reshape(-1)[i:i + 4096] = np.minimum(
                    0.0, np.min(c[:, None] - s[:, None] * blk[None, :], axis=0))
        out[t > self.hi_eff] = -np.inf
        return out

    def sf(self, t: np.ndarray) -> np.ndarray:
        return np.exp(self.log_sf(t))

    def reach(self, floor: float) -> float:
        r"""A point beyond which the bound is at most ``floor`` (``inf`` if none):
        :math:`\min(hi, \min_\lambda \bar D_\lambda + \ln(1/floor)/(\lambda - 1))`."""
        r = self.hi_eff
        if self.has_renyi:
            s = self.orders - 1.0
            r = min(r, float(np.min(self.divergences + math.log(1.0 / floor) / s)))
        return r

    def check_samples(self, lower: LatticePMF, direction: str, level: float) -> None:
        r"""Raise :class:`ValueError` if the samples prove a claimed divergence false.

        ``lower`` is a stochastic lower envelope of the loss, valid with probability
        :math:`\ge 1 - level` (:func:`sampledprv.sampled.certification.envelopes.envelope`).  On that
        event :math:`E[e^{sY_{low}}] \le E[e^{sY}]` for every :math:`s > 0` at once, so

        .. math:: \underline D_\lambda = \frac{\ln E[e^{(\lambda-1) Y_{low}}]}{\lambda - 1}
                  \le D_\lambda

        is a lower confidence bound on the true divergence at every order
        simultaneously.  If it exceeds the claim :math:`\bar D_\lambda` at some order,
        the claim is false (or an event of probability at most ``level`` occurred): no
        certificate is produced from it.  The check costs no part of the certificate's
        ``alpha`` and cannot raise for a true claim outside that event.
        """
        if not self.has_renyi:
            return
        s = self.orders - 1.0
        claim = s * self.divergences
        if lower.p_inf > 0:
            lam, d = self.orders[0], self.divergences[0]
            raise ValueError(
                f"the {direction} privacy-loss samples contain +inf (outputs impossible "
                f"under the other distribution), so every Renyi divergence of order > 1 is "
                f"infinite in that direction; the supplied bound (for example D_{lam:g} <= "
                f"{d:.6g}) is false. Remove the Renyi bound or fix the mechanism")
        p = lower.probs
        keep = p > 0
        if not keep.any():
            return
        v, lp = lower.values[keep], np.log(p[keep])
        top = float(np.max(v))
        lcb = np.empty(s.size)
        step = max(1, (1 << 21) // v.size)
        for i in range(0, s.size, step):          # log-sum-exp, (orders x points) blocks
            z = lp[None, :] + s[i:i + step, None] * (v - top)[None, :]
            m = np.max(z, axis=1)
            lcb[i:i + step] = s[i:i + step] * top + m + np.log(
                np.sum(np.exp(z - m[:, None]), axis=1))
        tol = 1e-9 * np.maximum(1.0, np.abs(claim))
        bad = np.flatnonzero(lcb > claim + tol)
        if bad.size:
            i = int(bad[np.argmax((lcb - claim)[bad] / s[bad])])
            lam, d, dl = self.orders[i], self.divergences[i], lcb[i] / s[i]
            raise ValueError(
                f"the Renyi bound for the {direction} direction is contradicted by the "
                f"samples: at order {lam:g} the claim is D <= {d:.6g}, but the samples give "
                f"D_{lam:g} >= {dl:.6g} with confidence 1 - {level:.2g} (a lower confidence "
                f"bound on E[exp((order-1) Y)]), so the claim is too small by at least "
                f"{dl - d:.4g} nats. Check the Renyi analysis (its direction, the "
                f"order convention and the sensitivity); no certificate is issued from a "
                f"false premise")

    def check_values(self, y: np.ndarray, name: str, direction: str) -> None:
        """Raise if a sampled loss lies outside ``[lo, hi]`` (rounding tolerance
        :data:`RANGE_RTOL`), naming the range and the sample."""
        if not (math.isfinite(self.lo) or math.isfinite(self.hi)):
            return
        bad = np.flatnonzero((y < self.lo_eff) | (y > self.hi_eff))
        if bad.size:
            i = int(bad[0])
            raise ValueError(
                f"{name} ({direction}) produced the privacy loss {float(y[i])!r} (draw {i}), outside "
                f"the declared loss_range [{self.lo:g}, {self.hi:g}] ({bad.size} of {y.size} "
                "draws); fix the mechanism or declare the range it really has")

    def check_histogram(self, hist: Any, name: str, direction: str) -> None:
        """Raise if a histogram has draws provably outside ``[lo, hi]``: below the window
        or in a bin that lies entirely below ``lo``, above the window or in a bin entirely
        above ``hi``, or at ``-inf``/``+inf`` (names the range and where the draw fell)."""
        lo_r, hi_r = self.lo_eff, self.hi_eff
        where = None
        c = np.asarray(hist.counts)
        edges = hist.lo + hist.h * np.arange(c.size + 1)
        if math.isfinite(lo_r):
            if hist.neg_inf:
                where = "-inf"
            elif hist.below and hist.lo <= lo_r:
                where = f"below {hist.lo:.6g}"
            else:
                j = np.flatnonzero((c > 0) & (edges[1:] <= lo_r))
                if j.size:
                    where = f"in [{edges[j[0]]:.6g}, {edges[j[0] + 1]:.6g})"
        if where is None and math.isfinite(hi_r):
            if hist.pos_inf:
                where = "+inf"
            elif hist.above and hist.hi > hi_r:
                where = f"at or above {hist.hi:.6g}"
            else:
                j = np.flatnonzero((c > 0) & (edges[:-1] > hi_r))
                if j.size:
                    where = f"in [{edges[j[-1]]:.6g}, {edges[j[-1] + 1]:.6g})"
        if where is not None:
            raise ValueError(
                f"{name} ({direction}) produced a privacy-loss sample {where}, outside the "
                f"declared loss_range [{self.lo:g}, {self.hi:g}]; fix the mechanism or "
                "declare the range it really has")


def _evaluate(fn: Callable[[float, str], float], orders: np.ndarray, direction: str,
              what: str, skip_value_error: bool) -> tuple[np.ndarray, np.ndarray]:
    lam, val = [], []
    for o in orders:
        try:
            d = fn(float(o), direction)
        except OverflowError:     # e.g. math.exp of a large order: no bound there
            continue
        except ValueError:
            if skip_value_error:
                continue
            raise
        d = _divergence(d, f"{what}({float(o):g}, {direction!r})")
        if math.isfinite(d):
            lam.append(float(o))
            val.append(d)
    return np.array(lam, dtype=np.float64), np.array(val, dtype=np.float64)


def _merge(parts: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """Pointwise minimum of several tables (each a valid bound)."""
    best: dict[float, float] = {}
    for lam, val in parts:
        for o, d in zip(lam.tolist(), val.tolist()):
            best[o] = min(d, best.get(o, math.inf))
    keys = sorted(best)
    return np.array(keys, dtype=np.float64), np.array([best[k] for k in keys], dtype=np.float64)


def builtin_orders(mech: Any, direction: str) -> np.ndarray:
    r"""The orders of :data:`DEFAULT_ORDERS` worth evaluating for a built-in spec.

    The Chernoff bound at a threshold ``z`` standard deviations above the mean is best at
    :math:`\lambda - 1 \approx z/\sigma` for a Gaussian-like loss (smaller for heavier
    tails); the envelope needs thresholds from the end of the window to where the tail is
    negligible.  With :math:`\sigma` the spread of the exact loss law (its 0.1% and
    99.9% quantiles are :math:`\pm 3.09\sigma` apart for a Gaussian), the orders with
    :math:`\max(1/8, 1/(32\sigma)) \le \lambda - 1 \le 64/\sigma` are kept (the lower
    end leaves room for tails heavier than Gaussian, e.g. subsampled mechanisms):
    certified bounds at orders very close to 1 and beyond :math:`10^4` cost seconds each
    by quadrature or binomial expansion and would not improve the tail.  Only tightness
    depends on this choice, never validity.
    """
    from ...prv import privacy_loss
    try:
        law = privacy_loss(mech, direction)
        lo, hi = float(law.lower_point(1e-3)), float(law.upper_point(1e-3))
    except (TypeError, ValueError):
        return DEFAULT_ORDERS
    sigma = (hi - lo) / 6.18
    if not (math.isfinite(sigma) and sigma > 0):
        return DEFAULT_ORDERS
    s = DEFAULT_ORDERS - 1.0
    keep = (s >= max(0.125, 1.0 / (32.0 * sigma))) & (s <= 64.0 / sigma)
    return DEFAULT_ORDERS[keep] if keep.any() else DEFAULT_ORDERS[-1:]


@functools.lru_cache(maxsize=256)
def _builtin_renyi(mech: Any, direction: str) -> tuple[np.ndarray, np.ndarray]:
    from ...rdp import renyi_divergence
    return _evaluate(lambda o, d: renyi_divergence(mech, o, d), builtin_orders(mech, direction),
                     direction, "sampledprv.rdp.renyi_divergence", skip_value_error=True)


@functools.lru_cache(maxsize=256)
def _builtin_range(mech: Any, direction: str) -> tuple[float, float]:
    from ...prv import privacy_loss
    try:
        law = privacy_loss(mech, direction)
    except (TypeError, ValueError):
        return -math.inf, math.inf
    if law.p_pos_inf > 0 or law.p_neg_inf > 0:
        return -math.inf, math.inf
    lo, hi = law._finite_range()
    return float(lo), float(hi)


def _is_builtin(mech: Any) -> bool:
    from ... import mechanisms as M
    return isinstance(mech, M.Mechanism) and not (hasattr(mech, "loss_sampler")
                                                   or hasattr(mech, "_loss_sampler"))


def tail_bound(mech: Any, direction: str, *, renyi: Optional[RenyiInput] = None,
               loss_range: Any = None, symmetric: bool = False,
               builtin: bool = True) -> Optional[TailBound]:
    r"""The :class:`TailBound` of ``mech``'s loss in ``direction``, or ``None``.

    Sources, combined (pointwise minimum of the divergences, intersection of ranges):
    ``renyi``/``loss_range`` given here, the mechanism's own ``renyi``/``loss_range``
    attributes (:class:`~sampledprv.sampled.LogDensityPair`,
    :class:`~sampledprv.sampled.PrivacyLossSampler`) and, for built-in specs with
    ``builtin=True``, :func:`sampledprv.rdp.renyi_divergence` and the support of the
    exact law.  ``symmetric``: both directions have the law of the remove loss, so the
    bounds given for either direction apply (the smaller is used).
    """
    renyis, ranges, words = [], [], []
    own_r = getattr(mech, "renyi", None) if not _is_builtin(mech) else None
    own_l = getattr(mech, "loss_range", None) if not _is_builtin(mech) else None
    dirs = DIRECTIONS if symmetric else (direction,)
    for src, label in ((as_renyi(renyi), "supplied"), (as_renyi(own_r), "supplied")):
        if src is None:
            continue
        for d in dirs:
            if isinstance(src, RenyiTable):
                renyis.append(_evaluate(src, src.orders(d), d, "renyi", False))
            else:
                renyis.append(_evaluate(src, DEFAULT_ORDERS, d, "renyi", False))
        words.append(f"Renyi bound {label}")
    for src in (as_loss_range(loss_range), as_loss_range(own_l)):
        if src is not None:
            ranges += [src[DIRECTIONS.index(d)] for d in dirs]
            words.append("declared loss range")
    if builtin and _is_builtin(mech):
        b = [_builtin_renyi(mech, d) for d in dirs]
        if any(x[0].size for x in b):
            renyis += b
            words.append("exact Renyi divergence of the built-in spec")
        r = [_builtin_range(mech, d) for d in dirs]
        if all(math.isfinite(x[0]) and math.isfinite(x[1]) for x in r):
            ranges += r
            words.append("support of the exact loss")
    if not renyis and not ranges:
        return None
    lam, val = _merge(renyis) if renyis else (np.zeros(0), np.zeros(0))
    lo = max([x[0] for x in ranges], default=-math.inf)
    hi = min([x[1] for x in ranges], default=math.inf)
    if not lo <= hi:
        raise ValueError(f"the loss ranges given for {mech!r} ({direction}) do not overlap: "
                         f"{ranges}")
    if lam.size == 0 and not (math.isfinite(lo) or math.isfinite(hi)):
        return None
    return TailBound(lam, val, lo, hi, ", ".join(dict.fromkeys(words)))


def compose_kwargs(mech: Any, *, renyi: Optional[RenyiInput] = None, loss_range: Any = None,
                   builtin: bool = True) -> dict:
    """The tail information of ``mech`` as ``renyi``/``loss_range`` keyword arguments of
    :meth:`SampledAccountant.compose` (a table per direction), e.g. to give it to an
    :class:`~sampledprv.sampled.EmpiricalPRV` sampled from ``mech``; ``{}`` if none."""
    symmetric = bool(getattr(mech, "symmetric", False))
    tbs = {d: tail_bound(mech, d, renyi=renyi, loss_range=loss_range, symmetric=symmetric,
                         builtin=builtin) for d in DIRECTIONS}
    out: dict = {}
    if any(tb is not None and tb.has_renyi for tb in tbs.values()):
        out["renyi"] = RenyiTable(*(tuple(zip(tb.orders.tolist(), tb.divergences.tolist()))
                                    if tb is not None else () for tb in tbs.values()))
    if any(tb is not None and (math.isfinite(tb.lo) or math.isfinite(tb.hi))
           for tb in tbs.values()):
        out["loss_range"] = tuple((tb.lo, tb.hi) if tb is not None else (-math.inf, math.inf)
                                  for tb in tbs.values())
    return out
