"""Lower bounds for the Poisson-subsampled GG vector on spread sensitivity vectors."""

import math

import numpy as np
import pytest

import sampledprv as sp
from sampledprv.gg.vector_lower import _MERGE, SpreadSubsampledLower
from sampledprv.mechanisms.registry import family_of

DELTA = 1e-5


def _lower(spec, count, eps_error):
    return sp.Accountant(eps_error, 1e-10).compose(spec, count).epsilon(DELTA)


@pytest.mark.parametrize("m", [4, 64, 1024])
def test_beta2_spread_lower_is_the_gaussian_within_its_error_terms(m):
    """At beta = 2 every spread vector is the same Gaussian mechanism (rotation
    invariance): the spread lower bound must sit below the exact Gaussian interval's
    upper end and above its lower end minus the provable cost of the construction (each
    of the ``k`` losses moves down by at most the shift, rounding included)."""
    sigma, q, k, eps_error, shift = 1.0, 0.05, 40, 0.02, 0.002
    spec = SpreadSubsampledLower(2.0, math.sqrt(2) * sigma, 1.0, m, q, shift, 1e-13)
    low = _lower(spec, k, eps_error)
    gauss = sp.Accountant(eps_error, 1e-10).compose(
        sp.PoissonSubsampled(sp.Gaussian(sigma), q), k).epsilon(DELTA)
    sums = spec.sums()
    cost = k * max(s.t for s in sums) * (1.0 + 1.0 / _MERGE)
    assert low.lower <= gauss.upper
    assert low.lower >= gauss.lower - cost - 2 * eps_error
    assert max(s.bad for s in sums) < 1e-11


def test_spread_lower_lies_below_a_sampled_estimate_of_the_true_mechanism():
    """The true subsampled spread mechanism, sampled (the family's own samplers of
    ``log(1 - q + q e^S)``): its sampled lower bound and our certified lower bound must
    both lie below its sampled upper bound, and the spread vector leaks more than the
    one-hot vector (which is what makes it worth computing)."""
    beta, scale, m, q, k = 3.0, 1.0, 16, 0.2, 2
    spec = SpreadSubsampledLower(beta, scale, 1.0, m, q, 0.01, 1e-13)
    ours = _lower(spec, k, 0.02)
    p_fn, q_fn = family_of(spec).numpy_losses(spec)
    true = sp.PrivacyLossSampler(p_fn, lambda rng, n: -q_fn(rng, n))
    sampled = sp.SampledAccountant(n_samples=200_000, alpha=1e-6, seed=3,
                                   tail_bounds=False).compose(true, k).epsilon(1e-3)
    ours3 = sp.Accountant(0.02, 1e-10).compose(spec, k).epsilon(1e-3)
    assert ours3.lower <= sampled.upper
    assert abs(ours3.estimate - sampled.estimate) <= 0.15 * sampled.estimate
    one_hot = sp.Accountant(0.02, 1e-10).compose(
        sp.PoissonSubsampled(sp.GeneralizedGaussian(beta, scale, 1.0), q), k).epsilon(DELTA)
    assert ours.lower > one_hot.upper


def test_lower_laws_sit_below_the_true_loss_in_distribution():
    """The remove law is a lower coupling: its survival function lies below the true
    one (up to the coupling's failure mass), checked against 400k exact draws."""
    spec = SpreadSubsampledLower(1.5, 1.0, 1.0, 8, 0.3, 0.02, 1e-13)
    remove, add_side = family_of(spec).loss_pair(spec)
    p_fn, q_fn = family_of(spec).numpy_losses(spec)
    rng = np.random.default_rng(11)
    draws_p, draws_q = p_fn(rng, 400_000), q_fn(rng, 400_000)
    ys = np.quantile(draws_p, np.linspace(0.02, 0.98, 25))
    noise = 4.0 / math.sqrt(400_000)
    assert np.all(remove.sf(ys) <= np.mean(draws_p[:, None] > ys, axis=0) + noise)
    # add direction: -g(S~ + t) <= -g(S), i.e. the law of g(S~ + t) under Q0 lies above
    ys = np.quantile(draws_q, np.linspace(0.02, 0.98, 25))
    assert np.all(add_side.sf(ys) >= np.mean(draws_q[:, None] > ys, axis=0) - noise)
    assert remove.mass_defect < 1e-11 and remove.finite_mass <= 1.0 + 1e-12


def test_vector_accountant_uses_spread_vectors_under_subsampling():
    vec = sp.GeneralizedGaussianVector(3.0, 1.0, 64)
    iv = sp.VectorGGAccountant(0.1, orders=(2.0, 3.0, 4.0)).compose(
        sp.PoissonSubsampled(vec, 0.1), 5).epsilon(DELTA)
    lows = iv.details["lower_by_spread"]
    assert set(lows) == {1, 4, 16, 64}
    one_hot = sp.Accountant(0.1).compose(sp.PoissonSubsampled(vec.one_hot(), 0.1), 5)
    assert lows[1] == one_hot.epsilon(DELTA).lower
    assert lows[64] > lows[1] and iv.lower == max(lows.values()) <= iv.upper
    assert "subsampled" in iv.method
    only = sp.VectorGGAccountant(0.1, orders=(2.0, 3.0, 4.0), spreads=(1,)).compose(
        sp.PoissonSubsampled(vec, 0.1), 5).epsilon(DELTA)
    assert (only.lower, only.upper) == (lows[1], iv.upper)
    with pytest.raises(ValueError, match="spreads"):
        sp.VectorGGAccountant(spreads=(0,))
