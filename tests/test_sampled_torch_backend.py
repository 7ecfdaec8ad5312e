"""Torch sampling backend: same law as the Numba kernels (two-sample chi-square tests),
certified intervals on CPU torch, user torch log-density pairs."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import sampledprv as sp
from sampledprv.sampled.histograms.window import choose_window
from sampledprv.sampled.histograms.kernels import loss_histogram
from sampledprv.sampled.draws.torch_draws import TorchLogDensityPair
from sampledprv.sampled.histograms.torch_histogram import torch_loss_histogram

from exact_curves import gaussian_eps

torch = pytest.importorskip("torch")

N = 100_000


def _chi2_pvalue(a, b) -> float:
    """Two-sample chi-square test of equal laws on histograms with equal totals; bins
    merged left to right until each group holds at least 40 draws of the two together."""
    ca = np.concatenate([[a.below], a.counts, [a.above, a.pos_inf, a.neg_inf]])
    cb = np.concatenate([[b.below], b.counts, [b.above, b.pos_inf, b.neg_inf]])
    ga, gb, sa, sb = [], [], 0, 0
    for x, y in zip(ca, cb):
        sa, sb = sa + x, sb + y
        if sa + sb >= 40:
            ga.append(sa), gb.append(sb)
            sa = sb = 0
    ga[-1] += sa
    gb[-1] += sb
    ga, gb = np.array(ga, float), np.array(gb, float)
    stat = float(np.sum((ga - gb) ** 2 / (ga + gb)))
    return float(stats.chi2.sf(stat, len(ga) - 1))


def _pair(mech_numba, mech_torch, d, seed=3):
    lo, h, nb = choose_window(mech_numba, d, N, 512, np.random.default_rng(0))
    a = loss_histogram(mech_numba, direction=d, n=N, lo=lo, h=h, bins=nb, seed=seed,
                       progress=False)
    b = torch_loss_histogram(mech_torch, d, n=N, lo=lo, h=h, bins=nb, seed=seed + 1,
                             device="cpu")
    assert b.n == N and int(b.counts.sum()) + b.below + b.above + b.pos_inf + b.neg_inf == N
    return a, b


SPECS = [sp.Gaussian(0.8), sp.Laplace(1.3), sp.GeneralizedGaussian(beta=3.0, scale=1.0),
         sp.PoissonSubsampled(sp.Gaussian(1.0), q=0.2),
         sp.PoissonSubsampled(sp.Laplace(0.7), q=0.3),
         sp.PoissonSubsampled(sp.GeneralizedGaussian(beta=1.5, scale=1.5), q=0.1)]


@pytest.mark.parametrize("mech", SPECS, ids=repr)
@pytest.mark.parametrize("d", ["remove", "add"])
def test_torch_histograms_match_numba_law(mech, d):
    a, b = _pair(mech, mech, d)
    assert _chi2_pvalue(a, b) > 1e-5


def test_the_chi_square_test_detects_a_different_law():
    mech = sp.PoissonSubsampled(sp.GeneralizedGaussian(beta=1.5, scale=1.5), q=0.1)
    other = sp.PoissonSubsampled(sp.GeneralizedGaussian(beta=1.5, scale=1.45), q=0.1)
    a, b = _pair(mech, other, "remove")
    assert _chi2_pvalue(a, b) < 1e-8


def _torch_gaussian_pair(mu: float) -> TorchLogDensityPair:
    def logp(w):
        return -0.5 * w * w

    def logq(w):
        return -0.5 * (w - mu) ** 2

    return TorchLogDensityPair(
        logp, logq,
        sample_p=lambda g, n: torch.randn(n, generator=g, device=g.device, dtype=torch.float64),
        sample_q=lambda g, n: mu + torch.randn(n, generator=g, device=g.device,
                                               dtype=torch.float64),
        name="torch Gaussian")


@pytest.mark.parametrize("d", ["remove", "add"])
def test_user_torch_pair_matches_builtin_gaussian(d):
    a, b = _pair(sp.Gaussian(1 / 0.9), _torch_gaussian_pair(0.9), d)   # mu = 1/sigma
    assert _chi2_pvalue(a, b) > 1e-5


def test_torch_backend_certified_interval_contains_exact_cpu():
    mu, k, delta = 0.5, 8, 1e-2
    exact = gaussian_eps(mu * math.sqrt(k), delta)
    for mech in (sp.Gaussian(1.0 / mu), _torch_gaussian_pair(mu)):
        acc = sp.SampledAccountant(400_000, alpha=1e-6, seed=5, bins=2048, backend="torch",
                                   device="cpu", progress=False)
        iv = acc.compose(mech, k).epsilon(delta=delta)
        assert iv.lower <= exact <= iv.upper, (mech, iv, exact)
        assert iv.width < 0.5 * exact


def test_torch_backend_is_reproducible_and_refuses_other_specs():
    mech = sp.PoissonSubsampled(sp.Gaussian(1.0), q=0.2)
    a = torch_loss_histogram(mech, "add", n=50_000, lo=-3, h=0.01, bins=600, seed=9,
                             device="cpu")
    b = torch_loss_histogram(mech, "add", n=50_000, lo=-3, h=0.01, bins=600, seed=9,
                             device="cpu")
    assert np.array_equal(a.counts, b.counts)
    with pytest.raises(ValueError, match="backend='numba'"):
        sp.SampledAccountant(1000, backend="torch", device="cpu").compose(
            sp.RandomizedResponse(p=0.7), 1)
    with pytest.raises(ValueError, match="backend must be"):
        sp.SampledAccountant(1000, backend="jax")
