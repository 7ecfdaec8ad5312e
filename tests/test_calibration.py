"""Calibration: bracketing + Brent on the estimate, then certification of the upper bound."""

import math

import pytest
from scipy.optimize import brentq
from scipy.stats import norm

import sampledprv as sp
from sampledprv.core.interval import Interval


def gaussian_eps(mu, delta):
    """Exact epsilon(delta) of mu-GDP."""
    f = lambda e: norm.cdf(-e / mu + mu / 2) - math.exp(e) * norm.cdf(-e / mu - mu / 2) - delta  # noqa
    if f(0.0) <= 0:
        return 0.0
    return math.inf if f(500.0) > 0 else brentq(f, 0.0, 500.0, xtol=1e-12)


class FakeAccountant(sp.PrivacyAccountant):
    """Closed-form Gaussian accountant with a deliberately wide, asymmetric interval
    (implements the accountant contract, which calibration checks by type)."""

    calls = 0

    def __init__(self, width=0.03):
        self.width, self.mus = width, []

    def compose(self, spec, count=1):
        FakeAccountant.calls += 1
        sigma = spec.scale / math.sqrt(2) if isinstance(spec, sp.GeneralizedGaussian) else spec.sigma
        self.mus += [1.0 / sigma] * count
        return self

    def epsilon(self, delta, direction=None):
        e = gaussian_eps(math.sqrt(sum(m * m for m in self.mus)), delta)
        if math.isinf(e):
            return Interval(500.0, math.inf, math.inf)
        return Interval(max(e - self.width, 0.0), e, e + self.width)

    @property
    def composition(self):
        return tuple((sp.Gaussian(1.0 / m), 1) for m in self.mus)

    def delta(self, epsilon, direction=None):  # pragma: no cover - calibration asks epsilon
        raise NotImplementedError

    def describe(self):
        return "closed-form Gaussian accountant (test double)"

    def settings(self):
        return {"type": "fake-gaussian"}

    def supports(self, mechanism):
        return isinstance(mechanism, (sp.Gaussian, sp.GeneralizedGaussian))


def test_fake_accountant_brent_and_certification():
    FakeAccountant.calls = 0
    r = sp.calibrate(lambda s: sp.Gaussian(s), count=10, epsilon=2.0, delta=1e-5,
                     accountant=FakeAccountant)
    assert r.interval.upper <= 2.0 and r.interval.upper >= 0.99 * 2.0
    # the estimate sits about `width` below the target
    assert r.interval.estimate == pytest.approx(2.0 - 0.03, abs=0.003)
    assert r.evaluations == FakeAccountant.calls < 40
    assert float(r) == r.x and r.mechanism == sp.Gaussian(r.x)
    assert r.count == 10 and r.delta == 1e-5 and r.slack >= 0


def test_exact_accountant_gives_exact_root():
    r = sp.calibrate(lambda s: sp.Gaussian(s), count=4, epsilon=1.0, delta=1e-6,
                     accountant=lambda: FakeAccountant(width=0.0), rtol=1e-6)
    assert gaussian_eps(2.0 / r.x, 1e-6) == pytest.approx(1.0, rel=1e-5)


def test_instance_is_a_template_and_counts_prior_spending():
    used = FakeAccountant().compose(sp.Gaussian(8.0), count=5)
    r_rest = sp.calibrate(lambda s: sp.Gaussian(s), count=5, epsilon=2.0, delta=1e-5, accountant=used)
    r_all = sp.calibrate(lambda s: sp.Gaussian(s), count=5, epsilon=2.0, delta=1e-5,
                         accountant=FakeAccountant)
    assert r_rest.x > r_all.x
    assert len(used.mus) == 5  # the template itself is untouched


def test_bracket_expands_in_both_directions():
    for bracket in [(1e-3, 2e-3), (1e3, 2e3)]:
        r = sp.calibrate(lambda s: sp.Gaussian(s), count=1, epsilon=1.0, delta=1e-5,
                         accountant=FakeAccountant, bracket=bracket)
        assert r.interval.upper <= 1.0 and r.interval.upper >= 0.99


@pytest.mark.parametrize("beta", [1.0, 1.5, 2.0, 3.0])
@pytest.mark.parametrize("q, count, eps", [(1.0, 1, 1.5), (1.0, 20, 2.0), (0.02, 200, 1.0)])
def test_acceptance_real_accountant(beta, q, count, eps):
    def make(s):
        gg = sp.GeneralizedGaussian(beta, s)
        return gg if q == 1.0 else sp.PoissonSubsampled(gg, q)

    r = sp.calibrate(make, count=count, epsilon=eps, delta=1e-5)
    assert r.interval.upper <= eps
    assert r.interval.upper >= 0.99 * eps
    again = sp.Accountant().compose(make(r.x), count=count).epsilon(delta=1e-5)
    assert again.upper == pytest.approx(r.interval.upper)


def test_calibrate_generalized_gaussian_helper_and_sensitivity():
    r1 = sp.calibrate_generalized_gaussian(1.5, epsilon=1.0, delta=1e-5, count=3)
    r2 = sp.calibrate_generalized_gaussian(1.5, epsilon=1.0, delta=1e-5, count=3, sensitivity=2.0)
    assert r2.x == pytest.approx(2 * r1.x, rel=3e-3)  # only sensitivity/scale matters
    assert r1.mechanism == sp.GeneralizedGaussian(1.5, r1.x)


def test_beta2_noise_multiplier_accounts_like_gaussian():
    for sigma, q, k in [(1.0, 1.0, 10), (0.8, 0.01, 500)]:
        gg = sp.GeneralizedGaussian.from_noise_multiplier(2.0, sigma)
        ga = sp.Gaussian(sigma)
        if q < 1:
            gg, ga = sp.PoissonSubsampled(gg, q), sp.PoissonSubsampled(ga, q)
        a = sp.Accountant().compose(gg, count=k).epsilon(delta=1e-6)
        b = sp.Accountant().compose(ga, count=k).epsilon(delta=1e-6)
        assert a.estimate == pytest.approx(b.estimate, abs=1e-3)
        assert b.lower <= a.estimate <= b.upper and a.lower <= b.estimate <= a.upper
    # and calibrating the GG scale at beta=2 gives sqrt(2) times the Gaussian sigma
    s = sp.calibrate_generalized_gaussian(2.0, epsilon=1.0, delta=1e-5, count=5).x
    g = sp.calibrate(lambda x: sp.Gaussian(x), count=5, epsilon=1.0, delta=1e-5).x
    assert s / math.sqrt(2) == pytest.approx(g, rel=3e-3)


def test_beta1_is_laplace():
    a = sp.Accountant().compose(sp.GeneralizedGaussian(1.0, 2.0), count=5).epsilon(delta=1e-5)
    b = sp.Accountant().compose(sp.Laplace(2.0), count=5).epsilon(delta=1e-5)
    assert a.estimate == pytest.approx(b.estimate, abs=0.02)


@pytest.mark.parametrize("make, match", [
    (lambda s: sp.GeneralizedGaussian(0.5, s), "beta"),
    (lambda s: sp.GeneralizedGaussian(float("nan"), s), "beta"),
    (lambda s: sp.GeneralizedGaussian(float("inf"), s), "beta"),
    (lambda s: sp.GeneralizedGaussian(2.0, -s), "scale"),
    (lambda s: sp.PoissonSubsampled(sp.GeneralizedGaussian(2.0, s), 1.5), "q"),
    (lambda s: sp.PoissonSubsampled(sp.GeneralizedGaussian(2.0, s), 0.0), "q"),
])
def test_bad_mechanism_parameters(make, match):
    with pytest.raises(ValueError, match=match):
        sp.calibrate(make, count=1, epsilon=1.0, delta=1e-5)


def test_bad_arguments():
    mk = lambda s: sp.Gaussian(s)  # noqa: E731
    for kwargs, match in [(dict(epsilon=0.0), "epsilon"), (dict(epsilon=float("nan")), "epsilon"),
                          (dict(delta=0.0), "delta"), (dict(delta=1.0), "delta"),
                          (dict(count=0), "count"), (dict(bracket=(2.0, 1.0)), "bracket"),
                          (dict(bracket=(-1.0, 1.0)), "bracket"), (dict(accountant=3), "accountant")]:
        args = dict(count=1, epsilon=1.0, delta=1e-5, accountant=FakeAccountant)
        args.update(kwargs)
        with pytest.raises(ValueError, match=match):
            sp.calibrate(mk, **args)
    with pytest.raises(ValueError, match="make_mechanism"):
        sp.calibrate(None, count=1, epsilon=1.0, delta=1e-5)
    with pytest.raises(ValueError, match="beta"):
        sp.calibrate_generalized_gaussian(0.5, epsilon=1.0, delta=1e-5)


def test_unreachable_target_names_the_fix():
    # pure DP mechanism whose epsilon does not depend on x: no x reaches 0.5
    with pytest.raises(ValueError, match="unreachable.*raise epsilon; or raise delta"):
        sp.calibrate(lambda x: sp.PureDP(1.0), count=1, epsilon=0.5, delta=1e-5,
                     bracket=(1.0, 10.0))


@pytest.mark.slow       # a dozen sampled accountants of 2e6 draws: about 90 s of CPU
def test_sampled_accountant_calibration():
    def factory():
        return sp.SampledAccountant(n_samples=2_000_000, seed=0, progress=False)

    r = sp.calibrate(lambda s: sp.GeneralizedGaussian(1.5, s), count=10, epsilon=2.0, delta=1e-3,
                     accountant=factory)
    assert r.interval.certification == "probabilistic"
    assert 0.99 * 2.0 <= r.interval.upper <= 2.0
    exact = sp.Accountant().compose(sp.GeneralizedGaussian(1.5, r.x), count=10).epsilon(delta=1e-3)
    assert exact.lower <= r.interval.upper  # the sampled upper bound covers the truth here


def test_sampled_accountant_without_finite_bound_names_the_fix():
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match="n_samples"):
            sp.calibrate(lambda s: sp.GeneralizedGaussian(1.5, s), count=10, epsilon=2.0,
                         delta=1e-3, accountant=lambda: sp.SampledAccountant(
                             n_samples=100_000, seed=0, progress=False, tail_bounds=False))
