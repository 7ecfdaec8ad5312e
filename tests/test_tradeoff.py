"""Certified trade-off curves and mu-GDP brackets (issue 26) against closed forms."""

import math
import time
import warnings

import numpy as np
import pytest
from scipy import stats
from scipy.stats import norm

import sampledprv as sp
from sampledprv.sampled import LogDensityPair, SampledAccountant

FPRS = [1e-3, 1e-2, 1e-1]


def gdp(fpr, mu):
    return norm.cdf(norm.ppf(np.asarray(fpr)) + mu)


def test_gaussian_one_step_contains_exact_and_is_narrow():
    t0 = time.perf_counter()
    acc = sp.Accountant().compose(sp.Gaussian(1.0))
    ivs = acc.tradeoff(FPRS)
    elapsed = time.perf_counter() - t0       # measured, not asserted (issue: <= 0.5 s)
    exact = gdp(FPRS, 1.0)
    np.testing.assert_allclose(exact, [0.01830, 0.09236, 0.38914], atol=5e-6)
    for iv, x in zip(ivs, exact):
        assert x in iv
        assert iv.width <= 0.02 * x, (iv, x)
        assert iv.certification == "deterministic"
    print(f"Gaussian sigma=1 one step, three fprs: {elapsed:.3f} s")


def test_scalar_fpr_gives_one_interval_and_per_direction_details():
    acc = sp.Accountant().compose(sp.Gaussian(2.0))
    iv = acc.tradeoff(0.05, direction="remove")
    assert isinstance(iv, sp.Interval)
    assert gdp(0.05, 0.5) in iv
    assert set(iv.details["per_direction"]) == {"remove"}


def test_subsampled_directions_are_the_two_halves():
    """remove: P = (1-q) N(0,1) + q N(mu,1) against Q = N(0,1); add: the swapped pair,
    whose curve needs the negative-epsilon identity (the remove curve at eps > 0 gives
    only the add curve's large-fpr half)."""
    q, mu = 0.3, 2.0
    acc = sp.Accountant(eps_error=0.005).compose(sp.PoissonSubsampled(sp.Gaussian(1 / mu), q))
    fprs = np.array([1e-3, 0.02, 0.2, 0.6, 0.95])
    rem = (1 - q) * fprs + q * gdp(fprs, mu)
    t = norm.ppf(fprs)                       # add: reject for small outputs, x <= s with
    s = np.array([_solve_add(a, q, mu) for a in fprs])   # (1-q) Phi(s) + q Phi(s-mu) = a
    add = norm.cdf(s)
    assert t.size == s.size
    for d, exact in (("remove", rem), ("add", add)):
        ivs = acc.tradeoff(fprs, direction=d)
        for iv, x in zip(ivs, exact):
            assert iv.lower <= x <= iv.upper, (d, iv, x)
    worst = acc.tradeoff(fprs)
    for iv, a, b in zip(worst, rem, add):
        assert iv.lower <= max(a, b) <= iv.upper


def _solve_add(a, q, mu):
    from scipy.optimize import brentq
    return brentq(lambda s: (1 - q) * norm.cdf(s) + q * norm.cdf(s - mu) - a, -40, 40,
                  xtol=1e-14)


def test_dpsgd_two_sided_and_dp_accounting_values_inside():
    """DP-SGD sigma 0.8, q 4e-3, 1e4 steps.  dp-accounting's get_true_positive_rates
    values (issue 26: 0.01099, 0.06188, 0.30507) agree with our estimates to their
    printed digits (0.01099 looks like 0.0109917 rounded), so an upper end below them is
    most likely below the true value (design notes); they must lie inside our certified
    intervals."""
    t0 = time.perf_counter()
    acc = sp.Accountant().compose(sp.PoissonSubsampled(sp.Gaussian(0.8), q=4e-3), 10000)
    ivs = acc.tradeoff(FPRS)
    elapsed = time.perf_counter() - t0
    for iv, ref in zip(ivs, [0.01099, 0.06188, 0.30507]):
        assert 0 < iv.lower < iv.upper < 1
        assert iv.lower <= ref <= iv.upper, (iv, ref)
        assert iv.width <= 0.02 * ref
    print(f"DP-SGD three fprs incl. the accountant's build: {elapsed:.2f} s")


@pytest.mark.parametrize("seed", range(10))
def test_k_fold_gaussian_random_settings(seed):
    rng = np.random.default_rng(seed)
    sigma = float(rng.uniform(0.8, 5.0))
    k = int(rng.integers(1, 40))
    fprs = np.sort(10 ** rng.uniform(-5, -0.1, size=3))
    merge = bool(seed % 2)                   # odd seeds: closed form, even: the FFT path
    acc = sp.Accountant(merge_gaussians=merge).compose(sp.Gaussian(sigma), k)
    mu = math.sqrt(k) / sigma
    for iv, x in zip(acc.tradeoff(fprs), gdp(fprs, mu)):
        assert x in iv, (sigma, k, iv, x)


def test_curve_band_contains_exact_everywhere():
    acc = sp.Accountant().compose(sp.Gaussian(1.5), 3)
    mu = math.sqrt(3) / 1.5
    c = acc.tradeoff_curve(points=41)
    exact = gdp(np.clip(c.fpr, 1e-300, 1 - 1e-16), mu)
    assert np.all(c.lower <= exact + 1e-15) and np.all(exact <= c.upper + 1e-15)
    assert c.lower[0] == 0.0 or c.fpr[0] > 0
    x = np.array([3e-4, 0.123, 0.77])        # between the grid points
    assert np.all(c.lower_at(x) <= gdp(x, mu)) and np.all(gdp(x, mu) <= c.upper_at(x))
    # the symmetric upper curve's inverse is at most the exact inverse
    y = np.array([0.05, 0.5, 0.9])
    assert np.all(c.inverse_upper(y) <= norm.cdf(norm.ppf(y) - mu) + 1e-12)


@pytest.mark.parametrize("sigma,k", [(1.0, 1), (2.0, 4), (3.0, 9)])
def test_gdp_mu_brackets_gaussian(sigma, k):
    acc = sp.Accountant().compose(sp.Gaussian(sigma), k)
    b = acc.gdp_mu()
    mu = math.sqrt(k) / sigma
    assert mu in b, (b, mu)
    assert b.upper - b.lower < 0.1 * mu
    assert abs(b.best_fit - mu) < 0.02 * mu


def test_gdp_mu_dpsgd_finite_and_fpr_zero_is_infinite():
    acc = sp.Accountant().compose(sp.PoissonSubsampled(sp.Gaussian(0.8), q=4e-3), 10000)
    b = acc.gdp_mu()
    assert 0 < b.lower <= b.upper < math.inf
    assert b.fpr_range == (1e-6, 1 - 1e-6)
    assert acc.gdp_mu(fpr_min=0.0, points=21).upper == math.inf


def test_vector_gg_accountant_has_tradeoff():
    vec = sp.GeneralizedGaussianVector(beta=2.0, scale=math.sqrt(2.0), clip_norm=1.0, dimension=5)
    acc = sp.VectorGGAccountant().compose(vec, 2)
    ivs = acc.tradeoff([0.01, 0.1])
    # GG beta=2 with scale s is N(0, s^2/2): mu = C / (s / sqrt 2) = 1 per step
    for iv, x in zip(ivs, gdp([0.01, 0.1], math.sqrt(2.0))):
        assert x in iv


def test_bad_input_names_the_argument():
    acc = sp.Accountant().compose(sp.Gaussian(1.0))
    with pytest.raises(ValueError, match="fpr"):
        acc.tradeoff([0.1, 1.5])
    with pytest.raises(ValueError, match="direction"):
        acc.tradeoff(0.1, direction="sideways")
    with pytest.raises(ValueError, match="fpr_min"):
        acc.gdp_mu(fpr_min=0.7)
    seed_acc = SampledAccountant(1000, alpha=0.05, certify="seed", progress=False)
    with pytest.raises(ValueError, match="certify='seed'"):
        seed_acc.compose(sp.Gaussian(1.0)).tradeoff(0.1)


def _shift_pair():
    return LogDensityPair(logp=lambda w: -0.5 * (w - 1.0) ** 2, logq=lambda w: -0.5 * w ** 2,
                          sample_p=lambda rng, n: rng.normal(1.0, 1.0, n),
                          sample_q=lambda rng, n: rng.normal(0.0, 1.0, n), name="shift")


def test_sampled_custom_pair_quick():
    acc = SampledAccountant(4000, alpha=0.05, seed=3, bins=256, progress=False)
    acc.compose(_shift_pair())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ivs = acc.tradeoff([0.01, 0.1, 0.3], rtol=1e-2)
    for iv, x in zip(ivs, gdp([0.01, 0.1, 0.3], 1.0)):
        assert iv.certification == "probabilistic" and iv.confidence == pytest.approx(0.95)
        assert x in iv


@pytest.mark.slow
def test_sampled_custom_pair_coverage_300_seeds():
    """All three intervals of a seed hold together with probability >= 0.95 (the
    envelopes hold for every epsilon and both directions on one event)."""
    fprs = [0.01, 0.1, 0.3]
    exact = gdp(fprs, 1.0)
    misses = 0
    seeds = 300
    pair = _shift_pair()   # one pair object: its input checks run once (they are seed-free)
    for s in range(seeds):
        acc = SampledAccountant(2000, alpha=0.05, seed=10_000 + s, bins=128,
                                progress=False).compose(pair)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ivs = acc.tradeoff(fprs, rtol=1e-2)
        misses += any(x not in iv for iv, x in zip(ivs, exact))
    p = stats.binomtest(misses, seeds, 0.05, alternative="greater").pvalue
    assert p > 1e-3, (misses, seeds)


def test_symmetric_upper_curve_is_above_both_directions():
    """One-run audits use the conjugate of max_d delta_up,d: its inverse must be at most
    both directions' exact inverses (asymmetric pair: Poisson-subsampled Gaussian)."""
    from scipy.optimize import brentq
    q, mu = 0.3, 2.0
    acc = sp.Accountant().compose(sp.PoissonSubsampled(sp.Gaussian(1 / mu), q))
    c = acc.tradeoff_curve(direction="remove", points=21)
    for y in (0.05, 0.3, 0.7, 0.95):
        inv_rem = brentq(lambda a: (1 - q) * a + q * gdp(a, mu) - y, 1e-300, 1.0, xtol=1e-15)
        inv_add = (1 - q) * y + q * norm.cdf(norm.ppf(y) - mu)   # a at which Phi(s) = y
        assert c.inverse_upper(y)[0] <= min(inv_rem, inv_add) + 1e-12


@pytest.mark.parametrize("eps,delta", [(1.0, 0.0), (0.5, 1e-3)])
def test_approx_dp_pair_closed_form(eps, delta):
    """The (eps, delta) pair's curve: min(1, delta + e^eps a, 1 - e^-eps (1 - delta - a));
    an atom at +inf (delta > 0) and the exact-atoms path."""
    mech = sp.PureDP(eps) if delta == 0 else sp.ApproxDP(eps, delta)
    acc = sp.Accountant().compose(mech)
    fprs = np.array([1e-4, 0.05, 0.3, 0.8])
    exact = np.minimum(1, np.minimum(delta + np.exp(eps) * fprs,
                                     1 - np.exp(-eps) * (1 - delta - fprs)))
    for iv, x in zip(acc.tradeoff(fprs), exact):
        assert iv.lower - 1e-12 <= x <= iv.upper + 1e-12, (iv, x)


def test_online_accountant_has_tradeoff():
    acc = sp.Accountant(horizon=64).compose(sp.Gaussian(4.0), 16)
    for iv, x in zip(acc.tradeoff([0.01, 0.2]), gdp([0.01, 0.2], 1.0)):
        assert x in iv
