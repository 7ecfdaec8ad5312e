"""The two pairs of sampledprv.mechanisms._mixtures against closed forms."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

import sampledprv as sp
from sampledprv.mechanisms._mixtures import MixtureOfGaussians, TaggedMixture


def _exact_delta(m: MixtureOfGaussians, eps: float) -> float:
    """max over directions of the hockey-stick divergence, by quadrature of the densities."""
    def p(x):
        return sum(w * stats.norm.pdf(x, c, m.sigma) for c, w in zip(m.sensitivities, m.probs))

    def q(x):
        return stats.norm.pdf(x, 0.0, m.sigma)
    lim = 12 * m.sigma + max(m.sensitivities)
    pts = np.linspace(-lim, lim, 41)
    rem = integrate.quad(lambda x: max(p(x) - math.exp(eps) * q(x), 0.0), -lim, lim,
                         points=pts, limit=400, epsabs=1e-13)[0]
    add = integrate.quad(lambda x: max(q(x) - math.exp(eps) * p(x), 0.0), -lim, lim,
                         points=pts, limit=400, epsabs=1e-13)[0]
    return max(rem, add)


@pytest.mark.parametrize("sigma, sens, probs", [
    (1.0, (0.0, 1.0, 2.0), (0.5, 0.3, 0.2)),
    (0.7, (1.0,), (1.0,)),
    (2.0, (0.5, 3.0), (0.9, 0.1)),
])
def test_mixture_of_gaussians_brackets_the_exact_curve(sigma, sens, probs):
    m = MixtureOfGaussians(sigma, sens, probs)
    acc = sp.Accountant(eps_error=0.005, delta_error=1e-12).compose(m)
    for eps in (0.0, 0.3, 1.0):
        exact = _exact_delta(m, eps)
        iv = acc.delta(eps)
        assert iv.lower - 1e-9 <= exact <= iv.upper + 1e-9, (eps, exact, iv)


def test_mixture_of_gaussians_inverse_and_validation():
    m = MixtureOfGaussians(1.0, (0.0, 1.0, 2.0), (0.5, 0.3, 0.2))
    y = np.array([math.log(0.5) + 1e-6, 0.0, 1.0, 5.0])
    assert np.allclose(m.loss(m.x_star(y)), y, rtol=0, atol=1e-12)
    assert np.all(np.isneginf(m.x_star(np.array([-3.0, math.log(0.5)]))))
    # a single Gaussian shift is the Gaussian mechanism
    one = sp.Accountant().compose(MixtureOfGaussians(2.0, (1.0,), (1.0,)), 5).epsilon(1e-5)
    ref = sp.Accountant().compose(sp.Gaussian(2.0), 5).epsilon(1e-5)
    assert one.lower <= ref.estimate <= one.upper
    with pytest.raises(ValueError, match="sensitivities"):
        MixtureOfGaussians(1.0, (-1.0, 1.0), (0.5, 0.5))
    with pytest.raises(ValueError, match="probs"):
        MixtureOfGaussians(1.0, (1.0, 2.0), (0.5, 0.6))
    with pytest.raises(ValueError, match="add_remove"):
        sp.Accountant(neighbouring="substitute").compose(m)


def test_tagged_mixture_is_the_mixture_of_curves():
    """One run of the tagged pair: delta(eps) = sum_i w_i delta_i(eps) per direction."""
    a, b = sp.PoissonSubsampled(sp.Gaussian(1.0), 0.2), sp.Laplace(2.0)
    t = TaggedMixture((0.7, 0.3), (a, b))
    iv = sp.Accountant(eps_error=0.005, delta_error=1e-12).compose(t).delta(0.2)
    for d in ("remove", "add"):
        da = sp.Accountant(eps_error=0.005, delta_error=1e-12).compose(a).delta(0.2, d)
        db = sp.Accountant(eps_error=0.005, delta_error=1e-12).compose(b).delta(0.2, d)
        assert 0.7 * da.lower + 0.3 * db.lower - 1e-9 <= iv.upper
    mix_low = max(0.7 * sp.Accountant().compose(a).delta(0.2, d).lower
                  + 0.3 * sp.Accountant().compose(b).delta(0.2, d).lower
                  for d in ("remove", "add"))
    mix_up = max(0.7 * sp.Accountant().compose(a).delta(0.2, d).upper
                 + 0.3 * sp.Accountant().compose(b).delta(0.2, d).upper
                 for d in ("remove", "add"))
    assert iv.lower <= mix_up + 1e-9 and mix_low <= iv.upper + 1e-9
    with pytest.raises(ValueError, match="add_remove"):
        sp.Accountant(neighbouring="substitute").compose(t)
