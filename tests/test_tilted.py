"""Certified tails by tilted sampling: coverage on exact answers."""

import math

import numpy as np
import pytest
from scipy.stats import binom, norm

from sampledprv.batch.random_allocation import RandomAllocation
from sampledprv.rdp.occupancy import occupancy_log_moment
from sampledprv.rdp.sampled_gaussian import sampled_gaussian_log_moment
from sampledprv.sampled.certification.tilted import (TiltedLaw, mean_bounds, renyi_tilted,
                                                     tilted_delta, tilted_epsilon)
from sampledprv.sampled.certification.tilted_laws import allocation_law, poisson_gaussian_law


def _poisson_delta(q, mu, eps):
    """Exact remove-direction delta(eps) of one Poisson-subsampled Gaussian step."""
    x0 = (math.log((math.exp(eps) - 1.0 + q) / q) + 0.5 * mu * mu) / mu
    p_tail = (1 - q) * norm.sf(x0) + q * norm.sf(x0 - mu)
    return p_tail - math.exp(eps) * norm.sf(x0)


def _max_misses(seeds, alpha):
    return int(binom.ppf(1 - 1e-3, seeds, alpha))


def test_log_z_matches_the_renyi_moment():
    law = poisson_gaussian_law(0.01, 1.0, 10)
    ref = sampled_gaussian_log_moment(10, 0.01, 1.0)
    assert law.log_scale[0] <= ref <= law.log_scale[1] or \
        abs(ref - law.log_scale[1]) < 1e-10


def test_issue_numbers_far_tail():
    """The known case (q = 0.01, mu = 1): delta(1) = 2.7e-9, far below what 1e6 plain
    draws can see (Clopper-Pearson upper bound about 1.4e-5 at level 1e-6 with no hit);
    1e6 draws of P_10 bound it within a factor 10 on both sides."""
    law = poisson_gaussian_law(0.01, 1.0, 10)
    draws = law.draw(np.random.default_rng(0), 1_000_000)
    lo, est, up = tilted_delta(law, draws, 0.0, 1e-6)
    # eps = 0: delta(0) = TV = P(L > 0) - Q(L > 0), a closed form
    exact = _poisson_delta(0.01, 1.0, 0.0)
    assert lo <= exact <= up
    lo, est, up = tilted_delta(law, draws, 1.0, 1e-6)
    exact = _poisson_delta(0.01, 1.0, 1.0)
    assert exact / 10 < lo <= exact <= up < 10 * exact and exact < 1e-8


@pytest.mark.parametrize("eps,order", [(0.5, 4), (1.5, 8)])
def test_coverage_poisson_gaussian_300_seeds(eps, order):
    """delta(eps) of one Poisson-subsampled Gaussian step (q = 0.05, mu = 1.5; exact by
    normal CDFs), 300 seeds of 2,000 tilted draws at alpha = 0.05: the misses stay
    within the binomial expectation (at most the 99.9% quantile of Bin(300, 0.05))."""
    q, mu = 0.05, 1.5
    exact = _poisson_delta(q, mu, eps)
    law = poisson_gaussian_law(q, mu, order)
    misses = 0
    for seed in range(300):
        lo, _, up = tilted_delta(law, law.draw(np.random.default_rng(seed), 2000), eps, 0.05)
        misses += not (lo <= exact <= up)
    assert misses <= _max_misses(300, 0.05)


def test_coverage_epsilon_poisson_gaussian():
    """epsilon(delta) over a grid: 300 seeds, alpha = 0.05."""
    q, mu = 0.05, 1.5
    grid = np.linspace(0.0, 4.0, 401)[1:]
    target = 1e-4
    from scipy.optimize import brentq
    exact = brentq(lambda e: _poisson_delta(q, mu, e) - target, 0.0, 6.0)
    law = poisson_gaussian_law(q, mu, 4)       # E_{P_4}[L] = 3.9, near the answer 2.03
    misses, widths = 0, []
    for seed in range(300):
        lo, _, up = tilted_epsilon(law, law.draw(np.random.default_rng(seed), 2000), target,
                                   grid, 0.05)
        misses += not (lo <= exact <= up)
        widths.append(up - lo)
    assert misses <= _max_misses(300, 0.05)
    assert np.median(widths) < 0.8             # 2,000 draws, 400 grid points


def test_mean_bounds_are_bounds():
    rng = np.random.default_rng(1)
    misses = 0
    for _ in range(300):
        y = rng.beta(0.2, 5.0, size=500)
        lo, up = mean_bounds(y, 0.025)
        misses += not (lo <= 0.2 / 5.2 <= up)
    assert misses <= _max_misses(300, 0.05)


def test_a_cap_that_is_not_a_bound_is_refused():
    law = TiltedLaw(2.0, (0.0, 0.0), lambda rng, n: (np.ones(n), np.ones(n)),
                    lambda eps: 0.0, "broken")
    with pytest.raises(ValueError, match="cap"):
        tilted_delta(law, law.draw(None, 10), 0.5, 0.05)
    with pytest.raises(ValueError, match="order"):
        renyi_tilted(1.0, (0.0, 0.0), lambda rng, n: np.zeros(n), "x")


def test_allocation_log_z_equals_the_occupancy_moment():
    mu, T, k, a = 0.8, 6, 2, 3
    law = allocation_law(mu, T, k, a)
    lm = np.array([0.5 * c * (c - 1) * mu * mu for c in range(a + 1)])
    ref = occupancy_log_moment(lm, T, k)
    assert law.log_scale[0] <= ref and ref - law.log_scale[1] < 1e-9


def test_allocation_tilted_law_against_plain_draws():
    """Z_a E_{P_a}[e^{-(a-1)L} h(L)] = E_P[h(L)] for h = 1 and h = 1{L > t}: the law
    of the backward occupancy sampler is the tilted law (checked against the spec's
    own plain sampler; 5-sigma tolerances)."""
    spec = RandomAllocation(1.0, 5, 2)
    law = allocation_law(1.0, 5, 2, 3)
    L, W = law.draw(np.random.default_rng(2), 150_000)
    w = np.exp(W + law.log_scale[1])
    plain = spec.numpy_loss_sampler("remove")(np.random.default_rng(3), 150_000)
    assert abs(np.mean(w) - 1.0) < 5 * np.std(w) / math.sqrt(w.size)
    for t in (0.5, 1.5):
        a, b = w * (L > t), (plain > t).astype(float)
        tol = 5 * math.sqrt(np.var(a) / a.size + np.var(b) / b.size)
        assert abs(np.mean(a) - np.mean(b)) < tol


def test_coverage_allocation_300_seeds():
    """k-of-T allocation (T = 5, k = 2, sigma = 1): delta(eps) at a tail eps from 300
    seeds of 1,000 draws of P_4 at alpha = 0.05, against a reference from 4e6 plain
    draws (its own error is 50x below the intervals' half-widths)."""
    spec = RandomAllocation(1.0, 5, 2)
    eps = 1.5
    y = spec.numpy_loss_sampler("remove")(np.random.default_rng(7), 4_000_000)
    ref = float(np.mean(np.maximum(1.0 - np.exp(eps - y), 0.0)))
    law = allocation_law(1.0, 5, 2, 4)
    misses, halfwidths = 0, []
    for seed in range(300):
        lo, _, up = tilted_delta(law, law.draw(np.random.default_rng(seed), 1000), eps, 0.05)
        misses += not (lo <= ref <= up)
        halfwidths.append((up - lo) / 2)
    ref_err = math.sqrt(ref / 4e6)
    assert ref_err < np.median(halfwidths) / 50
    assert misses <= _max_misses(300, 0.05)


def test_grid_bounds_in_blocks_are_the_pointwise_bounds(monkeypatch):
    """epsilon(delta) bounds the grid's delta a block of points at a time; every point's
    (lower, estimate, upper) is bit for bit the one-point :func:`tilted_delta`, across
    block boundaries (blocks shrunk to 7 rows here) and with a total-variation allowance."""
    from sampledprv.sampled.certification import tilted as t
    monkeypatch.setattr(t, "_ROWS_ELEMENTS", 7 * 1000)
    rng = np.random.default_rng(5)
    for a, mu, tv in ((2.5, 1.0, 0.0), (8.0, 2.5, 1e-9)):
        law = renyi_tilted(a, (0.2, 0.2005), lambda r, k: r.normal(mu, 1.0, k), "x", tv=tv)
        draws = law.draw(rng, 1000)
        grid = np.linspace(0.0, 6.0, 101)
        want = [tilted_delta(law, draws, float(e), 1e-6) for e in grid]
        assert t._tilted_deltas(law, draws, grid, 1e-6) == want
        ups = np.array([r[2] for r in want])
        lows = np.array([r[0] for r in want])
        got = tilted_epsilon(law, draws, 1e-3, grid, 1e-6 * grid.size)
        assert got[2] == (grid[np.flatnonzero(ups <= 1e-3)[0]] if (ups <= 1e-3).any()
                          else math.inf)
        assert got[0] == (grid[np.flatnonzero(lows > 1e-3)[-1]] if (lows > 1e-3).any()
                          else 0.0)
