"""Validity of the sampled accountant: its intervals contain the analytic answer."""

import math
import warnings

import numpy as np
import pytest

import sampledprv as sp
from sampledprv.analytic.accountant import Accountant
from sampledprv.sampled import EmpiricalPRV, SampledAccountant, min_samples
from sampledprv.sampled.certification.envelopes import cp_lower, cp_upper, envelope
from sampledprv.sampled.histograms.histogram import coarsen, tail_counts
from sampledprv.sampled.histograms._numpy_histogram import histogram_of_samples

BASES = [sp.Gaussian(1.0), sp.Laplace(1.0), sp.GeneralizedGaussian(1.5, 2.0),
         sp.GeneralizedGaussian(3.0, 2.0)]
MECHS = BASES + [sp.PoissonSubsampled(b, 0.1) for b in BASES]


def _overlap(a, b) -> bool:
    return a.lower <= b.upper and b.lower <= a.upper


@pytest.mark.parametrize("mech", MECHS, ids=repr)
def test_envelope_contains_analytic(mech):
    k = 10
    acc = SampledAccountant(10**6, alpha=1e-3, seed=3, bins=4096, progress=False)
    acc.compose(mech, k)
    exact = Accountant(eps_error=1e-3).compose(mech, k)
    for delta in (1e-2, 1e-3):
        iv, ex = acc.epsilon(delta=delta), exact.epsilon(delta=delta)
        assert iv.certification == "probabilistic" and iv.confidence == 1 - 1e-3
        assert _overlap(iv, ex), (delta, iv, ex)
        assert iv.lower <= iv.estimate <= iv.upper
        # tightness sanity check (n = 1e6, k = 10): finite and within 30% of epsilon
        assert math.isfinite(iv.upper) and iv.width < 0.3 * max(1.0, ex.estimate)
    for eps in (0.5, 2.0):
        iv, ex = acc.delta(epsilon=eps), exact.delta(epsilon=eps)
        assert _overlap(iv, ex), (eps, iv, ex)


def test_heterogeneous_composition_both_directions():
    a, b = sp.PoissonSubsampled(sp.Gaussian(0.8), 0.2), sp.Laplace(2.0)
    acc = SampledAccountant(10**6, alpha=1e-3, seed=1, bins=4096, progress=False)
    acc.compose(a, 5).compose(b, 3).compose(a, 5)     # chained, repeated
    assert dict((repr(m), c) for m, c in acc.composition)[repr(a)] == 10
    exact = Accountant(eps_error=1e-3).compose(a, 10).compose(b, 3)
    iv, ex = acc.epsilon(1e-3), exact.epsilon(1e-3)
    assert _overlap(iv, ex), (iv, ex)
    assert iv.details["directions"] == ("remove", "add")
    # calling compose again later reuses the cached histograms of a
    h_before = acc.empirical(a).remove
    acc.compose(b, 1)
    assert acc.empirical(a).remove is h_before
    assert _overlap(acc.epsilon(1e-3), exact.compose(b, 1).epsilon(1e-3))


@pytest.mark.slow
def test_tightness_single_gaussian():
    # a numpy prototype of the envelope method: k=1, n=1e8 gave [4.341, 4.428] around the truth 4.377
    mech = sp.Gaussian(1.0)
    iv = SampledAccountant(10**8, alpha=1e-9, seed=0, progress=False).compose(mech).epsilon(1e-5)
    ex = Accountant(eps_error=1e-3).compose(mech).epsilon(1e-5)
    assert _overlap(iv, ex) and iv.width < 0.1, iv


def test_seed_method_contains_analytic_where_finite():
    mech = sp.Gaussian(1.0)
    acc = SampledAccountant(4 * 10**6, alpha=1e-3, seed=2, certify="seed", progress=False)
    acc.compose(mech, 1)
    exact = Accountant(eps_error=1e-3).compose(mech, 1)
    iv = acc.epsilon(delta=0.1)
    assert math.isfinite(iv.upper)
    assert _overlap(iv, exact.epsilon(0.1))
    for key in ("tau", "eta", "L", "h", "s", "t", "eta_terms"):
        assert key in iv.details
    assert _overlap(acc.delta(1.0), exact.delta(1.0))


def test_floor_warning_and_planner():
    n_min = min_samples(100, 1e-5, alpha=1e-9, bins=2**15, histograms=1)
    assert 2e8 < n_min < 5e8    # ~ k ln((2 bins + 3)/alpha) / delta
    acc = SampledAccountant(10**5, alpha=1e-9, progress=False, tail_bounds=False)
    with pytest.warns(RuntimeWarning, match="cannot give a finite upper bound"):
        iv = acc.compose(sp.Gaussian(10.0), 100).epsilon(1e-5)
    assert iv.upper == math.inf and iv.lower > 0
    # the built-in Renyi divergence bounds the unseen tail (the default): no floor
    acc = SampledAccountant(10**5, alpha=1e-9, progress=False)
    iv2 = acc.compose(sp.Gaussian(10.0), 100).epsilon(1e-5)
    assert math.isfinite(iv2.upper) and iv2.lower <= 4.3772 <= iv2.upper


def test_clopper_pearson_and_envelope_order():
    k = np.array([0, 3, 50, 100])
    up, lo = cp_upper(k, 100, 0.01), cp_lower(k, 100, 0.01)
    assert np.all(lo <= k / 100) and np.all(k / 100 <= up)
    assert up[-1] == 1.0 and lo[0] == 0.0
    rng = np.random.default_rng(0)
    hist = histogram_of_samples(np.r_[rng.normal(0, 1, 10**4), np.inf, np.inf], -3, 0.25, 24)
    assert tail_counts(hist)[0] == hist.n - hist.below - hist.neg_inf
    env = envelope(hist, 0.01)
    cu = np.cumsum(env.upper.probs[::-1])[::-1] + env.upper.p_inf   # P[Y_up >= t_j]
    cl = np.cumsum(env.lower.probs[::-1])[::-1] + env.lower.p_inf
    assert np.all(cl <= cu + 1e-15)
    assert math.isclose(env.upper.probs.sum() + env.upper.p_inf, 1.0)
    assert env.lower.p_inf > 0   # two +inf draws seen
    c2 = coarsen(hist, 4)
    assert c2.counts.sum() == hist.counts.sum() and c2.h == 1.0


def test_empirical_prv_merge_and_reuse():
    m = sp.PoissonSubsampled(sp.Laplace(1.0), 0.5)
    a1 = SampledAccountant(10**5, seed=1, bins=512, progress=False).compose(m)
    e1 = a1.empirical(m)
    assert not e1.symmetric and e1.n == 10**5
    e2 = EmpiricalPRV(e1.remove, e1.add, "copy")
    merged = e1 + e2
    assert merged.n == 2 * 10**5
    assert np.array_equal(merged.remove.counts, 2 * e1.remove.counts)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        iv = SampledAccountant(1, alpha=1e-3).compose(merged, 2).epsilon(1e-2)
    ex = Accountant(eps_error=1e-3).compose(m, 2).epsilon(1e-2)
    assert _overlap(iv, ex)


def test_bad_arguments():
    with pytest.raises(ValueError, match="certify"):
        SampledAccountant(100, certify="magic")
    with pytest.raises(ValueError, match="alpha"):
        SampledAccountant(100, alpha=0.0)
    with pytest.raises(ValueError, match="nothing composed"):
        SampledAccountant(100).epsilon(1e-5)
    with pytest.raises((TypeError, ValueError)):
        SampledAccountant(100).compose(object())
