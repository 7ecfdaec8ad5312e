"""The analytic accountant brackets exact privacy curves."""

from __future__ import annotations

import math

import numpy as np
import pytest

import sampledprv as sp
from accountant_contract import AccountantProperties
from exact_curves import gaussian_delta, gaussian_eps, gg_delta_quadrature, laplace_delta


class TestAccountantContract(AccountantProperties):
    def make_accountant(self):
        return sp.Accountant(eps_error=0.01, delta_error=1e-12)


def allowed_width(mu, delta, eps_error, iv):
    """2 eps_error plus what the realised delta error terms move epsilon by."""
    shift = (gaussian_eps(mu, delta - iv.details["delta_error_upper"])
             - gaussian_eps(mu, delta + iv.details["delta_error_lower"]))
    return 2 * eps_error * 1.02 + shift


# ---- k-fold Gaussian: exact curve, closed-form merge ------------------------------------
SIGMAS = [0.5, 1.0, 2.0, 5.0]
KS = [1, 10, 100, 1000, 10_000]
DELTAS = [1e-10, 1e-6, 1e-3]


@pytest.mark.parametrize("sigma", SIGMAS)
@pytest.mark.parametrize("k", KS)
def test_k_fold_gaussian_brackets_exact(sigma, k):
    acc = sp.Accountant(eps_error=0.01, delta_error=1e-13).compose(sp.Gaussian(sigma), k)
    mu = math.sqrt(k) / sigma
    for delta in DELTAS:
        iv = acc.epsilon(delta)
        truth = gaussian_eps(mu, delta)
        assert iv.lower <= truth <= iv.upper, (delta, iv, truth)
        assert iv.width <= allowed_width(mu, delta, 0.01, iv)
    for eps in [0.5, 2.0, 8.0]:
        iv = acc.delta(eps)
        truth = gaussian_delta(mu, eps)
        assert iv.lower <= truth <= iv.upper, (eps, iv, truth)


# ---- k-fold Gaussian through the FFT engine (no closed-form merge) ----------------------
@pytest.mark.parametrize("sigma,k", [(0.5, 1), (1.0, 10), (2.0, 100), (5.0, 1000),
                                     (5.0, 10_000), (20.0, 10_000), (60.0, 200_000)])
def test_k_fold_gaussian_fft_path_brackets_exact(sigma, k):
    acc = sp.Accountant(eps_error=0.02, delta_error=1e-13, merge_gaussians=False)
    acc.compose(sp.Gaussian(sigma), k)
    mu = math.sqrt(k) / sigma
    # float64 CDF rounding limits the resolvable delta to about k * 1e-15
    for delta in [d for d in DELTAS if d >= 100 * k * 1e-15]:
        iv = acc.epsilon(delta)
        truth = gaussian_eps(mu, delta)
        assert iv.lower <= truth <= iv.upper, (delta, iv, truth)
        assert iv.width <= allowed_width(mu, delta, 0.02, iv)
    for eps in [0.5, 2.0]:
        iv = acc.delta(eps)
        assert iv.lower <= gaussian_delta(mu, eps) <= iv.upper


def test_heterogeneous_gaussians_equal_merged_gaussian():
    """sum of Gaussians with different sigmas is exactly a Gaussian (FFT path)."""
    acc = sp.Accountant(eps_error=0.01, delta_error=1e-12, merge_gaussians=False)
    acc.compose(sp.Gaussian(3.0), 20).compose(sp.Gaussian(1.5, sensitivity=0.5), 7)
    mu = math.sqrt(20 / 9 + 7 * (0.5 / 1.5) ** 2)
    iv = acc.epsilon(1e-6)
    assert iv.lower <= gaussian_eps(mu, 1e-6) <= iv.upper


# ---- Laplace and Generalized Gaussian ------------------------------------------------------
@pytest.mark.parametrize("scale", [0.3, 1.0, 2.0, 10.0])
def test_laplace_single_run_brackets_exact(scale):
    acc = sp.Accountant(eps_error=0.01, delta_error=1e-12).compose(sp.Laplace(scale))
    eps0 = 1.0 / scale
    for eps in np.linspace(0, eps0 * 1.2, 7):
        iv = acc.delta(float(eps))
        assert iv.lower <= laplace_delta(eps0, eps) <= iv.upper
    for delta in [1e-3, 1e-2, 0.1]:
        iv = acc.epsilon(delta)
        truth = max(0.0, eps0 + 2 * math.log1p(-delta))
        assert iv.lower <= truth <= iv.upper


@pytest.mark.parametrize("sigma", [0.7, 1.0, 3.0])
def test_gg_beta2_is_the_gaussian(sigma):
    gg = sp.GeneralizedGaussian.from_noise_multiplier(2.0, sigma)
    assert gg.scale == pytest.approx(math.sqrt(2) * sigma)
    for k in [1, 50]:
        acc = sp.Accountant(eps_error=0.01, delta_error=1e-12).compose(gg, k)
        iv = acc.epsilon(1e-5)
        assert iv.lower <= gaussian_eps(math.sqrt(k) / sigma, 1e-5) <= iv.upper


@pytest.mark.parametrize("scale", [0.5, 2.0])
def test_gg_beta1_is_laplace(scale):
    a = sp.Accountant(eps_error=0.01, delta_error=1e-12).compose(
        sp.GeneralizedGaussian(1.0, scale), 3)
    b = sp.Accountant(eps_error=0.01, delta_error=1e-12).compose(sp.Laplace(scale), 3)
    ia, ib = a.epsilon(1e-5), b.epsilon(1e-5)
    assert ia.lower <= ib.estimate <= ia.upper
    assert ia.estimate == pytest.approx(ib.estimate, abs=1e-9)
    assert a.delta(0.0).lower <= laplace_delta(1 / scale, 0.0) * 0 + b.delta(0.0).upper


@pytest.mark.parametrize("beta", [1.5, 3.0, 4.0])
@pytest.mark.parametrize("scale", [0.8, 2.0])
def test_gg_single_run_matches_quadrature(beta, scale):
    acc = sp.Accountant(eps_error=0.005, delta_error=1e-12).compose(
        sp.GeneralizedGaussian(beta, scale))
    for eps in [0.0, 0.25, 0.5, 1.0, 2.0]:
        truth = gg_delta_quadrature(beta, scale, 1.0, eps)
        iv = acc.delta(eps)
        assert iv.lower <= truth <= iv.upper, (eps, iv, truth)
        assert iv.estimate == pytest.approx(truth, abs=0.01)


def test_gg_sensitivity_scales_like_scale():
    a = sp.Accountant().compose(sp.GeneralizedGaussian(1.5, 2.0, sensitivity=0.5), 10)
    b = sp.Accountant().compose(sp.GeneralizedGaussian(1.5, 4.0, sensitivity=1.0), 10)
    assert a.epsilon(1e-6).estimate == pytest.approx(b.epsilon(1e-6).estimate, abs=1e-6)


# ---- discrete mechanisms -----------------------------------------------------------------
def test_pure_dp_composition_matches_binomial_formula():
    eps0, k = 0.3, 20
    acc = sp.Accountant(eps_error=0.005, delta_error=1e-12).compose(sp.PureDP(eps0), k)
    # exact: number of "+" outcomes ~ Binomial(k, p), loss = (2j - k) eps0
    from scipy import stats
    p = math.exp(eps0) / (1 + math.exp(eps0))
    j = np.arange(k + 1)
    w = stats.binom.pmf(j, k, p)
    s = (2 * j - k) * eps0
    for eps in [0.0, 1.0, 2.0, 3.0]:
        truth = float(np.sum(w * np.clip(1 - np.exp(eps - s), 0, None)))
        iv = acc.delta(eps)
        assert iv.lower <= truth <= iv.upper


def test_approx_dp_delta_atoms_compose():
    k = 5
    acc = sp.Accountant(eps_error=0.005, delta_error=1e-12).compose(sp.ApproxDP(0.0, 1e-3), k)
    truth = 1 - (1 - 1e-3) ** k      # eps=0: all mass at 0 except the infinite atoms
    iv = acc.delta(0.0)
    assert iv.lower <= truth <= iv.upper
    assert acc.epsilon(truth / 2).upper == math.inf


def test_randomized_response_is_pure_dp():
    p = 0.75
    a = sp.Accountant().compose(sp.RandomizedResponse(p), 7).epsilon(1e-4)
    b = sp.Accountant().compose(sp.PureDP(math.log(3)), 7).epsilon(1e-4)
    assert a.estimate == pytest.approx(b.estimate, abs=1e-9)


# ---- intervals: bookkeeping ----------------------------------------------------------------
def test_interval_says_how_it_was_certified():
    iv = sp.Accountant().compose(sp.Gaussian(1.0)).epsilon(1e-5)
    assert iv.certification == "deterministic" and iv.confidence == 1.0
    assert "certified deterministic" in str(iv)
    assert iv.details["mesh"] > 0


def test_compose_again_reuses_and_updates():
    acc = sp.Accountant().compose(sp.PoissonSubsampled(sp.Gaussian(1.0), 0.01), 100)
    e1 = acc.epsilon(1e-5)
    acc.compose(sp.PoissonSubsampled(sp.Gaussian(1.0), 0.01), 100)
    e2 = acc.epsilon(1e-5)
    fresh = sp.Accountant().compose(sp.PoissonSubsampled(sp.Gaussian(1.0), 0.01), 200)
    assert e2.estimate > e1.estimate
    assert e2.estimate == pytest.approx(fresh.epsilon(1e-5).estimate, abs=1e-12)


def test_gg_dimension_refused_unless_beta_2():
    with pytest.raises(ValueError, match="dimension"):
        sp.Accountant().compose(sp.GeneralizedGaussian(1.5, 1.0, dimension=10))
    a = sp.Accountant().compose(sp.GeneralizedGaussian(2.0, 1.0, dimension=10)).epsilon(1e-5)
    b = sp.Accountant().compose(sp.GeneralizedGaussian(2.0, 1.0)).epsilon(1e-5)
    assert a.estimate == b.estimate


def test_multi_level_heterogeneous_gaussians_equal_merged_gaussian():
    """Long heterogeneous composition through the multi-level path (no closed-form merge)."""
    acc = sp.Accountant(eps_error=0.02, delta_error=1e-12, merge_gaussians=False)
    acc.compose(sp.Gaussian(80.0), 20_000).compose(sp.Gaussian(120.0, sensitivity=2.0), 30_001)
    acc.compose(sp.Gaussian(3.0), 5)
    mu = math.sqrt(20_000 / 80.0 ** 2 + 30_001 * (2.0 / 120.0) ** 2 + 5 / 9.0)
    for delta in [1e-8, 1e-5, 1e-2]:
        iv = acc.epsilon(delta)
        assert "multi-level" in iv.method
        assert iv.lower <= gaussian_eps(mu, delta) <= iv.upper, (delta, iv)
        assert iv.width <= allowed_width(mu, delta, 0.02, iv)
    for eps in [0.5, 2.0, 4.0]:
        iv = acc.delta(eps)
        assert iv.lower <= gaussian_delta(mu, eps) <= iv.upper
