"""LogDensityPair / PrivacyLossSampler: end-to-end use and bad input."""

import math
import warnings

import numpy as np
import pytest
from scipy import stats

import sampledprv as sp
from sampledprv.analytic.accountant import Accountant
from sampledprv.sampled import LogDensityPair, PrivacyLossSampler, SampledAccountant


def gaussian_pair(mu=1.0, **kw):
    return LogDensityPair(lambda w: stats.norm.logpdf(w), lambda w: stats.norm.logpdf(w, mu),
                          lambda r, n: r.standard_normal(n),
                          lambda r, n: mu + r.standard_normal(n), **kw)


def _overlap(a, b):
    return a.lower <= b.upper and b.lower <= a.upper


def test_log_density_pair_matches_gaussian():
    acc = SampledAccountant(10**6, alpha=1e-3, seed=0, bins=2048, progress=False)
    iv = acc.compose(gaussian_pair(), 4).epsilon(1e-3)
    ex = Accountant(eps_error=1e-3).compose(sp.Gaussian(1.0), 4).epsilon(1e-3)
    assert _overlap(iv, ex) and iv.width < 0.3, (iv, ex)
    assert iv.details["directions"] == ("remove", "add")


def test_vector_outputs_dimension():
    d = 3
    shift = np.array([0.6, 0.0, 0.8])          # L2 norm 1

    def logp(w):
        return -0.5 * np.sum(w * w, axis=1) - d / 2 * math.log(2 * math.pi)

    def logq(w):
        return -0.5 * np.sum((w - shift) ** 2, axis=1) - d / 2 * math.log(2 * math.pi)

    pair = LogDensityPair(logp, logq, lambda r, n: r.standard_normal((n, d)),
                          lambda r, n: shift + r.standard_normal((n, d)), symmetric=True)
    iv = SampledAccountant(10**6, alpha=1e-3, bins=2048, progress=False).compose(pair).epsilon(1e-3)
    ex = Accountant(eps_error=1e-3).compose(sp.Gaussian(1.0)).epsilon(1e-3)
    assert _overlap(iv, ex)


def test_privacy_loss_sampler():
    mu = 0.5
    s = PrivacyLossSampler(lambda r, n: mu * mu / 2 + mu * r.standard_normal(n))
    assert s.symmetric
    iv = SampledAccountant(10**6, alpha=1e-3, bins=2048, progress=False).compose(s, 10).epsilon(1e-3)
    ex = Accountant(eps_error=1e-3).compose(sp.Gaussian(1 / mu), 10).epsilon(1e-3)
    assert _overlap(iv, ex)


def test_nan_log_density_names_w():
    def logq(w):
        out = stats.norm.logpdf(w, 1.0)
        out[w > 2.0] = np.nan
        return out
    pair = LogDensityPair(stats.norm.logpdf, logq, lambda r, n: r.standard_normal(n),
                          lambda r, n: 1 + r.standard_normal(n))
    with pytest.raises(ValueError, match=r"NaN at w = "):
        SampledAccountant(1000).compose(pair)


def test_non_normalized_detected():
    pair = LogDensityPair(stats.norm.logpdf, lambda w: stats.norm.logpdf(w, 1.0) + 0.5,
                          lambda r, n: r.standard_normal(n), lambda r, n: 1 + r.standard_normal(n))
    with pytest.raises(ValueError, match="normaliz"):
        SampledAccountant(1000).compose(pair)


def test_non_normalized_quadrature_warning_without_samplers():
    pair = LogDensityPair(lambda w: stats.norm.logpdf(w) + 1.0, lambda w: stats.norm.logpdf(w, 1.0))
    with pytest.warns(RuntimeWarning, match="integrates to"):
        pair.check()


@pytest.mark.parametrize("bad", [lambda r, n: r.standard_normal(n + 1),
                                 lambda r, n: r.standard_normal((n, 2, 2)),
                                 lambda r, n: np.full(n, np.nan)])
def test_bad_sampler_output(bad):
    pair = LogDensityPair(stats.norm.logpdf, lambda w: stats.norm.logpdf(w, 1.0), bad,
                          lambda r, n: 1 + r.standard_normal(n))
    with pytest.raises(ValueError, match="sample_p"):
        SampledAccountant(1000).compose(pair)


def test_bad_loss_sampler_output():
    with pytest.raises(ValueError, match="shape"):
        SampledAccountant(1000).compose(PrivacyLossSampler(lambda r, n: np.zeros((n, 2))))
    with pytest.raises(ValueError, match="NaN"):
        SampledAccountant(1000).compose(PrivacyLossSampler(lambda r, n: np.full(n, np.nan)))
    with pytest.raises(ValueError, match="not privacy losses"):   # sign flipped: E[e^-Y] > 1
        SampledAccountant(1000).compose(
            PrivacyLossSampler(lambda r, n: -0.5 + r.standard_normal(n)))


def test_nan_during_sampling_is_reported():
    calls = {"n": 0}

    def sample(r, n):
        calls["n"] += 1
        y = 0.125 + 0.5 * r.standard_normal(n)
        if calls["n"] > 3:        # passes check(), fails in the run
            y[n // 2] = np.nan
        return y
    acc = SampledAccountant(10**5, alpha=1e-3, bins=256, progress=False)
    acc.compose(PrivacyLossSampler(sample))
    with pytest.raises(ValueError, match="NaN"):
        acc.epsilon(1e-2)


def test_constructor_validation():
    with pytest.raises(ValueError, match="logp"):
        LogDensityPair(None, stats.norm.logpdf)
    with pytest.raises(ValueError, match="sample_p"):
        LogDensityPair(stats.norm.logpdf, stats.norm.logpdf, sample_p=3)


def test_kernel_form_inputs_run_in_fused_kernel():
    from numba import njit
    from sampledprv.sampled.draws import rng as R

    @njit
    def logp(w):
        return -0.5 * w * w

    @njit
    def logq(w):
        return -0.5 * (w - 1.0) ** 2

    @njit
    def draw_p(state):
        return R.normal(state)

    @njit
    def draw_q(state):
        return 1.0 + R.normal(state)

    @njit
    def fill(state, out):
        for i in range(out.shape[0]):
            out[i] = 0.5 + R.normal(state)

    pair = LogDensityPair(logp, logq, draw_p, draw_q, kernel=True)
    assert callable(pair.loss_sampler("remove"))
    ex = Accountant(eps_error=1e-3).compose(sp.Gaussian(1.0), 4).epsilon(1e-3)
    for mech in (pair, PrivacyLossSampler(fill, kernel=True)):
        iv = SampledAccountant(10**6, alpha=1e-3, bins=2048, progress=False).compose(
            mech, 4).epsilon(1e-3)
        assert _overlap(iv, ex), (mech, iv, ex)
    with pytest.raises(ValueError, match="kernel=True"):
        LogDensityPair(logp, logq, kernel=True)


def test_log_concave_without_samplers():
    gg = stats.gennorm(1.5, scale=2.0)
    pair = LogDensityPair(gg.logpdf, lambda w: gg.logpdf(w - 1.0))
    iv = SampledAccountant(4 * 10**5, alpha=1e-3, bins=2048, progress=False).compose(
        pair, 3).epsilon(1e-2)
    ex = Accountant(eps_error=1e-3).compose(sp.GeneralizedGaussian(1.5, 2.0), 3).epsilon(1e-2)
    assert _overlap(iv, ex), (iv, ex)
    x = pair._sampler("p")(np.random.default_rng(0), 10**5)
    assert stats.kstest(x, gg.cdf).pvalue > 1e-4


def test_not_log_concave_without_samplers_raises():
    t2 = stats.t(2)
    pair = LogDensityPair(t2.logpdf, lambda w: t2.logpdf(w - 1.0))
    with pytest.raises(ValueError, match="log-concave"):
        SampledAccountant(10**5, progress=False).compose(pair).epsilon(1e-2)
