"""Closed-form and quadrature privacy curves used as ground truth in tests."""

from __future__ import annotations

import numpy as np
from scipy import integrate, optimize, special, stats


def gaussian_delta(mu: float, eps: float) -> float:
    """Exact delta(eps) of the Gaussian mechanism with mu = sensitivity/sigma (log-space)."""
    a = -eps / mu + mu / 2
    b = -eps / mu - mu / 2
    return float(special.ndtr(a) - np.exp(eps + special.log_ndtr(b)))


def gaussian_eps(mu: float, delta: float) -> float:
    """Exact epsilon(delta) of the Gaussian mechanism (root of gaussian_delta)."""
    if gaussian_delta(mu, 0.0) <= delta:
        return 0.0
    hi = 1.0
    while gaussian_delta(mu, hi) > delta:
        hi *= 2
    return optimize.brentq(lambda e: gaussian_delta(mu, e) - delta, 0.0, hi, xtol=1e-13,
                           rtol=1e-15)


def laplace_delta(eps0: float, eps: float) -> float:
    """Exact delta(eps) of the Laplace mechanism with eps0 = sensitivity/scale."""
    return float(max(0.0, -np.expm1((eps - eps0) / 2))) if eps < eps0 else 0.0


def gg_delta_quadrature(beta: float, scale: float, sensitivity: float, eps: float) -> float:
    """delta(eps) = int (p(x) - e^eps q(x))_+ dx for GG noise, by adaptive quadrature.

    p is gennorm(beta, scale) at 0 and q the same at `sensitivity`; the integrand is
    positive exactly on x < x*(eps) because the loss is decreasing."""
    p = stats.gennorm(beta, scale=scale)
    q = stats.gennorm(beta, loc=sensitivity, scale=scale)
    loss = lambda x: (abs(x - sensitivity) ** beta - abs(x) ** beta) / scale ** beta  # noqa
    # root of loss(x) = eps
    lo, hi = -1.0, sensitivity + 1.0
    while loss(lo) < eps:
        lo *= 2
    while loss(hi) > eps:
        hi *= 2
    xs = optimize.brentq(lambda x: loss(x) - eps, lo, hi, xtol=1e-14)
    # int_{-inf}^{x*} p - e^eps q = P(X <= x*) - e^eps Q(X <= x*)
    val = p.cdf(xs) - np.exp(eps) * q.cdf(xs)
    # cross-check by direct quadrature of the positive part
    f = lambda x: p.pdf(x) - np.exp(eps) * q.pdf(x)  # noqa: E731
    direct = integrate.quad(f, -np.inf, xs, epsabs=1e-14, limit=200)[0]
    assert abs(direct - val) < 1e-8 + 1e-6 * abs(val), (direct, val)
    return float(val)
