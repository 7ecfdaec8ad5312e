"""The block reduction of k-of-T random allocation and the "every valid bound"
interval."""

import itertools
import math

import numpy as np
import pytest

import sampledprv as sp
from sampledprv.batch.random_allocation import BallsAndBins, RandomAllocation
from sampledprv.rdp import allocation as ra
from sampledprv.rdp.allocation import reduction_log_moment
from sampledprv.rdp.allocation_reduction import block_sizes
from allocation_reference import brute_occupancy_moment


@pytest.mark.parametrize("T,k", [(4, 2), (5, 2), (7, 3), (6, 6), (9, 1)])
def test_block_sizes(T, k):
    s = block_sizes(T, k)
    assert len(s) == k and sum(s) == T and max(s) - min(s) <= 1


def test_block_sizes_refuse_bad_input():
    with pytest.raises(ValueError, match="selected"):
        block_sizes(3, 4)


@pytest.mark.parametrize("T,k", [(4, 2), (5, 2), (6, 3)])
def test_random_permutation_then_one_per_block_is_a_uniform_subset(T, k):
    """The combinatorial heart of the proof, by enumeration: over all permutations and
    all one-per-block choices every k-subset appears equally often."""
    sizes = block_sizes(T, k)
    starts = np.cumsum((0,) + sizes[:-1])
    counts = {}
    for perm in itertools.permutations(range(T)):
        blocks = [perm[s:s + z] for s, z in zip(starts, sizes)]
        for choice in itertools.product(*blocks):
            key = tuple(sorted(choice))
            counts[key] = counts.get(key, 0) + 1
    assert len(counts) == math.comb(T, k)
    assert len(set(counts.values())) == 1


def _ratio_all(x, mu, T, k):
    """dP/dQ(x) of k-of-T allocation with Gaussian steps (x: (n, T) under Q)."""
    g = np.exp(mu * x - mu * mu / 2)
    return np.mean([np.prod(g[:, list(S)], axis=1)
                    for S in itertools.combinations(range(T), k)], axis=0)


@pytest.mark.parametrize("T,k", [(4, 2), (5, 2)])
def test_pointwise_jensen_against_brute_force(T, k):
    """At every point x: dP/dQ(x) equals the average over permutations of the block
    pair's ratio (the mixture identity), and f of it is at most the average of f
    (hockey-stick at several eps, both directions, and x^a): the inequality of the
    theorem before integrating over Q, checked exactly on 200 points."""
    mu = 0.9
    rng = np.random.default_rng(1)
    x = rng.normal(size=(200, T)) + rng.integers(0, 2, size=(200, T)) * mu
    sizes = block_sizes(T, k)
    starts = np.cumsum((0,) + sizes[:-1])
    g = np.exp(mu * x - mu * mu / 2)
    ratios = []
    for perm in itertools.permutations(range(T)):
        r = np.ones(x.shape[0])
        for s, z in zip(starts, sizes):
            r = r * np.mean(g[:, list(perm[s:s + z])], axis=1)
        ratios.append(r)
    ratios = np.array(ratios)
    exact = _ratio_all(x, mu, T, k)
    assert np.allclose(ratios.mean(axis=0), exact, rtol=1e-12)
    fs = [lambda r, e=e: np.maximum(r - math.exp(e), 0.0) for e in (0.0, 0.5, 1.5)]
    fs += [lambda r, e=e: np.maximum(1.0 - math.exp(e) * r, 0.0) for e in (0.0, 0.5)]
    fs += [lambda r, a=a: r ** a for a in (2, 3, 5)]
    for f in fs:
        assert np.all(f(exact) <= f(ratios).mean(axis=0) * (1 + 1e-12) + 1e-15)




@pytest.mark.parametrize("T,k,a", [(4, 2, 2), (4, 2, 4), (5, 2, 3), (6, 3, 3)])
def test_reduction_moment_above_brute_force(T, k, a):
    g = sp.Gaussian(1.1)
    exact = brute_occupancy_moment(T, k, a, g.mu)
    red = reduction_log_moment(a, T, k, g)
    assert red >= exact
    assert red == pytest.approx(sum(ra.remove_log_moment(a, s, 1, g)
                                    for s in block_sizes(T, k)), rel=1e-9)


def test_reduction_tightens_the_moments_beyond_the_exact_budget():
    """Beyond the occupancy recursion's budget the block reduction replaces Hoeffding's
    comparison where it is smaller (T = 100, k = 10, order 12: 120 balls, Hoeffding
    has no value at all)."""
    g = sp.Gaussian(0.5)
    v = ra.remove_log_moment(12, 100, 10, g)
    assert math.isfinite(v) and v == reduction_log_moment(12, 100, 10, g)


def test_dominating_compositions_hook():
    assert RandomAllocation(1.0, 10, 1).dominating_compositions() == ()
    (name, blocks), = RandomAllocation(1.0, 11, 3).dominating_compositions()
    assert "block reduction" in name
    assert sorted((s.steps, c) for s, c in blocks) == [(3, 1), (4, 2)]
    assert all(isinstance(s, BallsAndBins) and s.sigma == 1.0 for s, _ in blocks)


def test_interval_is_the_best_of_every_bound_and_names_the_winners():
    """k-of-T allocation: in each direction the upper end is the smallest of the own
    envelopes, the block reduction, the RDP conversion and (remove) the tilted draws, the
    lower end the largest of the own and tilted ones; the interval's ends are the maxima
    over the directions; the method names both winners; the interval contains a
    large-sample estimate."""
    spec = RandomAllocation(1.0, 4, 2)
    acc = sp.SampledAccountant(20_000, alpha=1e-3, seed=3, bins=1024)
    acc.compose(spec, 2)
    iv = acc.epsilon(1e-3)
    cands = iv.details["candidates"]
    assert set(cands) == {"remove", "add"}
    assert len(cands["remove"]["upper"]) == 4          # own, reduction, RDP, tilted
    assert "tilted sampling" in cands["remove"]["lower"]
    assert iv.upper == max(min(c["upper"].values()) for c in cands.values())
    assert iv.lower == min(iv.upper, max(max(c["lower"].values()) for c in cands.values()))
    assert iv.method.startswith(f"upper end: {iv.details['upper_end']}")
    assert f"lower end: {iv.details['lower_end']}" in iv.method
    # the truth, from 5e5 draws of the loss of 2 epochs (a check, not a certificate):
    # delta at the upper end at most the target, at the lower end at least (MC noise)
    rng = np.random.default_rng(0)
    at_up, at_low = [], []
    for d in ("remove", "add"):
        y = sum(spec.numpy_loss_sampler(d)(rng, 500_000) for _ in range(2))
        at_up.append(np.mean(np.maximum(1.0 - np.exp(iv.upper - y), 0.0)))
        at_low.append(np.mean(np.maximum(1.0 - np.exp(iv.lower - y), 0.0)))
    assert max(at_up) <= 1e-3 * 1.1 and max(at_low) >= 1e-3 * 0.9
    dl = acc.delta(1.0)
    assert dl.lower <= dl.upper and "upper end:" in dl.method


def test_single_direction_and_delta_queries_and_laplace_steps():
    """One direction at a time (the tilted draws only for "remove"), delta queries, and
    steps without a tilted law (Laplace: own envelopes and block reduction at alpha/2,
    RDP); each interval contains a large-sample estimate of its own quantity."""
    rng = np.random.default_rng(11)
    for spec, n_tilt in ((RandomAllocation(1.0, 4, 2), 4), (RandomAllocation(
            None, 4, 2, base=sp.Laplace(1.0)), 3)):
        acc = sp.SampledAccountant(20_000, alpha=1e-3, seed=5, bins=1024).compose(spec, 1)
        alt = acc._alternatives()
        assert alt.alpha_each == pytest.approx(1e-3 / (3 if n_tilt == 4 else 2))
        for d in ("remove", "add"):
            y = spec.numpy_loss_sampler(d)(rng, 400_000)
            iv = acc.delta(1.0, direction=d)
            est = float(np.mean(np.maximum(1.0 - np.exp(1.0 - y), 0.0)))
            assert iv.lower <= est * 1.05 and est * 0.95 <= iv.upper
            assert set(iv.details["candidates"]) == {d}
            has_tilt = "tilted sampling" in iv.details["candidates"][d]["upper"]
            assert has_tilt == (d == "remove" and n_tilt == 4)
            e = acc.epsilon(1e-2, direction=d)
            assert np.mean(np.maximum(1.0 - np.exp(e.upper - y), 0.0)) <= 1e-2 * 1.05
            assert np.mean(np.maximum(1.0 - np.exp(e.lower - y), 0.0)) >= 1e-2 * 0.95


@pytest.mark.slow
def test_coverage_of_the_best_of_every_bound_300_seeds():
    """The accountant's interval for k-of-T allocation (own envelopes, block reduction,
    RDP and tilted draws, alpha split over the sampled ones) over 300 seeds at n = 2000,
    alpha = 0.05: delta(1) and epsilon(0.01) against references from 4e6 plain draws per
    direction (their own errors are far below the intervals' widths); the misses stay
    within the 99.9% quantile of Bin(300, 0.05)."""
    import warnings
    from scipy.optimize import brentq
    from scipy.stats import binom
    spec = RandomAllocation(1.0, 4, 2)
    rng = np.random.default_rng(21)
    ys = [spec.numpy_loss_sampler(d)(rng, 4_000_000) for d in ("remove", "add")]

    def delta_ref(e):
        return max(float(np.mean(np.maximum(1.0 - np.exp(e - y), 0.0))) for y in ys)
    d_true = delta_ref(1.0)
    e_true = brentq(lambda e: delta_ref(e) - 1e-2, 0.0, 10.0)
    misses_d = misses_e = 0
    for s in range(300):
        acc = sp.SampledAccountant(2000, alpha=0.05, seed=1000 + s, bins=256,
                                   progress=False).compose(spec, 1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            d = acc.delta(1.0)
            e = acc.epsilon(1e-2)
        misses_d += not (d.lower <= d_true <= d.upper)
        misses_e += not (e.lower <= e_true <= e.upper)
    limit = int(binom.ppf(1 - 1e-3, 300, 0.05))
    assert misses_d <= limit and misses_e <= limit
