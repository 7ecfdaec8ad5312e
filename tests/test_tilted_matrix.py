"""Tilted sampling of the fixed-bin matrix mechanism's tail: the law of P_a against brute
force, coverage against quadrature, and the accountant's use of it."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

import sampledprv as sp
from sampledprv.batch.matrix_mechanism import MatrixMechanism
from sampledprv.rdp import matrix_moments as mm
from sampledprv.sampled.certification import tilted_matrix as tm
from sampledprv.sampled.certification.alternatives import has_alternatives
from sampledprv.sampled.certification.tilted import tilted_delta

from allocation_reference import balls_and_bins_delta, coverage_misses

C4 = tuple(np.array([1, .5, .25, .125]) / np.linalg.norm([1, .5, .25, .125]))

# (bins, steps, c_col, order): band path (b >= 2w + 1) and listed path (b < 2w + 1)
CASES = [(5, 10, (1.0, 0.6), 3), (7, 14, C4, 3), (3, 6, (1.0,), 4), (6, 13, C4, 2),
         (4, 9, (1.0, 0.5, 0.3), 3), (2, 4, (1.0,), 3)]


def _exact_mixture(S: np.ndarray, a: int) -> dict:
    """Count vector -> summed weight of its a-tuples, exp(sum_{r<s} S_{j_r j_s}) each."""
    b = S.shape[0]
    out: dict = {}
    for tup in itertools.product(range(b), repeat=a):
        lw = sum(S[tup[r], tup[s]] for r in range(a) for s in range(r + 1, a))
        key = tuple(np.bincount(tup, minlength=b))
        out[key] = out.get(key, 0.0) + math.exp(lw)
    return out


def _chi2_pvalue(mix: dict, counts: np.ndarray) -> float:
    """p-value of the drawn count vectors against the exact mixture weights."""
    keys = list(mix)
    p = np.array([mix[k] for k in keys])
    p /= p.sum()
    index = {k: i for i, k in enumerate(keys)}
    obs = np.zeros(len(keys))
    for row in counts:
        obs[index[tuple(int(x) for x in row)]] += 1       # KeyError: |c| != a
    n = counts.shape[0]
    chi = float(((obs - n * p) ** 2 / (n * p)).sum())
    return float(stats.chi2.sf(chi, len(keys) - 1))


def _spec(b, n, c_col, sigma=1.3):
    return MatrixMechanism(sigma, n, sp.FixedBin(b), c_col=c_col)


@pytest.mark.parametrize("b,n,c_col,a", CASES)
def test_log_z_and_component_law_equal_enumeration(b, n, c_col, a):
    """log Z_a by listing all b^a tuples lies in the law's bracket (and agrees with the
    band transfer of the Renyi moments); the drawn count vectors follow the exact mixture
    weights (chi-square over every count vector)."""
    S = _spec(b, n, c_col).scaled_gram()
    mix = _exact_mixture(S, a)
    log_z = math.log(sum(mix.values()) / b ** a)
    lo, hi = tm.tilted_log_moment(S, a)
    assert lo <= log_z <= hi and hi - lo < 1e-9
    w = max(mm.cyclic_bandwidth(S), 1)
    if b >= 2 * w + 1:
        assert abs(mm.band_fixed_bin_log_moments(S, a)[a] - log_z) < 1e-9
    _, counts = tm.fixed_bin_tilted_counts(S, a, 60_000, seed=3)
    assert _chi2_pvalue(mix, counts) > 1e-4


def test_wrong_weights_would_be_detected():
    """The chi-square check of the test above sees a tilt to the wrong order."""
    S = _spec(5, 10, (1.0, 0.6)).scaled_gram()
    mix = _exact_mixture(S, 3)
    _, counts = tm.fixed_bin_tilted_counts(S * 1.1, 3, 60_000, seed=3)
    assert _chi2_pvalue(mix, counts) < 1e-6


@pytest.mark.parametrize("b,n,c_col,a", [(5, 10, (1.0, 0.6), 3), (7, 16, C4, 3),
                                         (4, 9, (1.0, 0.5, 0.3), 2)])
def test_losses_equal_n_dimensional_simulation(b, n, c_col, a):
    """The tilted losses against an independent simulation in the n steps: the tuple's
    count vector c from the exact weights, y = M c + sigma z, L = privacy_loss_at(y)
    (two-sample Kolmogorov-Smirnov)."""
    spec = _spec(b, n, c_col)
    mix = _exact_mixture(spec.scaled_gram(), a)
    keys = list(mix)
    p = np.array([mix[k] for k in keys])
    p /= p.sum()
    C = np.zeros((n, n))
    ptr, idx, val = spec._columns()
    for i in range(n):
        C[idx[ptr[i]:ptr[i + 1]], i] = val[ptr[i]:ptr[i + 1]]
    M = np.stack([C[:, j::b].sum(axis=1) for j in range(b)], axis=1)
    rng = np.random.default_rng(5)
    m = 8000
    comp = np.array(keys)[rng.choice(len(keys), size=m, p=p)]
    ys = comp @ M.T + spec.sigma * rng.standard_normal((m, n))
    ref = np.array([spec.privacy_loss_at(y) for y in ys])
    law = spec.tilted_law(a)
    got, _ = law.draw(np.random.default_rng(6), 20_000)
    assert stats.ks_2samp(got, ref).pvalue > 1e-3
    # the untilted law (order 1 would be P itself) is far from it: the test can fail
    plain = spec.numpy_loss_sampler("remove")(np.random.default_rng(7), 20_000)
    assert stats.ks_2samp(plain, ref).pvalue < 1e-6


def test_change_of_measure_identity_against_plain_draws():
    """Z_a E_{P_a}[e^{-(a-1)L} 1{L > t}] = P(L > t) for the banded pair, against the
    spec's own plain sampler (within 5 standard errors)."""
    spec = _spec(7, 16, C4, sigma=1.0)
    plain = spec.numpy_loss_sampler("remove")(np.random.default_rng(1), 400_000)
    for a in (2, 3):
        law = spec.tilted_law(a)
        L, W = law.draw(np.random.default_rng(2), 200_000)
        z = math.exp(0.5 * sum(law.log_scale))
        for t in (0.5, 1.5):
            est = z * np.exp(W) * (L > t)
            p_hat = float(np.mean(plain > t))
            se = math.hypot(float(np.std(est)) / math.sqrt(L.size),
                            math.sqrt(p_hat * (1 - p_hat) / plain.size))
            assert abs(float(np.mean(est)) - p_hat) < 5 * se


@pytest.mark.parametrize("eps,order", [(1.0, 3), (2.0, 4)])
def test_coverage_300_seeds_against_quadrature(eps, order):
    """c_col = [1], b = 3, steps = 6, sigma = sqrt 2: the pair of
    RandomAllocation(1, 3, 1) (one balls-and-bins epoch, exact by quadrature).  300 seeds
    of 2,000 tilted draws at alpha = 0.05: the misses of delta(eps) stay within the
    binomial 99.9% quantile of Bin(300, 0.05)."""
    ref = balls_and_bins_delta(eps, 1.0, 3, "remove", nodes=40)
    law = _spec(3, 6, (1.0,), sigma=math.sqrt(2.0)).tilted_law(order)
    misses, rel = 0, []
    for seed in range(300):
        lo, _, up = tilted_delta(law, law.draw(np.random.default_rng(seed), 2000), eps, 0.05)
        misses += not (lo <= ref <= up)
        rel.append((up - lo) / ref)
    assert misses <= stats.binom.ppf(0.999, 300, 0.05)
    assert np.median(rel) < 0.3          # informative: a relative width, not [0, 1]


def _tilted_accountant(seed):
    spec = _spec(3, 6, (1.0,), sigma=math.sqrt(2.0))
    return sp.SampledAccountant(2000, alpha=0.05, seed=seed, bins=256,
                                progress=False).compose(spec)


@pytest.mark.slow
def test_accountant_coverage_300_seeds_where_the_tilt_sets_the_ends():
    """The sampled accountant's remove interval at eps = 2 (set by the tilted draws in most
    seeds) covers the quadrature value as often as its alpha promises."""
    eps = 2.0
    refs = {"remove": balls_and_bins_delta(eps, 1.0, 3, "remove", nodes=40)}
    miss = coverage_misses(_tilted_accountant, eps, refs)
    assert miss["remove"] <= stats.binom.ppf(0.999, 300, 0.05)
    iv = _tilted_accountant(0).delta(eps, direction="remove")
    assert iv.details["upper_end"] == "tilted sampling"


def test_method_names_the_tilted_bound_when_it_wins():
    spec = MatrixMechanism(2.0, 200, sp.FixedBin(20), c_col=C4)
    acc = sp.SampledAccountant(20_000, alpha=1e-3, seed=1, progress=False).compose(spec)
    iv = acc.epsilon(1e-5)
    assert iv.method.startswith("upper end: tilted sampling, remove direction "
                                "(fixed-bin matrix mechanism (20 bins) tilted to order")
    assert iv.details["upper_end"] == "tilted sampling"
    assert "the 2 sampled bounds each at alpha/2" in iv.method
    own = iv.details["candidates"]["remove"]["upper"]["the composition's own sampled envelopes"]
    assert iv.upper < own
    assert iv.lower <= iv.estimate <= iv.upper


def test_which_specs_have_a_tilted_law():
    fixed = MatrixMechanism(1.0, 20, sp.FixedBin(5), c_col=(1.0, 0.5))
    assert fixed.tilted_law(3) is not None and fixed.tilted_law(2.5) is None
    assert MatrixMechanism(1.0, 20, sp.CyclicPoisson(5, 0.5), c_col=(1.0,)).tilted_law(3) \
        is None
    assert MatrixMechanism(1.0, 20, sp.BMinSep(5, 0.5), c_col=(1.0,)).tilted_law(3) is None
    lo1, hi1 = fixed.tilted_law(3).log_scale
    lo2, hi2 = fixed.tilted_law(3, count=2).log_scale
    assert lo2 == pytest.approx(2 * lo1, rel=1e-12) and hi2 == pytest.approx(2 * hi1, rel=1e-12)
    # a spec without a tilted law and without a dominating composition: unchanged
    assert not has_alternatives({0: (sp.BallsAndBins(1.0, 10), 3)})
    assert has_alternatives({0: (fixed, 1)})
    assert not has_alternatives({0: (fixed, 1), 1: (sp.Gaussian(1.0), 1)})
    with pytest.raises(ValueError, match="order"):
        tm.fixed_bin_law(fixed.scaled_gram(), np.linalg.cholesky(fixed.scaled_gram()), 1)


def test_order_two_pairs_law_where_the_band_transfer_is_over_budget():
    """Many bands (the band transfer's tables too large): order 2 lists the b^2 ordered
    pairs.  Z_2 = b^-2 sum exp(S_jj') equals the exact moment, the drawn count vectors
    follow the exact weights, and the 64-band, 1000-bin run gets an order-2 law and an
    exact D_2 (it had only the no-amplification bound, about 2.5 at order 2)."""
    import numpy as np
    from scipy import stats
    from sampledprv.rdp import matrix_moments as mm
    from sampledprv.sampled.certification import tilted_matrix as tm
    c = np.array([1.0, 0.6, 0.3])
    spec = sp.MatrixMechanism(1.2, 30, sp.FixedBin(6), c_col=tuple(c / np.linalg.norm(c)))
    S = spec.scaled_gram()
    exact = mm.exact_fixed_bin_log_moment(S, 2)
    pair = mm.pair_fixed_bin_log_moment(S)
    assert abs(pair - exact) < 1e-9
    law = tm._structure(S, 2, budget=0.0)          # force the pairs path
    assert isinstance(law, tm._Pairs)
    assert law.log_z - law.margin <= pair and abs(law.log_z - exact) < 1e-9
    _, counts = tm._sample(law, np.random.default_rng(4), 60_000, np.linalg.cholesky(S), True)
    b = S.shape[0]
    keys = [tuple(np.flatnonzero(row).tolist()) if row.max() == 1 else (int(np.argmax(row)),) * 2
            for row in counts]
    weights = {}
    for j in range(b):
        for k in range(j, b):
            weights[(j, k)] = math.exp(S[j, k]) * (1 if j == k else 2)
    total = sum(weights.values())
    order = sorted(weights)
    seen = np.array([sum(1 for x in keys if x == key) for key in order])
    expected = np.array([weights[key] / total * len(keys) for key in order])
    assert stats.chisquare(seen, expected).pvalue > 1e-4
    c64 = 0.95 ** np.arange(64)
    big = sp.MatrixMechanism(2.0, 10000, sp.FixedBin(1000), c_col=tuple(c64 / np.linalg.norm(c64)))
    assert big.tilted_law(2, 1) is not None
    assert big.renyi(2, "remove") < 0.2      # exact 0.1896; the joint-convexity bound 2.498
