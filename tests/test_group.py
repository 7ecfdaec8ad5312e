"""Group and user-level privacy: sp.Group against closed forms, plain specs and
dp-accounting's mixture-of-Gaussians PLD."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import sampledprv as sp
from sampledprv.mechanisms._mixtures import MixtureOfGaussians

Q, STEPS, SIGMA, DELTA = 0.01, 1000, 2.0, 1e-5
DPSGD = sp.PoissonSubsampled(sp.Gaussian(SIGMA), Q)


def test_group_of_one_is_the_mechanism():
    g = sp.Group(DPSGD, size=1)
    assert g.spec is DPSGD and g.exact
    a = sp.Accountant().compose(g.spec, STEPS).epsilon(DELTA)
    b = sp.Accountant().compose(DPSGD, STEPS).epsilon(DELTA)
    assert (a.lower, a.estimate, a.upper) == (b.lower, b.estimate, b.upper)


def test_subsampled_gaussian_group_is_the_binomial_mixture():
    g = sp.Group(DPSGD, size=4)
    assert isinstance(g.spec, MixtureOfGaussians) and g.exact and "exact" in g.method
    assert g.spec.sensitivities == (0.0, 1.0, 2.0, 3.0, 4.0)
    assert np.allclose(g.spec.probs, stats.binom.pmf(np.arange(5), 4, Q), rtol=1e-12)


def test_additive_noise_group_scales_the_sensitivity_exactly():
    g = sp.Group(sp.Gaussian(2.0, 0.5), size=3)
    assert g.spec == sp.Gaussian(2.0, 1.5) and g.exact
    # Gaussian: the group's delta(eps) is the closed form with mu = g Delta / sigma
    mu = 0.75
    eps = 1.0
    exact = stats.norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * stats.norm.cdf(-eps / mu - mu / 2)
    iv = sp.Accountant().compose(g.spec).delta(eps)
    assert iv.lower <= exact <= iv.upper
    assert sp.Group(sp.Laplace(1.0), 2).spec == sp.Laplace(1.0, 2.0)


def test_pure_and_approximate_dp_group_bounds():
    g = sp.Group(sp.PureDP(0.5), 3)
    assert g.spec == sp.PureDP(1.5) and not g.exact
    g = sp.Group(sp.ApproxDP(1.0, 1e-6), 3)
    assert g.spec.epsilon == 3.0
    assert g.spec.delta == pytest.approx(1e-6 * (1 + math.e + math.e ** 2), rel=1e-12)
    assert sp.Group(sp.RandomizedResponse(0.75), 2).spec == sp.PureDP(2 * math.log(3))


def test_refusals_name_the_fix():
    with pytest.raises(ValueError, match="size"):
        sp.Group(DPSGD, size=0)
    with pytest.raises(ValueError, match="LogDensityPair"):
        sp.Group(sp.PoissonSubsampled(sp.Laplace(1.0), 0.1), size=2)
    with pytest.raises(ValueError, match="FinitePair"):
        sp.Group(sp.FinitePair((0.5, 0.5), (0.4, 0.6)), size=2)
    with pytest.raises(ValueError, match="mechanism"):
        sp.Group("gaussian", size=2)


def test_user_level_report():
    rep = sp.user_level(sp.Gaussian(4.0), 10, [1, 1, 2, 3, 3, 3], 1e-5)
    assert set(rep.intervals) == {1, 2, 3}
    assert rep.users[3] == pytest.approx(0.5)
    assert rep.worst_case is rep.intervals[3]
    # each group is the Gaussian with sensitivity k composed 10 times: mu = sqrt(10) k / 4
    for k, iv in rep.intervals.items():
        ref = sp.Accountant().compose(sp.Gaussian(4.0, float(k)), 10).epsilon(1e-5)
        assert (iv.lower, iv.upper) == (ref.lower, ref.upper)
    assert rep.intervals[1].upper < rep.intervals[2].lower < rep.intervals[3].lower
    with pytest.raises(ValueError, match="records_per_user"):
        sp.user_level(sp.Gaussian(4.0), 10, {}, 1e-5)


@pytest.mark.slow
@pytest.mark.parametrize("size", [2, 4, 16])
def test_group_matches_dp_accounting_mixture_pld(size):
    """Within 1% of dp-accounting's MixtureOfGaussians PLD at discretisation 1e-4, and the
    certified interval meets dp-accounting's value once its discretisation error (at most
    STEPS * 1e-4 in epsilon: each step's loss rounded up by at most the interval) is
    allowed for."""
    dp_accounting = pytest.importorskip("dp_accounting")
    from dp_accounting.pld import pld_privacy_accountant

    from dp_accounting_fast import fast_mixture_pld

    g = sp.Group(DPSGD, size=size)
    iv = sp.Accountant().compose(g.spec, STEPS).epsilon(DELTA)
    acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
    ev = dp_accounting.dp_event.MixtureOfGaussiansDpEvent(
        SIGMA, list(g.spec.sensitivities), list(g.spec.probs))
    with fast_mixture_pld():      # dp-accounting's numbers, bit for bit, in less time
        acc.compose(ev, STEPS)
    ref = acc.get_epsilon(DELTA)
    assert iv.lower <= ref * 1.0 and ref <= iv.upper + STEPS * 1e-4
    assert abs(iv.lower - ref) <= 0.01 * ref and abs(iv.upper - ref) <= 0.01 * ref


@pytest.mark.parametrize("adjacency", ["ADD", "REMOVE"])
def test_fast_mixture_inversion_is_bitwise_dp_accountings(adjacency):
    """tests/dp_accounting_fast.py's vectorised bisection returns exactly what
    dp-accounting's recursive one does (the mixture PLD above is built with it), on
    group mixtures and a random one, at the precisions the PLD uses."""
    pytest.importorskip("dp_accounting")
    from dp_accounting.pld import privacy_loss_mechanism as plm
    from dp_accounting_fast import fast_mixture_pld

    rng = np.random.default_rng(7)
    kind = plm.AdjacencyType[adjacency]
    cases = [(SIGMA, sp.Group(DPSGD, size=k).spec) for k in (2, 16)]
    mixes = [(s, list(spec.sensitivities), list(spec.probs)) for s, spec in cases]
    w = rng.random(5)
    mixes.append((0.7, [0.0, 0.3, 1.0, 1.7, 2.5], list(w / w.sum())))
    for sigma, sens, probs in mixes:
        mech = plm.MixtureGaussianPrivacyLoss(sigma, sens, probs, adjacency_type=kind)
        lo, hi = sorted(mech.privacy_loss(x) for x in (-3.0 * sigma, 3.0 * sigma + 2.5))
        losses = np.sort(rng.uniform(lo, hi, 3000))
        losses[:40] = losses[40]                        # ties, as on a PLD's grid
        for precision in (1e-6, 1e-3):
            ref = mech.inverse_privacy_losses(losses, precision)
            with fast_mixture_pld():
                got = mech.inverse_privacy_losses(losses, precision)
            assert got.dtype == ref.dtype and np.array_equal(got, ref), (sigma, precision)
    assert "_inverse_privacy_losses_with_range" in plm.MixtureGaussianPrivacyLoss.__dict__


def test_group_spec_round_trips_through_dp_accounting_events():
    pytest.importorskip("dp_accounting")
    g = sp.Group(DPSGD, size=3)
    ev = sp.to_dp_event(g.spec)
    assert type(ev).__name__ == "MixtureOfGaussiansDpEvent"
    assert list(ev.sensitivities) == [0.0, 1.0, 2.0, 3.0]
    back = sp.from_dp_event(ev)
    assert back.mechanisms == ((g.spec, 1),) or dict(back.mechanisms) == {g.spec: 1}


def test_group_epsilon_from_the_composed_curve_is_a_valid_bound():
    acc = sp.Accountant().compose(sp.Gaussian(4.0), 10)
    for g in (1, 2, 3):
        ge = sp.group_epsilon(acc, g, 1e-5)
        exact = sp.Accountant().compose(sp.Gaussian(4.0, float(g)), 10).epsilon(1e-5)
        assert ge.epsilon >= exact.lower                  # never below the true value
        # the certificate it states holds
        d_up = acc.delta(ge.eps_record).upper
        assert d_up * sum(math.exp(i * ge.eps_record) for i in range(g)) <= 1e-5
    pure = sp.group_epsilon(sp.Accountant().compose(sp.PureDP(0.5)), 3, 1e-6)
    assert 1.5 * 0.99 <= pure.epsilon <= 1.5 + 0.1        # about g * eps for pure DP
    # any composition, e.g. subsampled Laplace where no exact group pair is offered
    lap = sp.Accountant().compose(sp.PoissonSubsampled(sp.Laplace(2.0), 0.05), 100)
    assert math.isfinite(sp.group_epsilon(lap, 4, 1e-5).epsilon)
    with pytest.raises(ValueError, match="group_epsilon"):
        sp.Group(sp.PoissonSubsampled(sp.Laplace(2.0), 0.05), 4)
