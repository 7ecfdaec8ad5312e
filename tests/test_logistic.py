"""The logistic mechanism: a family added as one module through the additive-noise hook."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

import sampledprv as sp
from sampledprv.cli import format_mechanism, parse_mechanism
from sampledprv.mechanisms.additive import _bisect_inverse
from sampledprv.mechanisms.logistic import LOGISTIC_NOISE
from sampledprv.mechanisms.laws import loss_pair
from sampledprv.rdp import renyi_divergence
from sampledprv.sampled import loss_histogram


def _exact_loss_cdf(y, d):
    """P0[l <= y] by quadrature of the logistic density over {z: l(z) <= y}."""
    f = stats.logistic.pdf
    return integrate.quad(lambda z: f(z) * (LOGISTIC_NOISE.loss(np.array([z]), d)[0] <= y),
                          -60, 60, points=[0.0, d], limit=400)[0]


def test_spec_validation_and_export():
    assert sp.Logistic is sp.mechanisms.Logistic
    with pytest.raises(ValueError, match="scale"):
        sp.Logistic(0.0)
    with pytest.raises(ValueError, match="sensitivity"):
        sp.Logistic(1.0, sensitivity=-1.0)


@pytest.mark.parametrize("d", [0.1, 0.5, 3.0])
def test_loss_inverse_closed_form_and_bisection(d):
    y = np.linspace(-0.999 * d, 0.999 * d, 9)
    z = LOGISTIC_NOISE.loss_inverse(y, d)
    np.testing.assert_allclose(LOGISTIC_NOISE.loss(z, d), y, atol=1e-12)
    np.testing.assert_allclose(_bisect_inverse(LOGISTIC_NOISE, y, d), z, rtol=1e-9,
                               atol=1e-9)


def test_exact_law_against_quadrature():
    under_p, under_q = loss_pair(sp.Logistic(2.0, sensitivity=1.5))
    d = 0.75
    for y in (-0.5, -0.1, 0.0, 0.3, 0.7):
        assert under_p.cdf(np.array([y]))[0] == pytest.approx(_exact_loss_cdf(y, d), abs=1e-8)
    assert under_p.cdf(np.array([d]))[0] == 1.0 and under_p.cdf(np.array([-d]))[0] == 0.0
    y = np.linspace(-0.7, 0.7, 5)
    np.testing.assert_allclose(under_q.cdf(y), 1.0 - under_p.cdf(-y), atol=1e-15)


def test_analytic_interval_brackets_the_pure_dp_bound_and_is_symmetric():
    acc = sp.Accountant().compose(sp.Logistic(2.0), count=10)
    iv = acc.epsilon(1e-5)
    assert 0 < iv.lower <= iv.upper < 10 * 0.5       # better than basic composition
    lap = sp.Accountant().compose(sp.Laplace(2.0), count=10).epsilon(1e-5)
    assert iv.upper < lap.upper                      # logistic loss never reaches +-d


def test_renyi_bound_above_exact_divergence():
    d, order = 0.5, 3.0
    f = stats.logistic.pdf
    exact = math.log(integrate.quad(lambda z: f(z) ** order * f(z - d) ** (1 - order),
                                    -80, 80, limit=400)[0]) / (order - 1)
    bound = renyi_divergence(sp.Logistic(2.0), order, "remove")
    assert exact <= bound <= exact + 0.2
    assert renyi_divergence(sp.Logistic(2.0), order, "add") == bound
    sub = renyi_divergence(sp.PoissonSubsampled(sp.Logistic(2.0), q=0.1), order, "remove")
    assert 0 < sub < bound


def test_cli_string_round_trip():
    for spec in (sp.Logistic(2.5), sp.Logistic(0.3, sensitivity=2.0)):
        assert parse_mechanism(format_mechanism(spec)).build() == spec
    assert parse_mechanism("logistic scale=2").build() == sp.Logistic(2.0)


def _chi2_ok(hist, law, n):
    edges = hist.lo + hist.h * np.arange(len(hist.counts) + 1)
    cdf = law.cdf(edges)
    expect = n * np.diff(cdf)
    keep = expect > 20
    obs = hist.counts[keep]
    exp = expect[keep] * obs.sum() / expect[keep].sum()
    chi2 = float(((obs - exp) ** 2 / exp).sum())
    return stats.chi2.sf(chi2, keep.sum() - 1) > 1e-4


@pytest.mark.parametrize("direction", ["remove", "add"])
def test_numba_sampler_matches_exact_law(direction):
    mech = sp.Logistic(2.0)
    under_p, under_q = loss_pair(mech)
    law = under_p if direction == "remove" else under_q.negated()
    n = 200_000
    h = loss_histogram(mech, direction=direction, n=n, lo=-0.5, h=0.02, bins=50, seed=3,
                       progress=False)
    assert h.below == h.above == 0
    assert _chi2_ok(h, law, n)


def test_subsampled_numba_and_torch_samplers_match_exact_law():
    mech = sp.PoissonSubsampled(sp.Logistic(0.5), q=0.2)
    from sampledprv.mechanisms.laws import privacy_loss
    law = privacy_loss(mech, "remove")
    n = 200_000
    h = loss_histogram(mech, direction="remove", n=n, lo=-0.5, h=0.02, bins=120, seed=5,
                       progress=False)
    assert _chi2_ok(h, law, n)
    pytest.importorskip("torch")
    from sampledprv.sampled.histograms.torch_histogram import torch_loss_histogram
    ht = torch_loss_histogram(mech, direction="remove", n=n, lo=-0.5, h=0.02, bins=120,
                              seed=5, device="cpu")
    assert _chi2_ok(ht, law, n)


def test_sampled_accountant_contains_the_analytic_interval():
    mech = sp.PoissonSubsampled(sp.Logistic(0.5), q=0.1)
    exact = sp.Accountant().compose(mech, count=100).epsilon(1e-5)
    iv = sp.SampledAccountant(n_samples=200_000, seed=1, progress=False) \
        .compose(mech, count=100).epsilon(1e-5)
    assert iv.lower <= exact.upper and exact.lower <= iv.upper
    assert math.isfinite(iv.upper)


def test_calibrate_finds_the_scale():
    res = sp.calibrate(lambda s: sp.Logistic(s), count=10, epsilon=2.0, delta=1e-5)
    assert res.interval.upper <= 2.0
    assert sp.Accountant().compose(sp.Logistic(res.x * 0.98), count=10).epsilon(1e-5) \
        .upper > 2.0 * 0.999
