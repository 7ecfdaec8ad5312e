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
``math.inf`` where none is known), evaluated on :data:`~.tail_sources.DEFAULT_ORDERS`, or as a table
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

Modules: this one holds :class:`TailBound`, the bound of one direction and the checks
of its premises against the samples; :mod:`.tail_inputs` validates what users supply
(:class:`~.tail_inputs.RenyiTable`, :func:`~.tail_inputs.as_renyi`,
:func:`~.tail_inputs.as_loss_range`); :mod:`.tail_sources` combines a mechanism's own
information, the caller's and a built-in spec's exact divergences into a
:class:`TailBound` (:func:`~.tail_sources.tail_bound`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...engine import LatticePMF

__all__ = ["TailBound", "RANGE_RTOL"]

#: Relative tolerance of the loss-range check (float rounding of ``log p - log q``).
RANGE_RTOL = 1e-9



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
        :math:`\ge 1 - level` (:func:`~.envelopes.envelope`).  On that
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
