"""Matrix-factorization training (DP-FTRL / banded MF): specs, pointwise losses, sampler
laws, exact Renyi moments, certified intervals."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest
from scipy import stats

import sampledprv as sp
from sampledprv.batch.matrix_mechanism import MatrixMechanism
from sampledprv.rdp import matrix_moments as mm

from allocation_reference import assert_balls_and_bins_coverage, balls_and_bins_delta
from family_checks import (assert_mechanism_strings_round_trip,
                           assert_renyi_bounds_hold_against_samples, assert_sampled_only)

C4 = tuple(np.array([1, .5, .25, .125]) / np.linalg.norm([1, .5, .25, .125]))


# ---- pointwise losses: jax_privacy's own test values ----------------------------------------
@pytest.mark.parametrize("c_col,sampler,y,expected", [
    ((1.0, 0.0), sp.FixedBin(2), [1, 0, 1, 0], 0.4337808304830272),
    ((1.0, 1.0, 0.5, 0.5), sp.FixedBin(2), [1, 1, 1, 1], 1.5799760835798948),
    ((1.0, 0.5), sp.BMinSep(2, 0.5), [1, 1, 1], 0.9239798890121712),
    ((1.0, 0.5), sp.BMinSep(2, 0.5, warm_start=True), [1, 1, 1], 0.8329398380809252),
    ((1.0, 0.5), sp.CyclicPoisson(2, 0.5), [1, 1, 1], 0.6805952255579165),
])
def test_pointwise_losses_equal_jax_privacy(c_col, sampler, y, expected):
    spec = MatrixMechanism(1.0, len(y), sampler, c_col=c_col)
    assert abs(spec.privacy_loss_at(y) - expected) <= 1e-12


def test_pointwise_loss_of_a_full_matrix_equals_its_toeplitz_form():
    n, c = 7, (1.0, 0.6, 0.3)
    C = np.zeros((n, n))
    for i in range(n):
        for l, x in enumerate(c):
            if i + l < n:
                C[i + l, i] = x
    y = np.random.default_rng(0).standard_normal(n)
    for s in (sp.FixedBin(3), sp.CyclicPoisson(3, 0.4), sp.BMinSep(3, 0.7, True)):
        a = MatrixMechanism(1.3, n, s, c_col=c).privacy_loss_at(y)
        b = MatrixMechanism(1.3, n, s, matrix=C).privacy_loss_at(y)
        assert abs(a - b) < 1e-12


# ---- specs ---------------------------------------------------------------------------------
def test_validation_names_the_argument():
    with pytest.raises(ValueError, match="sigma"):
        MatrixMechanism(0.0, 10, sp.FixedBin(2), c_col=(1.0,))
    with pytest.raises(ValueError, match="exactly one of c_col"):
        MatrixMechanism(1.0, 10, sp.FixedBin(2))
    with pytest.raises(ValueError, match="non-negative"):
        MatrixMechanism(1.0, 10, sp.FixedBin(2), c_col=(1.0, -0.5))
    with pytest.raises(ValueError, match=r"c_col\[0\]"):
        MatrixMechanism(1.0, 10, sp.FixedBin(2), c_col=(0.0, 1.0))
    with pytest.raises(ValueError, match="steps"):
        MatrixMechanism(1.0, 2, sp.FixedBin(2), c_col=(1.0, 0.5, 0.2))
    with pytest.raises(ValueError, match="bins"):
        sp.FixedBin(0)
    with pytest.raises(ValueError, match="p must be in"):
        sp.CyclicPoisson(3, 1.5)
    with pytest.raises(ValueError, match="bands"):
        MatrixMechanism(1.0, 10, sp.CyclicPoisson(2, 0.5), c_col=(1.0, 0.5, 0.2))
    with pytest.raises(ValueError, match="bins=5 exceeds steps"):
        MatrixMechanism(1.0, 4, sp.FixedBin(5), c_col=(1.0,))
    with pytest.raises(ValueError, match="lower-triangular"):
        MatrixMechanism(1.0, 2, sp.FixedBin(1), matrix=[[1.0, 0.5], [0.0, 1.0]])
    with pytest.raises(ValueError, match="sampler"):
        MatrixMechanism(1.0, 4, 2, c_col=(1.0,))
    with pytest.raises(ValueError, match="warm_start"):
        sp.BMinSep(2, 0.5, warm_start="yes")


def test_analytic_accountant_refuses_and_points_to_sampled():
    m = MatrixMechanism(1.0, 20, sp.FixedBin(4), c_col=(1.0, 0.5))
    assert_sampled_only(m)


@pytest.mark.parametrize("sampler", [sp.CyclicPoisson(8, 0.5), sp.BMinSep(8, 0.5),
                                     sp.BMinSep(8, 0.5, warm_start=True)])
def test_cycle_longer_than_the_run(sampler):
    """At most one participation: the loss is that of one Poisson-sampled Gaussian step
    with probability p/b (cyclic) or of the first steps (b-min-sep); bounds still hold."""
    spec = MatrixMechanism(1.0, 5, sampler, c_col=(1.0,))
    y = spec.numpy_loss_sampler("remove")(np.random.default_rng(0), 100_000)
    assert np.all(np.isfinite(y))
    emp = math.log(np.mean(np.exp(y)))
    assert emp <= spec.renyi(2.0, "remove") + 0.01


# ---- identities ------------------------------------------------------------------------------
def test_cyclic_poisson_and_b_min_sep_at_p_1_equal_the_fixed_bin_pointwise():
    n, b, c = 17, 4, (1.0, 0.7, 0.2)
    rng = np.random.default_rng(5)
    fixed = MatrixMechanism(1.1, n, sp.FixedBin(b), c_col=c)
    cyc = MatrixMechanism(1.1, n, sp.CyclicPoisson(b, 1.0), c_col=c)
    warm = MatrixMechanism(1.1, n, sp.BMinSep(b, 1.0, warm_start=True), c_col=c)
    for _ in range(20):
        y = 2.0 * rng.standard_normal(n)
        f = fixed.privacy_loss_at(y)
        assert abs(cyc.privacy_loss_at(y) - f) < 1e-12
        assert abs(warm.privacy_loss_at(y) - f) < 1e-12


def _ks(a, b):
    return stats.ks_2samp(a, b).pvalue


@pytest.mark.parametrize("direction", ["remove", "add"])
def test_gram_reduced_sampler_equals_n_dimensional_sampling_in_law(direction):
    spec = MatrixMechanism(1.2, 23, sp.FixedBin(5), c_col=(1.0, 0.8, 0.5, 0.3, 0.2, 0.1))
    g = spec.numpy_loss_sampler(direction)(np.random.default_rng(1), 60_000)
    f = spec.numpy_loss_sampler(direction, gram=False)(np.random.default_rng(2), 60_000)
    assert _ks(g, f) > 1e-4


@pytest.mark.parametrize("direction", ["remove", "add"])
def test_dp_sgd_fixed_bin_is_one_random_allocation_with_sigma_over_root_epochs(direction):
    n, b, sigma = 12, 4, 1.5
    spec = MatrixMechanism(sigma, n, sp.FixedBin(b), c_col=(1.0,))
    ra = sp.RandomAllocation(sigma / math.sqrt(n / b), b, 1)
    x = spec.numpy_loss_sampler(direction)(np.random.default_rng(3), 60_000)
    y = ra.numpy_loss_sampler(direction)(np.random.default_rng(4), 60_000)
    assert _ks(x, y) > 1e-4
    for a in (2.0, 3.0, 4.5, 7.0):
        assert spec.renyi(a, direction) == pytest.approx(ra.renyi(a, direction), rel=1e-9)


def _b_min_sep_steps(rng, b, p, n, warm):
    """The steps (increasing) a record takes part in under b-min-sep sampling over ``n``
    steps, drawn in plain numpy: the last participation at ``-b`` (cold start) or from
    the stationary law (warm start), then gaps of ``b - 1 + Geom(p)``."""
    steps = []
    last = -b
    if warm:
        w = np.r_[1.0, np.full(b - 1, p)] / (1 + (b - 1) * p)
        last = rng.choice(b, p=w) - b
    while True:
        last = last + b - 1 + rng.geometric(p)
        if last >= n:
            return steps
        steps.append(last)


@pytest.mark.parametrize("sampler", [sp.CyclicPoisson(3, 0.6), sp.BMinSep(3, 0.5),
                                     sp.BMinSep(3, 0.5, warm_start=True)])
def test_n_dimensional_sampler_matches_a_plain_numpy_simulation(sampler):
    """The fused sampler against patterns drawn and losses evaluated independently."""
    n, c, sigma = 10, (1.0, 0.5), 1.0
    spec = MatrixMechanism(sigma, n, sampler, c_col=c)
    rng = np.random.default_rng(7)
    C = np.zeros((n, n))
    for i in range(n):
        for l, x in enumerate(c):
            if i + l < n:
                C[i + l, i] = x
    ref = []
    for _ in range(6000):
        pi = np.zeros(n)
        if isinstance(sampler, sp.CyclicPoisson):
            s = rng.integers(sampler.bins)
            pi[s::sampler.bins] = rng.uniform(size=pi[s::sampler.bins].size) < sampler.p
        else:
            pi[_b_min_sep_steps(rng, sampler.min_sep, sampler.p, n, sampler.warm_start)] = 1
        ref.append(spec.privacy_loss_at(C @ pi + sigma * rng.standard_normal(n)))
    got = spec.numpy_loss_sampler("remove")(np.random.default_rng(8), 20_000)
    assert _ks(np.array(ref), got) > 1e-4


# ---- Renyi bounds -------------------------------------------------------------------------------
def _random_cyclic_band(b, w, rng):
    S = np.zeros((b, b))
    for j in range(b):
        for d in range(w + 1):
            k = (j + d) % b
            S[j, k] = S[k, j] = rng.uniform(0.3, 0.8) if d == 0 else rng.uniform(0.0, 0.4)
    return S


@pytest.mark.parametrize("b,w", [(7, 3), (9, 2), (8, 1), (5, 2)])
def test_band_transfer_equals_listing_the_multisets(b, w):
    S = _random_cyclic_band(b, w, np.random.default_rng(b * 10 + w))
    band = mm.band_fixed_bin_log_moments(S, 6)
    for a in range(2, 7):
        assert band[a] == pytest.approx(mm.exact_fixed_bin_log_moment(S, a), rel=1e-11,
                                        abs=1e-12)


def test_exact_moment_against_the_gaussian_integral_by_brute_force():
    """E_Q[(P/Q)^a] as the sum over index sequences of exp(sum_{k<l} S_{i_k i_l})."""
    S = _random_cyclic_band(4, 1, np.random.default_rng(2))
    for a in (2, 3, 4):
        tot = sum(math.exp(sum(S[s[k], s[l]] for k in range(a) for l in range(k + 1, a)))
                  for s in itertools.product(range(4), repeat=a))
        got, ref = mm.exact_fixed_bin_log_moment(S, a), math.log(tot) - a * math.log(4)
        assert ref <= got <= ref * (1 + 1e-9)          # exact, rounded up


def test_split_bound_is_above_the_exact_moment_and_exact_when_diagonal():
    S = _random_cyclic_band(6, 2, np.random.default_rng(4))
    for a in (2, 3, 5):
        assert mm.split_fixed_bin_log_moment(S, a) >= mm.exact_fixed_bin_log_moment(S, a)
    D = np.diag(np.diag(S))
    for a in (2, 4):
        assert mm.split_fixed_bin_log_moment(D, a) == pytest.approx(
            mm.exact_fixed_bin_log_moment(D, a), rel=1e-8)


def test_split_bound_at_every_order_is_that_of_the_single_order():
    """One product of series to degree 40 gives each order's bound bit for bit as the
    product truncated at that order (an order search shares it)."""
    S = _random_cyclic_band(7, 2, np.random.default_rng(5))
    for M in (S, np.diag(np.diag(S))):
        many = mm.split_fixed_bin_log_moments(M, 40)
        for a in (2, 3, 9, 24, 40):
            assert many[a] == mm.split_fixed_bin_log_moments(M, a)[a]
            assert many[a] == mm.split_fixed_bin_log_moment(M, a)


@pytest.mark.parametrize("spec", [
    MatrixMechanism(2.0, 30, sp.FixedBin(6), c_col=(1.0, 0.5, 0.25)),
    MatrixMechanism(1.5, 30, sp.CyclicPoisson(5, 0.5), c_col=(1.0, 0.5, 0.25)),
    MatrixMechanism(1.5, 30, sp.BMinSep(4, 0.4), c_col=(1.0, 0.5, 0.25)),
    MatrixMechanism(1.5, 30, sp.BMinSep(4, 0.4, warm_start=True), c_col=(1.0, 0.5))])
def test_renyi_bounds_hold_against_samples(spec):
    assert_renyi_bounds_hold_against_samples(spec)


def test_exact_remove_moment_matches_samples_closely():
    spec = MatrixMechanism(2.0, 40, sp.FixedBin(8), c_col=C4)
    y = spec.numpy_loss_sampler("remove")(np.random.default_rng(6), 400_000)
    emp = math.log(np.mean(np.exp(y)))
    assert abs(emp - spec.renyi(2.0, "remove")) < 0.01


def test_fractional_orders_are_chords_and_registered_with_rdp():
    spec = MatrixMechanism(1.5, 20, sp.FixedBin(5), c_col=(1.0, 0.5))
    d2, d3 = spec.renyi(2.0, "remove"), spec.renyi(3.0, "remove")
    assert 1.5 * spec.renyi(2.5, "remove") == pytest.approx(0.5 * d2 + 0.5 * 2 * d3, rel=1e-9)
    assert sp.rdp.renyi_divergence(spec, 3.0, "remove") == d3


# ---- certified intervals against the deterministic reference ----------------------------------
@pytest.fixture(params=["conditional", "plain"])
def path(request, monkeypatch):
    """Both remove paths of c_col = [1]: the balls-and-bins conditional sampler (the pair
    is balls-and-bins) and plain samples of the Gram-reduced loss."""
    if request.param == "plain":
        monkeypatch.setattr(MatrixMechanism, "conditional", lambda self, d: None)
    return request.param


def test_conditional_path_only_where_the_pair_is_balls_and_bins():
    assert MatrixMechanism(1.0, 12, sp.FixedBin(4), c_col=(1.0,)).conditional("remove") \
        is not None
    assert MatrixMechanism(1.0, 12, sp.FixedBin(4), c_col=(1.0,)).conditional("add") is None
    assert MatrixMechanism(1.0, 13, sp.FixedBin(4), c_col=(1.0,)).conditional("remove") \
        is None                                   # bins of unequal size
    assert MatrixMechanism(1.0, 12, sp.FixedBin(4), c_col=(1.0, 0.5)).conditional(
        "remove") is None


@pytest.mark.parametrize("direction", ["remove", "add"])
def test_interval_contains_exact_delta_dp_sgd_fixed_bin(direction, path):
    """c_col = [1], n = 6, b = 3 (E = 2 epochs), sigma = sqrt(2): one balls-and-bins epoch
    of 3 steps with sigma 1."""
    ref = balls_and_bins_delta(0.3, 1.0, 3, direction, nodes=40)
    spec = MatrixMechanism(math.sqrt(2.0), 6, sp.FixedBin(3), c_col=(1.0,))
    iv = sp.SampledAccountant(50_000, alpha=1e-3, seed=4, progress=False).compose(spec) \
        .delta(0.3, direction=direction)
    assert iv.lower <= ref <= iv.upper
    assert iv.upper - iv.lower < 0.05


def _coverage_case(seed):
    spec = MatrixMechanism(math.sqrt(2.0), 4, sp.FixedBin(2), c_col=(1.0,))
    return sp.SampledAccountant(2000, alpha=0.05, seed=seed, bins=256,
                                progress=False).compose(spec)


@pytest.mark.slow
def test_coverage_300_seeds_dp_sgd_fixed_bin(path):
    """300 seeds at n = 2000, alpha = 0.05 (c_col = [1], b = 2, E = 2, sigma = sqrt 2, i.e.
    balls-and-bins with sigma 1 by quadrature): each direction misses the exact delta in
    at most the binomial 0.999-quantile of Bin(300, 0.05) runs."""
    assert_balls_and_bins_coverage(_coverage_case)


# ---- command line and calibration ---------------------------------------------------------------
def test_mechanism_strings_round_trip():
    from sampledprv.cli.mechanism_strings import parse_mechanism
    assert_mechanism_strings_round_trip((
        "bandmf c_col=1:0.5:0.25 sigma=3 steps=100 bins=10",
        "bandmf c_col=1:0.5 sigma=2 steps=50 cycle=5 p=0.5",
        "bandmf c_col=1:0.5 sigma=2 steps=50 min_sep=5 p=0.25 warm=1"))
    with pytest.raises(ValueError, match="one sampler"):
        parse_mechanism("bandmf sigma=1 steps=10").build()


def test_mechanism_strings_take_commas_in_lists():
    """The issue's spelling c_col=1,0.5,0.25 (and with spaces after the commas) builds the
    same spec as c_col=1:0.5:0.25; a stray token after a scalar is still refused."""
    from sampledprv.cli.mechanism_strings import parse_mechanism
    colon = parse_mechanism("bandmf c_col=1:0.5:0.25 sigma=3 steps=100 bins=10").build()
    for s in ("bandmf c_col=1,0.5,0.25 sigma=3 steps=100 bins=10",
              "bandmf sigma=3, c_col=1, 0.5, 0.25, steps=100 bins=10"):
        assert parse_mechanism(s).build() == colon
    assert colon.c_col == (1.0, 0.5, 0.25)
    with pytest.raises(ValueError, match="expected key=value"):
        parse_mechanism("bandmf sigma=3,2 c_col=1 steps=100 bins=10")


def test_cli_epsilon_json():
    from cli_inprocess import run
    p = run("epsilon", "--delta", "1e-5", "-m", "bandmf c_col=1,0.5 sigma=2 steps=20 bins=4",
            "--accountant", "sampled", "--n-samples", "20000", "--alpha", "1e-3", "--json",
            "--no-progress")
    assert p.returncode == 0, p.stderr
    res = json.loads(p.stdout)["results"][0]
    assert res["lower"] <= res["estimate"] <= res["upper"] < math.inf


def test_calibrate_sigma_on_the_certified_upper_end():
    def acc():
        return sp.SampledAccountant(20_000, alpha=1e-3, seed=0, progress=False)
    res = sp.calibrate(lambda s: MatrixMechanism(s, 12, sp.FixedBin(4), c_col=(1.0, 0.5)),
                       count=1, epsilon=2.0, delta=1e-5, accountant=acc, bracket=(0.5, 4.0),
                       rtol=2e-3)
    assert res.interval.upper <= 2.0
    worse = acc().compose(MatrixMechanism(0.98 * res.x, 12, sp.FixedBin(4),
                                          c_col=(1.0, 0.5))).epsilon(1e-5)
    assert worse.upper > 2.0


def test_torch_sampler_law_and_refusal():
    torch = pytest.importorskip("torch")
    spec = MatrixMechanism(1.2, 23, sp.FixedBin(5), c_col=(1.0, 0.8, 0.5, 0.3))
    for d in ("remove", "add"):
        y = spec.torch_loss_sampler(d)(torch.Generator().manual_seed(0), 40_000).numpy()
        ref = spec.numpy_loss_sampler(d)(np.random.default_rng(9), 40_000)
        assert _ks(y, ref) > 1e-4
    with pytest.raises(ValueError, match="backend='numba'"):
        MatrixMechanism(1.0, 10, sp.CyclicPoisson(2, 0.5), c_col=(1.0,)).torch_loss_sampler(
            "add")
    iv = sp.SampledAccountant(20_000, alpha=1e-3, seed=1, backend="torch", device="cpu",
                              progress=False).compose(spec).delta(1.0)
    assert iv.lower <= iv.estimate <= iv.upper < 1.0


def test_composes_with_other_mechanisms():
    """A run composed with a Gaussian release: the interval sits above each part's."""
    run = MatrixMechanism(2.0, 20, sp.FixedBin(4), c_col=(1.0, 0.5))
    alone = sp.SampledAccountant(50_000, alpha=1e-3, seed=3, progress=False).compose(run) \
        .epsilon(1e-5)
    both = sp.SampledAccountant(50_000, alpha=1e-3, seed=3, progress=False).compose(run) \
        .compose(sp.Gaussian(2.0)).epsilon(1e-5)
    gauss = sp.Accountant().compose(sp.Gaussian(2.0)).epsilon(1e-5)
    assert both.lower > alone.lower and both.lower > gauss.lower
    assert both.upper < alone.upper + gauss.upper


@pytest.mark.parametrize("warm", [False, True])
def test_b_min_sep_inclusion_probabilities_of_the_add_bound(warm):
    from sampledprv.batch.matrix_mechanism import _inclusion
    b, p, n = 4, 0.3, 15
    spec = MatrixMechanism(1.0, n, sp.BMinSep(b, p, warm_start=warm), c_col=(1.0,))
    rng = np.random.default_rng(12)
    reps = 40_000
    hits = np.zeros(n)
    for _ in range(reps):
        hits[_b_min_sep_steps(rng, b, p, n, warm)] += 1
    r = _inclusion(spec)
    se = np.sqrt(r * (1 - r) / reps)
    assert np.all(np.abs(hits / reps - r) <= 5 * se + 1e-12)
    if warm:     # stationary: every step has the same inclusion probability
        assert np.allclose(r, p / (1 + (b - 1) * p), rtol=1e-12)


def test_cyclic_poisson_with_p_one_has_renyi_bounds_above_the_fixed_bins():
    """p = 1 is accepted by CyclicPoisson and is the fixed bin; its Renyi bounds exist
    (the Poisson series refused q = 1) and lie above the fixed bin's exact moments."""
    cyc = sp.MatrixMechanism(1.3, 16, sp.CyclicPoisson(3, 1.0), c_col=(1.0, 0.5, 0.25))
    fix = sp.MatrixMechanism(1.3, 16, sp.FixedBin(3), c_col=(1.0, 0.5, 0.25))
    for a in (2.0, 3.5, 8.0):
        for d in ("remove", "add"):
            assert math.isfinite(cyc.renyi(a, d))
            assert cyc.renyi(a, d) >= fix.renyi(a, d) - 1e-9
