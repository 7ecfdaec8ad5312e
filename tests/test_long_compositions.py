"""Long compositions (k up to 1e8) through the evolving (multi-level, randomized regridding)
path: certified intervals bracket exact and peer references."""

from __future__ import annotations

import math

import pytest

import sampledprv as sp
from sampledprv.rdp import RdpAccountant

from dp_accounting_fast import fast_gaussian_pld
from exact_curves import gaussian_eps


@pytest.mark.parametrize("k", [10**7, 10**8])
def test_k_fold_gaussian_brackets_exact_up_to_1e8(k):
    """No closed-form merge: 1e8 discretized Gaussians composed by the multi-level tree."""
    sigma = math.sqrt(k) / 2.0                     # composed mu = 2
    acc = sp.Accountant(eps_error=0.02, delta_error=1e-12, merge_gaussians=False)
    acc.compose(sp.Gaussian(sigma), k)
    for delta in (1e-3, 1e-4):
        iv = acc.epsilon(delta)
        assert "multi-level" in iv.method
        truth = gaussian_eps(2.0, delta)
        assert iv.lower <= truth <= iv.upper, (k, delta, iv, truth)
        # width: 2 eps_error plus the realised terms: the epsilon shift (the
        # discretization shifts' certified mean errors, a fraction of a percent of
        # eps_error here) and what the delta error terms cost (the CDF round-off grows
        # like k * 1e-15)
        shift = iv.details["epsilon_shift"]["remove"]
        assert 0 < shift <= 0.01 * 0.02
        err = iv.details["delta_error_upper"] + iv.details["delta_error_lower"]
        assert iv.width <= 2 * (0.02 + shift) + 40 * err / delta


def test_subsampled_gaussian_1e7_against_dp_accounting():
    dp_accounting = pytest.importorskip("dp_accounting")
    from dp_accounting.pld import pld_privacy_accountant

    sigma, q, k, delta = 2.0, 1e-3, 10**7, 1e-5
    acc = sp.Accountant(eps_error=0.02, delta_error=1e-12)
    iv = acc.compose(sp.PoissonSubsampled(sp.Gaussian(sigma), q=q), k).epsilon(delta)
    pld = pld_privacy_accountant.PLDAccountant()
    with fast_gaussian_pld():    # dp-accounting's PLD bit for bit, in less time
        pld.compose(dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma)), k)
    peer = pld.get_epsilon(delta)        # pessimistic: an upper estimate
    assert iv.lower <= peer <= iv.upper + 0.05, (iv, peer)


def test_subsampled_gaussian_1e8_against_renyi_bound():
    """At 1e8 steps the certified RDP bound (an upper bound on the truth) must lie above
    our lower end, and the PLD interval is tighter than RDP."""
    mech = sp.PoissonSubsampled(sp.Gaussian(4.0), q=1e-4)
    k, delta = 10**8, 1e-3
    iv = sp.Accountant(eps_error=0.02, delta_error=1e-12).compose(mech, k).epsilon(delta)
    rdp = RdpAccountant().compose(mech, k).epsilon(delta)
    assert iv.lower <= rdp and iv.upper <= rdp, (iv, rdp)
    assert iv.width <= 2 * 0.02 + 0.01


def test_dp_sgd_1e8_against_dp_accounting_and_renyi():
    """The benchmark setting at k = 1e8 (sigma 0.8, q 4e-3, delta 1e-5): dp-accounting's
    pessimistic PLD estimate and the certified RDP bound are upper bounds on the truth,
    so our certified lower end must lie below both; the interval is 2 eps_error wide
    plus the realised error terms.  (dp-accounting's optimistic estimate is no usable
    lower reference here: at k = 1e7 it returns 0 and at 1e8 it overflows.)"""
    dp_accounting = pytest.importorskip("dp_accounting")
    from dp_accounting.pld import pld_privacy_accountant

    sigma, q, k, delta = 0.8, 4e-3, 10**8, 1e-5
    mech = sp.PoissonSubsampled(sp.Gaussian(sigma), q=q)
    iv = sp.Accountant(eps_error=0.01, delta_error=1e-10).compose(mech, k).epsilon(delta)
    assert "multi-level" in iv.method and iv.details["directions"] == ("remove", "add")
    # dp-accounting on a 2e-4 loss grid (its default is 1e-4): its pessimistic estimate
    # only grows on a coarser grid, so it stays an upper reference, 1.34 above our lower
    # end (1.07 on the default grid, epsilon ~ 3259) in 40 percent of the time
    pld = pld_privacy_accountant.PLDAccountant(value_discretization_interval=2e-4)
    with fast_gaussian_pld():    # dp-accounting's PLD bit for bit, in less time
        pld.compose(dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma)), k)
    peer = pld.get_epsilon(delta)
    rdp = RdpAccountant().compose(mech, k).epsilon(delta)
    assert iv.lower <= iv.estimate <= iv.upper
    assert iv.lower <= peer and iv.lower <= rdp, (iv, peer, rdp)
    err = iv.details["delta_error_upper"] + iv.details["delta_error_lower"]
    assert err < 1e-3 * delta
    assert iv.width <= 2 * 0.01 + 1e-3
