"""Our certified intervals contain prv-accountant's and dp-accounting's answers on DP-SGD
settings.  The peers are test dependencies installed by CI."""

from __future__ import annotations

import pytest

import sampledprv as sp

prv_accountant = pytest.importorskip("prv_accountant")
dp_accounting = pytest.importorskip("dp_accounting")
from dp_accounting.pld import pld_privacy_accountant  # noqa: E402
from dp_accounting_fast import fast_gaussian_pld  # noqa: E402

SETTINGS = [(0.8, 1e-3, 100), (0.8, 0.05, 1000), (1.0, 0.01, 10_000), (2.0, 0.05, 100),
            (1.5, 4e-3, 100_000), (2.0, 1e-3, 10_000)]


def prv_eps(sigma, q, k, delta):
    mech = prv_accountant.PoissonSubsampledGaussianMechanism(
        noise_multiplier=sigma, sampling_probability=q)
    acc = prv_accountant.PRVAccountant(prvs=[mech], max_self_compositions=[k],
                                       eps_error=0.01, delta_error=delta / 1000)
    return acc.compute_epsilon(delta=delta, num_self_compositions=[k])


def dpa_eps(sigma, q, k, delta):
    acc = pld_privacy_accountant.PLDAccountant()
    with fast_gaussian_pld():        # dp-accounting's PLD bit for bit, in less time
        acc.compose(dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma)), k)
    return acc.get_epsilon(delta)


@pytest.mark.parametrize("sigma,q,k", SETTINGS)
def test_interval_contains_peers(sigma, q, k):
    delta = 1e-5
    iv = sp.Accountant(eps_error=0.01, delta_error=1e-10).compose(
        sp.PoissonSubsampled(sp.Gaussian(sigma), q), k).epsilon(delta)
    lo, est, hi = prv_eps(sigma, q, k, delta)
    assert iv.lower <= est <= iv.upper
    # dp-accounting's answer is a pessimistic (upper) estimate on a coarser grid
    assert iv.lower <= dpa_eps(sigma, q, k, delta) <= iv.upper
    # never wider than prv-accountant at the same eps_error
    assert iv.width <= (hi - lo) + 1e-9


@pytest.mark.parametrize("sigma,q,k", [(1.0, 0.01, 1000), (0.8, 4e-3, 10_000)])
def test_gg_beta2_noise_multiplier_matches_peers(sigma, q, k):
    """beta=2 via from_noise_multiplier accounts exactly like the Gaussian."""
    gg = sp.GeneralizedGaussian.from_noise_multiplier(2.0, sigma)
    iv = sp.Accountant(eps_error=0.01, delta_error=1e-10).compose(
        sp.PoissonSubsampled(gg, q), k).epsilon(1e-5)
    assert iv.lower <= prv_eps(sigma, q, k, 1e-5)[1] <= iv.upper
    assert iv.lower <= dpa_eps(sigma, q, k, 1e-5) <= iv.upper
