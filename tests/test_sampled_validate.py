"""sp.validate: Monte Carlo check of analytic PRVs, and the sample-size planner."""

import math

import pytest
from scipy import stats

import sampledprv as sp
from sampledprv.sampled import LogDensityPair, plan_samples
from sampledprv.sampled.certification.floor import min_samples
from sampledprv.sampled.certification.prediction import samples_for_width


@pytest.mark.parametrize("mech", [sp.Gaussian(1.0), sp.Laplace(1.0),
                                  sp.GeneralizedGaussian(1.5, 2.0),
                                  sp.PoissonSubsampled(sp.GeneralizedGaussian(3.0, 2.0), 0.2),
                                  sp.RandomizedResponse(0.8), sp.ApproxDP(1.0, 0.01)], ids=repr)
def test_analytic_laws_pass(mech):
    rep = sp.validate(mech, 2 * 10**5, seed=4, progress=False)
    assert rep.passed(1e-4), rep
    assert set(rep.per_direction) == ({"remove"} if mech.symmetric else {"remove", "add"})


def test_wrong_law_is_detected():
    rep = sp.validate(sp.Gaussian(1.0), 10**6, reference=sp.Gaussian(1.03), progress=False)
    assert rep.pvalue < 1e-10 and rep.statistic > 0.005
    assert "KS distance" in str(rep)


def test_log_density_pair_against_reference():
    pair = LogDensityPair(stats.laplace.logpdf, lambda w: stats.laplace.logpdf(w, 1.0),
                          lambda r, n: r.laplace(0, 1, n), lambda r, n: r.laplace(1, 1, n))
    assert sp.validate(pair, 2 * 10**5, reference=sp.Laplace(1.0), progress=False).passed(1e-4)
    bad = sp.validate(pair, 2 * 10**5, reference=sp.Laplace(0.8), progress=False)
    assert not bad.passed(1e-4)


def test_validate_needs_an_analytic_reference():
    pair = LogDensityPair(stats.norm.logpdf, lambda w: stats.norm.logpdf(w, 1.0),
                          lambda r, n: r.standard_normal(n), lambda r, n: 1 + r.standard_normal(n))
    with pytest.raises(ValueError, match="reference"):
        sp.validate(pair, 1000)


def test_planner():
    # n_min ~ k ln(H (2 bins + 3) / alpha) / delta
    n = min_samples(10, 1e-4, alpha=1e-6, bins=1000, histograms=2)
    approx = 10 * math.log(2 * 2003 / 1e-6) / 1e-4
    assert abs(n / approx - 1) < 0.01
    assert samples_for_width(10**6, 0.4, 0.0, 0.1) == 16 * 10**6
    with pytest.raises(ValueError, match="discretization"):
        samples_for_width(10**6, 0.4, 0.2, 0.1)
    plan = plan_samples(sp.Gaussian(1.0), 4, 1e-3, alpha=1e-3, bins=4096,
                        target_width=0.05, pilot_n=2 * 10**5)
    assert plan.n_min < plan.n_target and "pilot" in str(plan)


def test_queries_of_one_state_share_its_envelopes_and_compose_clears_them():
    """Repeated queries answer from the cached composed envelopes of the state; after a
    compose the answer is a fresh accountant's for the new composition, and a pickled
    copy (cache dropped) answers the same."""
    import pickle

    def make():
        return sp.SampledAccountant(5000, alpha=1e-2, seed=7, bins=256, progress=False)
    acc = make().compose(sp.Gaussian(1.0), 2)
    first = acc.epsilon(1e-3)
    assert acc.epsilon(1e-3) == first
    assert pickle.loads(pickle.dumps(acc)).epsilon(1e-3) == first
    acc.compose(sp.Laplace(2.0))
    assert acc.epsilon(1e-3) == make().compose(sp.Gaussian(1.0), 2).compose(
        sp.Laplace(2.0)).epsilon(1e-3)
    assert acc.epsilon(1e-3).upper > first.upper
