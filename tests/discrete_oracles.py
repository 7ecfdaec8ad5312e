"""Exact privacy curves of discrete mechanisms (log-space sums), and the bracket check
the discrete-mechanism tests share."""

from __future__ import annotations

import math
from typing import Callable, Iterable

import numpy as np
from scipy import special

DELTAS = (1e-12, 1e-9, 1e-6, 1e-4, 1e-2)


def deltas_for(count: int) -> tuple:
    """The deltas checked for ``count`` compositions: all of them, down to 1e-12 at
    every count.  (The engine's rounding of tabulated masses is a relative error, a
    factor (1 + r)^count on the curve, so it no longer limits delta to about
    count * 1e-14; few-atom pairs are composed exactly.)"""
    return DELTAS


def hockey_stick(log_p: np.ndarray, log_q: np.ndarray, eps: float) -> float:
    """sum_o (p(o) - e^eps q(o))_+ for two laws given by log-masses (-inf allowed)."""
    log_p = np.asarray(log_p, dtype=np.float64)
    log_q = np.asarray(log_q, dtype=np.float64)
    live = np.isfinite(log_p)
    lp, lq = log_p[live], log_q[live]
    with np.errstate(invalid="ignore"):
        loss = lp - lq                      # +inf where q = 0
    pos = loss > eps
    terms = np.exp(lp[pos]) * -np.expm1(np.minimum(eps - loss[pos], 0.0))
    return math.fsum(terms.tolist())


def both_directions(log_p, log_q) -> Callable[[float], float]:
    """delta(eps) = max of the two hockey-stick divergences."""
    return lambda e: max(hockey_stick(log_p, log_q, e), hockey_stick(log_q, log_p, e))


def lattice_delta(values: np.ndarray, log_masses: np.ndarray, eps: float) -> float:
    """E[(1 - e^{eps - L})_+] for a loss law given by atoms (log-masses)."""
    values = np.asarray(values, dtype=np.float64)
    pos = values > eps
    terms = np.exp(np.asarray(log_masses)[pos]) * -np.expm1(eps - values[pos])
    return math.fsum(terms.tolist())


def log_binom_pmf(n: int, p: float) -> np.ndarray:
    k = np.arange(n + 1, dtype=np.float64)
    return (special.gammaln(n + 1.0) - special.gammaln(k + 1.0) - special.gammaln(n - k + 1.0)
            + k * math.log(p) + (n - k) * math.log1p(-p))


def product_law(log_p: np.ndarray, log_q: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Log-masses of the k-fold product pair on all outcome tuples (small laws only)."""
    lp, lq = np.asarray(log_p, float), np.asarray(log_q, float)
    out_p, out_q = lp.copy(), lq.copy()
    for _ in range(k - 1):
        out_p = (out_p[:, None] + lp[None, :]).ravel()
        out_q = (out_q[:, None] + lq[None, :]).ravel()
    return out_p, out_q


def assert_brackets(acc, delta_of_eps: Callable[[float], float],
                    deltas: Iterable[float] | None = None, eps_values: Iterable[float] = (),
                    rel: float = 1e-9, direction=None) -> None:
    """The accountant's epsilon(delta) and delta(epsilon) intervals contain the truth.

    epsilon: since the exact delta(eps) decreases, eps* lies in [lower, upper] iff
    delta(upper) <= delta <= delta(lower) (the lower end 0 always holds)."""
    if deltas is None:
        deltas = deltas_for(sum(c for _, c in acc.composition))
    for d in deltas:
        iv = acc.epsilon(d, direction=direction)
        assert delta_of_eps(iv.upper) <= d * (1 + rel), (d, iv, delta_of_eps(iv.upper))
        if iv.lower > 0:
            assert delta_of_eps(iv.lower) >= d * (1 - rel), (d, iv, delta_of_eps(iv.lower))
    for e in eps_values:
        iv = acc.delta(e, direction=direction)
        truth = delta_of_eps(e)
        assert iv.lower * (1 - rel) <= truth <= iv.upper * (1 + rel) + 1e-300, (e, iv, truth)


def count_vectors(k: int, m: int) -> np.ndarray:
    """All vectors of ``m`` non-negative integers summing to ``k``, as rows."""
    if m == 1:
        return np.array([[k]], dtype=np.int64)
    if m == 2:
        first = np.arange(k + 1, dtype=np.int64)
        return np.stack([first, k - first], axis=1)
    rows = [np.concatenate([np.full((r.shape[0], 1), first, np.int64), r], axis=1)
            for first in range(k + 1) for r in (count_vectors(k - first, m - 1),)]
    return np.concatenate(rows, axis=0)


def multinomial_delta(log_p, log_q, k: int) -> Callable[[float], float]:
    """Exact ``delta(eps)`` of ``D(P^k || Q^k)`` for a pair on a small outcome set.

    The loss of an outcome tuple depends only on how often each outcome occurs, so the
    k-fold product is summed over count vectors ``v`` (multinomial masses in log space,
    ``C(k + m - 1, m - 1)`` terms for ``m`` outcomes that both laws reach) instead of the
    ``m^k`` tuples; a tuple with an outcome only ``P`` reaches has infinite loss, with
    total mass ``1 - (1 - p_only)^k``.  Independent of the library: outcomes are not
    merged by loss value."""
    lp = np.asarray(log_p, dtype=np.float64)
    lq = np.asarray(log_q, dtype=np.float64)
    both = np.isfinite(lp) & np.isfinite(lq)
    p_only = math.fsum(np.exp(lp[np.isfinite(lp) & ~both]).tolist())
    v = count_vectors(k, int(both.sum()))
    loss = v @ (lp[both] - lq[both])
    log_mass = (special.gammaln(k + 1.0) - special.gammaln(v + 1.0).sum(axis=1)
                + v @ lp[both])
    at_inf = -math.expm1(k * math.log1p(-p_only)) if p_only < 1 else 1.0

    def delta(eps: float) -> float:
        if eps == math.inf:
            return at_inf
        pos = loss > eps
        terms = np.exp(log_mass[pos]) * -np.expm1(eps - loss[pos])
        return at_inf + math.fsum(terms.tolist())
    return delta
