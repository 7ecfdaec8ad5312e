"""Dimension (in)dependence of the GG mechanism with ell_beta sensitivity, by sampling.

The GG paper (App. B.2) claims the d-dimensional PRV equals the 1-D one.  Sampling the
privacy loss of two difference vectors on the same ell_beta sphere -- one-hot and spread
over k coordinates -- shows this holds at beta = 2 and fails otherwise (see
sampledprv/gg/dimension.py).  Monte Carlo estimates of
delta(eps) = E_P[(1 - exp(eps - L))_+] with fixed seeds; differences are judged in units of
their standard errors (z > 8 to claim a difference, z < 4 to claim agreement).
"""

import numpy as np
import pytest

import sampledprv as sp
from sampledprv.gg.dimension import spread_epsilons, spread_lower_bound


def mc_delta(beta, scale, mu, eps, n, seed):
    rng = np.random.default_rng(seed)
    x = sp.generalized_gaussian_noise((n, len(mu)), beta, scale, rng)
    loss = ((np.abs(x - mu) ** beta - np.abs(x) ** beta) / scale**beta).sum(axis=1)
    v = np.maximum(1.0 - np.exp(eps - loss), 0.0)
    return v.mean(), v.std() / np.sqrt(n)


def compare(beta, scale, k, eps, n=1_000_000):
    one = mc_delta(beta, scale, np.array([1.0]), eps, n, seed=1)
    spread = mc_delta(beta, scale, np.full(k, k ** (-1.0 / beta)), eps, n, seed=2)
    z = (spread[0] - one[0]) / np.hypot(one[1], spread[1])
    return one[0], spread[0], z


def test_beta2_is_dimension_independent():
    d1, dk, z = compare(2.0, 1.5, 8, eps=1.0)
    assert abs(z) < 4, (d1, dk, z)
    eps = spread_epsilons(2.0, 1.5, delta=1e-5, spreads=(1, 8, 64))
    assert max(iv.estimate for iv in eps.values()) - min(iv.estimate for iv in eps.values()) < 1e-3


def test_beta3_spread_vector_leaks_more_than_one_hot():
    # ||mu||_3 = 1 in both cases, yet spreading over 64 coordinates raises delta(eps)
    d1, dk, z = compare(3.0, 3.0, 64, eps=1.5, n=400_000)
    assert z > 8, (d1, dk, z)
    # and the accountant agrees: the spread curve lies above the 1-D one
    e = spread_epsilons(3.0, 3.0, delta=1e-3, spreads=(1, 64))
    assert e[64].lower > e[1].upper


def test_beta15_spread_leaks_more_at_small_delta():
    d1, dk, z = compare(1.5, 1.0, 4, eps=2.5, n=2_000_000)
    assert z > 8, (d1, dk, z)


def test_spread_lower_bound_grows_with_dimension_for_beta_above_2():
    lo_small = spread_lower_bound(3.0, 3.0, delta=1e-5, dimension=16)
    lo_big = spread_lower_bound(3.0, 3.0, delta=1e-5, dimension=4096)
    one = spread_epsilons(3.0, 3.0, delta=1e-5, spreads=(1,))[1]
    assert lo_small.lower >= one.lower
    assert lo_big.lower > 2 * one.upper
    with pytest.raises(ValueError, match="spreads"):
        spread_epsilons(3.0, 3.0, delta=1e-5, spreads=(0,))
