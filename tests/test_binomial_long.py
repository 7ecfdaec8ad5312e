"""Binomial mechanism against an exact oracle for k = 1 .. 1000 and delta = 1e-12 ..
1e-2, and the rounding terms that make delta = 1e-12 reachable at k = 1000.

The oracle (``discrete_oracles.multinomial_delta``) sums the k-fold product over count
vectors of the outcomes in log space: exact up to a relative 1e-11 for three outcomes
both laws reach (``Binomial(3, p)``: outputs 1, 2, 3), checked below against brute force
(k <= 3) and 40-digit arithmetic (k = 1000)."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

import sampledprv as sp
from discrete_oracles import hockey_stick, multinomial_delta, product_law


def binomial_pair(n: int, p: float):
    """Log-masses of (Z + 1, Z), Z ~ Bin(n, p), on the outputs 0..n+1, from math.comb."""
    lb = np.array([math.log(math.comb(n, i)) + i * math.log(p) + (n - i) * math.log1p(-p)
                   for i in range(n + 1)])
    return np.concatenate([[-np.inf], lb]), np.concatenate([lb, [-np.inf]])


@pytest.mark.parametrize("p", [0.5, 0.2])
@pytest.mark.parametrize("k", [1, 2, 3])
def test_oracle_matches_brute_force(p, k):
    lp, lq = binomial_pair(3, p)
    tp, tq = product_law(lp, lq, k)
    for a, b in ((lp, lq), (lq, lp)):
        fast = multinomial_delta(a, b, k)
        ta, tb = (tp, tq) if a is lp else (tq, tp)
        for eps in (0.0, 0.3, 1.0, 2.5):
            assert fast(eps) == pytest.approx(hockey_stick(ta, tb, eps), rel=1e-12, abs=1e-300)


def _mp_delta(n: int, p: float, k: int, eps: float):
    """40-digit delta(eps) of D(P^k || Q^k) for Binomial(n, p), summed over count vectors
    of the n outputs both laws reach (n = 2 or 3)."""
    mp.mp.dps = 40
    P = mp.mpf(p)
    pm = [mp.binomial(n, i - 1) * P ** (i - 1) * (1 - P) ** (n - i + 1) for i in range(1, n + 1)]
    qm = [mp.binomial(n, i) * P ** i * (1 - P) ** (n - i) for i in range(1, n + 1)]
    loss = [mp.log(a / b) for a, b in zip(pm, qm)]
    lf = [mp.mpf(0)]
    for i in range(1, k + 1):
        lf.append(lf[-1] + mp.log(i))
    lpm = [mp.log(x) for x in pm]
    total = mp.mpf(0)
    rest = [(a, k - a) for a in range(k + 1)] if n == 2 else \
        [(a, b, k - a - b) for a in range(k + 1) for b in range(k + 1 - a)]
    for v in rest:
        s = sum(c * l for c, l in zip(v, loss))
        if s > eps:
            lm = lf[k] - sum(lf[c] for c in v) + sum(c * l for c, l in zip(v, lpm))
            total += mp.exp(lm) * (1 - mp.exp(eps - s))
    return total, 1 - (1 - P ** n) ** k


@pytest.mark.parametrize("n, k, eps", [(3, 100, 355.0), (2, 1000, 3935.0)])
def test_oracle_matches_40_digits(n, k, eps):
    p = 0.01
    finite, at_inf = _mp_delta(n, p, k, eps)
    assert float(finite) > 1e-3 * float(at_inf)          # the sum matters, not just +inf
    fast = multinomial_delta(*binomial_pair(n, p), k)
    assert fast(eps) == pytest.approx(float(finite + at_inf), rel=1e-10)


@pytest.mark.parametrize("delta", [1e-12, 1e-9, 1e-6, 1e-2])
@pytest.mark.parametrize("k", [1, 10, 100, 1000])
def test_binomial_bracketed_up_to_k_1000(k, delta):
    """Binomial(3, p) with k p^3 = delta / 10, so that the remove direction has a finite
    epsilon(delta); the add direction puts (1-p)^3 on +inf (epsilon is infinite)."""
    p = (delta / (10 * k)) ** (1 / 3)
    lp, lq = binomial_pair(3, p)
    remove = multinomial_delta(lp, lq, k)
    acc = sp.Accountant(eps_error=0.02, delta_error=1e-14).compose(sp.Binomial(3, p), k)
    iv = acc.epsilon(delta, direction="remove")
    assert iv.certification == "deterministic"
    assert math.isfinite(iv.upper) and iv.upper - iv.lower < 1e-6 * max(1.0, iv.upper)
    assert remove(iv.upper) <= delta * (1 + 1e-9)
    assert remove(iv.lower) >= delta * (1 - 1e-9)
    for eps in (iv.lower, 0.5 * iv.upper, iv.upper + 1.0):
        d = acc.delta(eps, direction="remove")
        truth = remove(eps)
        assert d.lower * (1 - 1e-9) <= truth <= d.upper * (1 + 1e-9), (eps, d, truth)
    add = acc.epsilon(delta, direction="add")
    assert add.upper == math.inf
    both = acc.delta(iv.upper)
    assert both.lower <= multinomial_delta(lq, lp, k)(iv.upper) <= both.upper


def test_delta_1e12_at_k_1000_for_large_trials():
    """The issue's case: Binomial(1000, 1/2) composed 1000 times answers delta = 1e-12.
    Its rounding terms are relative (a factor (1 + r)^k, r about 2e-12) and a loss shift
    (about 1e-8), not k absolute terms of 1.3e-14 each (which summed to 1.3e-11).

    What remains is the FFT's round-off, and it is not small at this delta: the same
    composition on three FFT lengths differs by 2.1-2.3e-13 in l1 (a realised error of
    about 1.6e-13 each), above the first-order estimate of 1.1e-13 that once made this
    interval 0.1 wide; the corrected estimate (``compose.roundoff_estimate``, about
    1e-12 here) makes it about 1.1 wide."""
    acc = sp.Accountant(eps_error=0.02, delta_error=1e-14).compose(sp.Binomial(1000, 0.5),
                                                                   1000)
    iv = acc.epsilon(1e-12)
    assert iv.certification == "deterministic" and 0 < iv.lower < iv.upper < iv.lower + 1.5
    assert iv.details["delta_error_upper"] < 1.5e-12
    # consistent with the curve: delta(upper) <= 1e-12 <= delta(lower)
    assert acc.delta(iv.upper).upper <= 1e-12 * (1 + 1e-6)
    assert acc.delta(iv.lower).lower >= 1e-12 * (1 - 1e-6) or iv.lower == 0.0
    # and bracketed by the shorter composition's exact-oracle-checked path: more releases,
    # larger epsilon
    assert acc.epsilon(1e-12).lower > sp.Accountant(eps_error=0.02, delta_error=1e-14).compose(
        sp.Binomial(1000, 0.5), 100).epsilon(1e-12).upper


@pytest.mark.parametrize("n", [1000, 100_000, 10_000_000])
def test_log_pmf_error_bound_holds(n):
    """gammaln cancellation: the log pmf is off by far more than a few ulps of itself
    (4e-8 at n = 1e7); noise_log_error() bounds it."""
    spec = sp.Binomial(n, 0.3)
    log_pmf, _ = spec.noise_window()
    bound = spec.noise_log_error()
    mp.mp.dps = 40
    worst = 0.0
    for i in np.unique(np.linspace(0, n, 41).astype(int)):
        exact = (mp.log(mp.binomial(n, int(i))) + int(i) * mp.log(mp.mpf(0.3))
                 + (n - int(i)) * mp.log(1 - mp.mpf(0.3)))
        worst = max(worst, abs(float(exact - mp.mpf(float(log_pmf[i])))))
    assert worst <= bound
    assert bound < 1e4 * worst + 1e-12      # and not absurdly loose


def test_finite_pair_bracketed_at_k_1000():
    """A three-outcome FinitePair composed 1000 times, delta from 1e-12 to 1e-2, against
    the count-vector oracle (both directions)."""
    p = (0.6, 0.3, 0.1)
    q = (0.3, 0.3, 0.4)
    lp, lq = np.log(p), np.log(q)
    k = 1000
    remove, add = multinomial_delta(lp, lq, k), multinomial_delta(lq, lp, k)
    truth = lambda e: max(remove(e), add(e))
    acc = sp.Accountant(eps_error=0.02, delta_error=1e-14).compose(sp.FinitePair(p, q), k)
    for delta in (1e-12, 1e-9, 1e-6, 1e-2):
        iv = acc.epsilon(delta)
        assert truth(iv.upper) <= delta * (1 + 1e-9)
        assert truth(iv.lower) >= delta * (1 - 1e-9)
        assert iv.upper - iv.lower < 1e-6 * iv.upper


@pytest.mark.parametrize("k, delta", [(1, 1e-12), (10, 1e-9), (100, 1e-6), (1000, 1e-2),
                                      (1000, 1e-6)])
def test_fft_path_bracketed(monkeypatch, k, delta):
    """The same cases through the discretization + FFT path (exact enumeration off)."""
    import sampledprv.analytic.build as acc_mod   # the builder (analytic/build.py)

    monkeypatch.setattr(acc_mod, "MAX_ATOMS", 0)
    p = (delta / (10 * k)) ** (1 / 3)
    remove = multinomial_delta(*binomial_pair(3, p), k)
    acc = sp.Accountant(eps_error=0.02, delta_error=1e-14).compose(sp.Binomial(3, p), k)
    iv = acc.epsilon(delta, direction="remove")
    assert "FFT" in iv.method
    assert remove(iv.upper) <= delta * (1 + 1e-9)
    assert remove(iv.lower) >= delta * (1 - 1e-9)
    d = acc.delta(iv.lower, direction="remove")
    assert d.lower <= remove(iv.lower) <= d.upper
