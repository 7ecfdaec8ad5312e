"""Fixed-size batches under substitution in the sampled accountant: the fused sampler of
the symmetric dominating pair S draws its law, and the accountant's two ends (S for the
upper one, the attained member for the lower one) bracket the exact curves."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats

import sampledprv as sp
from sampledprv.mechanisms.base import NeighbouringRelation
from sampledprv.mechanisms.substitution import SymmetricDominatingPair, fixed_size_bounds
from sampledprv.mechanisms.relations import loss_pair
from sampledprv.sampled.histograms.kernels import loss_histogram

#: failure rate of the goodness-of-fit tests (fixed, numpyro style)
_P_FAIL = 1e-4


@pytest.mark.parametrize("base", [sp.Gaussian(1.0), sp.Laplace(1.5), sp.DiscreteGaussian(2.0)])
def test_fused_sampler_draws_the_symmetrized_law(base):
    """Chi-square of the fused kernel's histogram of S against S's exact law (bins from
    its CDF; the atom at 0 inside one bin)."""
    member = fixed_size_bounds(sp.FixedSizeSubsampled(base, 2, 20),
                               NeighbouringRelation.SUBSTITUTE)[1]
    pair = SymmetricDominatingPair(member)
    law = loss_pair(pair)[0]
    n, lo, h, bins = 400_000, -4.01, 0.02, 401
    hist = loss_histogram(pair, direction="remove", n=n, lo=lo, h=h, bins=bins, seed=11,
                          progress=False)
    edges = lo + h * np.arange(bins + 1)
    cdf = law.cdf(edges)
    expected = n * np.concatenate([[cdf[0]], np.diff(cdf), [1.0 - cdf[-1]]])
    observed = np.concatenate([[hist.below], hist.counts, [hist.above]]).astype(float)
    keep = expected > 5.0
    rest_e, rest_o = expected[~keep].sum(), observed[~keep].sum()
    e = np.append(expected[keep], rest_e)
    o = np.append(observed[keep], rest_o)
    chi2 = float(np.sum((o - e) ** 2 / np.maximum(e, 1e-300)))
    p = stats.chi2.sf(chi2, df=keep.sum())
    assert p > _P_FAIL, (base, chi2, keep.sum())
    # and S really has mass below, at and above 0
    assert hist.counts[(edges[:-1] < 0) & (edges[1:] > 0)].sum() > 0
    assert hist.below + hist.counts[edges[1:] < 0].sum() > 0
    assert hist.above + hist.counts[edges[:-1] > 0].sum() > 0


def test_sampled_fixed_size_brackets_the_exact_ends():
    """Certified analytic brackets of both pairs (3-fold discrete Gaussian, width 2e-3);
    over seeds at a small n the sampled upper end is above S's exact epsilon (so above
    its analytic lower end) and the sampled lower end below the member's (so below its
    analytic upper end)."""
    spec = sp.FixedSizeSubsampled(sp.DiscreteGaussian(1.5), 1, 10)
    up_pair, low_pair = fixed_size_bounds(spec, NeighbouringRelation.SUBSTITUTE)
    k, delta = 3, 1e-3
    exact = {}
    for name, pair in (("upper", up_pair), ("lower", low_pair)):
        a = sp.Accountant(eps_error=1e-3)
        a.compose(pair, k)
        exact[name] = a.epsilon(delta)
        assert exact[name].upper - exact[name].lower < 3e-3, exact[name]
    assert exact["upper"].lower >= exact["lower"].upper            # S is strictly above
    for seed in range(6):
        acc = sp.SampledAccountant(200_000, alpha=1e-3, seed=seed, neighbouring="substitute")
        acc.compose(spec, k)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            iv = acc.epsilon(delta)
        assert iv.upper >= exact["upper"].lower, (seed, iv)
        assert iv.lower <= exact["lower"].upper, (seed, iv)
        assert iv.confidence == pytest.approx(1.0 - 1e-3)
        assert "symmetric dominating pair" in iv.method and "alpha/2" in iv.method
    # same answers for delta(epsilon) and per direction (S is symmetric)
    d = acc.delta(1.0, direction="add")
    assert d.lower <= d.estimate <= d.upper


def test_sampled_fixed_size_views_and_refusals():
    """Composing works and supports() says so; single-pair views (empirical) refuse with a
    message naming the two ends; the torch backend and asymmetric noise are refused."""
    spec = sp.FixedSizeSubsampled(sp.DiscreteGaussian(2.0), 1, 20)
    acc = sp.SampledAccountant(10_000, alpha=1e-3, seed=1, neighbouring="substitute")
    assert acc.supports(spec)
    acc.compose(spec, 3)
    with pytest.raises(ValueError, match="two ends"):
        acc.empirical(spec)
    with pytest.raises(ValueError, match="symmetric noise"):
        acc.compose(sp.FixedSizeSubsampled(sp.Binomial(20, 0.3), 1, 20), 3)
    with pytest.raises(ValueError, match="add_remove"):
        sp.SampledAccountant(10_000, alpha=1e-3).compose(spec, 3)
