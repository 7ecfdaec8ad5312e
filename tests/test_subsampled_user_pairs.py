"""Poisson and fixed-size subsampling of user pairs (LogDensityPair, PrivacyLossSampler)
in the sampled accountant (sampled/certification/subsampled_inputs.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import sampledprv as sp
from sampledprv.mechanisms.registry import UnsupportedRelationError
from sampledprv.mechanisms.laws import privacy_loss
from sampledprv.mechanisms.relations import resolve_bounds, resolve_relation
from sampledprv.rdp import renyi_divergence
from sampledprv.sampled.certification.subsampled_inputs import (SplicedSymmetricPair,
                                                                SubsampledUserPair)
from sampledprv.sampled.histograms.histogram import tail_counts


def gauss_pair(shift: float = 1.0, sigma: float = 1.0, renyi: bool = True,
               symmetric: bool = True) -> sp.LogDensityPair:
    """N(shift, sigma^2) against N(0, sigma^2) with its exact Renyi divergences."""
    return sp.LogDensityPair(
        logp=lambda w: -0.5 * ((w - shift) / sigma) ** 2,
        logq=lambda w: -0.5 * (w / sigma) ** 2,
        sample_p=lambda r, n: shift + sigma * r.standard_normal(n),
        sample_q=lambda r, n: sigma * r.standard_normal(n),
        symmetric=symmetric, name=f"gauss{shift:g}",
        renyi=(lambda a, d: a * shift ** 2 / (2 * sigma ** 2)) if renyi else None)


def test_spec_accepts_user_pairs_and_still_refuses_other_objects():
    g = gauss_pair()
    assert sp.PoissonSubsampled(g, q=0.01).mechanism is g
    assert sp.FixedSizeSubsampled(g, 10, 100).mechanism is g
    with pytest.raises(ValueError, match="LogDensityPair"):
        sp.PoissonSubsampled(object(), q=0.01)


def test_analytic_accountant_refuses_with_a_pointer_to_the_sampled_one():
    m = sp.PoissonSubsampled(gauss_pair(), q=0.01)
    with pytest.raises(ValueError, match="SampledAccountant"):
        sp.Accountant().compose(m)
    assert not sp.Accountant().supports(m)
    with pytest.raises(ValueError, match="SampledAccountant"):
        sp.Accountant(neighbouring="substitute").compose(
            sp.FixedSizeSubsampled(gauss_pair(), 5, 50))
    assert sp.SampledAccountant(1000).supports(m)


def test_relations_a_user_pair_cannot_certify_are_refused():
    g = gauss_pair()
    with pytest.raises(UnsupportedRelationError, match="substitut"):
        sp.SampledAccountant(1000, neighbouring="substitute").compose(
            sp.PoissonSubsampled(g, q=0.1))
    with pytest.raises(UnsupportedRelationError, match="fixed batch size"):
        sp.SampledAccountant(1000).compose(sp.FixedSizeSubsampled(g, 10, 100))
    with pytest.raises(UnsupportedRelationError, match="symmetric"):
        sp.SampledAccountant(1000, neighbouring="substitute").compose(
            sp.FixedSizeSubsampled(gauss_pair(symmetric=False), 10, 100))


@pytest.mark.parametrize("direction", ["remove", "add"])
@pytest.mark.parametrize("form", ["density", "loss", "loss-asymmetric"])
def test_subsampled_draws_have_the_exact_law(direction, form):
    """KS test of the subsampled loss drawn from the user's pair against the exact law of
    PoissonSubsampled(Gaussian) (sampledprv.mechanisms.laws)."""
    q, mu = 0.3, 1.5
    if form == "density":
        base = gauss_pair(mu)
    else:
        rem = lambda r, n: mu * mu / 2 + mu * r.standard_normal(n)  # noqa: E731
        base = sp.PrivacyLossSampler(rem, rem if form == "loss-asymmetric" else None)
    src = resolve_relation(sp.PoissonSubsampled(base, q), "add_remove")
    assert isinstance(src, SubsampledUserPair)
    y = src.numpy_loss_sampler(direction)(np.random.default_rng(3), 20000)
    law = privacy_loss(sp.PoissonSubsampled(sp.Gaussian(1 / mu), q), direction)
    assert stats.kstest(y, lambda x: law.cdf(np.asarray(x, dtype=float))).pvalue > 1e-4


def test_amplified_renyi_bound_is_an_upper_bound_and_tight_for_symmetric_pairs():
    q = 0.05
    sym = resolve_relation(sp.PoissonSubsampled(gauss_pair(), q), "add_remove")
    asym = resolve_relation(sp.PoissonSubsampled(gauss_pair(symmetric=False), q), "add_remove")
    spec = sp.PoissonSubsampled(sp.Gaussian(1.0), q)
    for order in (1.5, 2.0, 3.0, 8.0, 20.0):
        for d in ("remove", "add"):
            exact = renyi_divergence(spec, order, d)
            assert sym.renyi(order, d) >= exact * (1 - 1e-9)
            assert asym.renyi(order, d) >= exact * (1 - 1e-9)
        if order == int(order):       # binomial expansion: exact at integer orders
            assert sym.renyi(order, "remove") == pytest.approx(
                renyi_divergence(spec, order, "remove"), rel=1e-6)
    assert "Thm 6" in asym.renyi_source and "symmetric pair" in sym.renyi_source
    lo, hi = sym.loss_range[0]
    assert lo == pytest.approx(math.log1p(-q)) and hi == math.inf
    assert sym.loss_range[1][1] == pytest.approx(-math.log1p(-q))


def test_poisson_user_pair_brackets_the_analytic_value_as_tightly_as_the_builtin():
    """The acceptance check at small n: a LogDensityPair equal to the Gaussian under
    PoissonSubsampled gives an interval that contains the analytic value and is at most
    1.5x as wide as the built-in spec's sampled interval at the same n."""
    q, k, n, delta = 0.05, 20, 200_000, 1e-4
    exact = sp.Accountant().compose(sp.PoissonSubsampled(sp.Gaussian(1.0), q), k).epsilon(delta)
    user = sp.SampledAccountant(n, alpha=1e-3, seed=5).compose(
        sp.PoissonSubsampled(gauss_pair(), q), k).epsilon(delta)
    builtin = sp.SampledAccountant(n, alpha=1e-3, seed=5).compose(
        sp.PoissonSubsampled(sp.Gaussian(1.0), q), k).epsilon(delta)
    assert user.lower <= exact.upper and exact.lower <= user.upper
    assert user.width <= 1.5 * builtin.width
    assert "amplified by Poisson subsampling" in user.method


def test_fixed_size_user_pair_brackets_both_analytic_ends():
    """Fixed-size batches of a symmetric user pair under substitution: the upper end is at
    least the analytic symmetric dominating pair's lower end, the lower end at most the
    analytic member's upper end (the Gaussian pair with the substitution shift 2C)."""
    b, n_data, k, n, delta = 5, 100, 10, 200_000, 1e-4
    spec = sp.FixedSizeSubsampled(sp.Gaussian(1.0), b, n_data)
    up_pair, low_pair = resolve_bounds(spec, "substitute")
    s_iv = sp.Accountant().compose(up_pair, k).epsilon(delta)
    m_iv = sp.Accountant().compose(low_pair, k).epsilon(delta)
    user = sp.SampledAccountant(n, alpha=1e-3, seed=2, neighbouring="substitute").compose(
        sp.FixedSizeSubsampled(gauss_pair(2.0), b, n_data), k).epsilon(delta)
    assert user.upper >= s_iv.lower and user.lower <= m_iv.upper
    assert user.lower <= m_iv.upper <= s_iv.upper <= user.upper + 0.5
    # the method names the user's member pair, not the clipped-sum pair of the built-ins
    assert "of the user's pair (P, Q)" in user.method and "2C" not in user.method


def test_spliced_histogram_takes_each_side_from_its_own_direction():
    g = gauss_pair(2.0)
    spec = sp.FixedSizeSubsampled(g, 10, 100)
    up, member = resolve_bounds(spec, "substitute")
    assert isinstance(up, SplicedSymmetricPair) and isinstance(member, SubsampledUserPair)
    acc = sp.SampledAccountant(50_000, alpha=1e-3, seed=1, bins=256)
    acc._bank.entries[("x",)] = [spec, 1]    # bins_now() reads the composition
    emp = up.empirical(acc._bank, 0)
    hist = emp.remove
    edges = hist.lo + hist.h * np.arange(hist.counts.size + 1)
    t = tail_counts(hist)
    assert hist.n == 50_000 and emp.symmetric
    # at t <= 0: P[S >= t] = P[A >= t]; at t > 0: P[S >= t] = P[R >= t]; fractions close
    rng = np.random.default_rng(0)
    a = member.numpy_loss_sampler("add")(rng, 200_000)
    r = member.numpy_loss_sampler("remove")(rng, 200_000)
    for x in (-0.02, -0.005, 0.0, 0.005, 0.02):
        j = int(np.argmin(np.abs(edges - x)))
        ref = np.mean(a >= edges[j]) if edges[j] <= 0 else np.mean(r >= edges[j])
        assert t[j] / hist.n == pytest.approx(ref, abs=0.01)
    # its Renyi bound covers the member's remove divergence
    assert up.renyi(2.0, "add") >= member.renyi(2.0, "remove")


@pytest.mark.slow
def test_coverage_of_the_subsampled_user_pair_over_seeds():
    """Small n, alpha = 0.1: the certified delta(eps) interval of a subsampled Gaussian
    pair misses the analytic value at most as often as the binomial bound allows."""
    q, k, eps, n, seeds, alpha = 0.2, 3, 0.5, 4000, 60, 0.1
    exact = sp.Accountant().compose(sp.PoissonSubsampled(sp.Gaussian(1.0), q), k).delta(eps)
    misses = 0
    pair = gauss_pair()     # one pair object: its seed-free input checks run once
    for s in range(seeds):
        iv = sp.SampledAccountant(n, alpha=alpha, seed=100 + s, bins=256).compose(
            sp.PoissonSubsampled(pair, q), k).delta(eps)
        misses += not (iv.lower <= exact.upper and exact.lower <= iv.upper)
    # at most alpha per run; 3 standard deviations above alpha * seeds
    assert misses <= alpha * seeds + 3 * math.sqrt(seeds * alpha * (1 - alpha))


@pytest.mark.slow
def test_kernel_form_pairs_are_fused_and_draw_the_same_law():
    """kernel=True pairs get a jitted fill of the subsampled loss (the parallel kernel),
    with the law of the numpy path."""
    from numba import njit

    from sampledprv.sampled.draws import rng as R
    from sampledprv.sampled.draws.user_fills import fill_as_sampler

    mu, q = 1.5, 0.3

    @njit
    def lp(w):
        return -0.5 * (w - mu) ** 2

    @njit
    def lq(w):
        return -0.5 * w * w

    @njit
    def sp_(state):
        return mu + R.normal(state)

    @njit
    def sq_(state):
        return R.normal(state)

    @njit
    def fill(state, out):
        for i in range(out.shape[0]):
            out[i] = mu * mu / 2 + mu * R.normal(state)

    spec = sp.PoissonSubsampled(sp.Gaussian(1 / mu), q)
    for base in (sp.LogDensityPair(lp, lq, sp_, sq_, symmetric=True, kernel=True),
                 sp.PrivacyLossSampler(fill, kernel=True)):
        src = resolve_relation(sp.PoissonSubsampled(base, q), "add_remove")
        for d in ("remove", "add"):
            f = src.loss_sampler(d)
            assert hasattr(f, "py_func")          # a jitted fill, not the numpy path
            y = fill_as_sampler(f)(np.random.default_rng(1), 20000)
            law = privacy_loss(spec, d)
            assert stats.kstest(y, lambda x: law.cdf(np.asarray(x, dtype=float))).pvalue > 1e-4
