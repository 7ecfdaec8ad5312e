"""Random allocation / balls-and-bins: specs, sampler law, Renyi bounds, certified intervals."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest
from scipy import stats

import sampledprv as sp
from sampledprv.batch.random_allocation import BallsAndBins, RandomAllocation
from sampledprv.rdp import allocation as ra
from sampledprv.sampled.certification.conditional import TruncationTail, bulk_tail
from sampledprv.sampled.draws import allocation as al

from allocation_reference import (assert_balls_and_bins_coverage, balls_and_bins_delta,
                                  brute_occupancy_moment)
from family_checks import (assert_mechanism_strings_round_trip,
                           assert_renyi_bounds_hold_against_samples, assert_sampled_only)


# ---- specs ---------------------------------------------------------------------------------
def test_spec_validation_names_the_argument():
    with pytest.raises(ValueError, match="selected"):
        RandomAllocation(1.0, 10, selected=11)
    with pytest.raises(ValueError, match="steps"):
        RandomAllocation(1.0, 0)
    with pytest.raises(ValueError, match="sigma"):
        RandomAllocation(-1.0, 10)
    with pytest.raises(ValueError, match="either sigma or base"):
        RandomAllocation(1.0, 10, base=sp.Laplace(1.0))
    with pytest.raises(ValueError, match="base"):
        RandomAllocation(None, 10, base=sp.RandomizedResponse(0.7))
    assert BallsAndBins(1.0, 10).selected == 1
    with pytest.raises(ValueError, match="selected"):
        BallsAndBins(1.0, 10, 2)
    assert sp.RandomAllocation is RandomAllocation and sp.BallsAndBins is BallsAndBins


def test_analytic_accountant_refuses_and_points_to_sampled():
    m = BallsAndBins(1.0, 100)
    assert_sampled_only(m)


# ---- sampler law ---------------------------------------------------------------------------
def _numpy_reference(T, k, mu, direction, n, rng, kind="gauss"):
    """Independent numpy implementation (full T x n matrix, log-space e_k)."""
    if kind == "gauss":
        z = rng.standard_normal((n, T))
        ell = mu * z - 0.5 * mu * mu
        if direction == "remove":
            ell[:, :k] += mu * mu
    else:   # Laplace (beta = 1) or GG(beta), scale 1, sensitivity mu
        beta = 1.0 if kind == "laplace" else 1.5
        y = stats.gennorm.rvs(beta, size=(n, T), random_state=rng)
        ell = np.abs(y) ** beta - np.abs(y - mu) ** beta
        if direction == "remove":
            ell[:, :k] = np.abs(mu + y[:, :k]) ** beta - np.abs(y[:, :k]) ** beta
    e = np.full((n, k + 1), -np.inf)
    e[:, 0] = 0.0
    for t in range(T):
        e[:, 1:] = np.logaddexp(e[:, 1:], e[:, :-1] + ell[:, t:t + 1])
    loss = e[:, k] - al.log_binom(T, k)
    return loss if direction == "remove" else -loss


@pytest.mark.parametrize("T,k,sigma,kind", [(7, 1, 0.8, "gauss"), (9, 3, 0.7, "gauss"),
                                            (6, 2, 1.0, "laplace"), (5, 2, 1.0, "gg")])
@pytest.mark.parametrize("direction", ["remove", "add"])
def test_fused_sampler_has_the_law_of_the_definition(T, k, sigma, kind, direction):
    base = {"gauss": None, "laplace": sp.Laplace(sigma),
            "gg": sp.GeneralizedGaussian(1.5, sigma)}[kind]
    spec = RandomAllocation(sigma, T, k) if base is None else \
        RandomAllocation(None, T, k, base=base)
    y = spec.numpy_loss_sampler(direction)(np.random.default_rng(1), 40_000)
    ref = _numpy_reference(T, k, 1.0 / sigma, direction, 40_000, np.random.default_rng(2), kind)
    # Laplace steps give atoms, computed two ways they differ in the last bits: round
    assert stats.ks_2samp(np.round(y, 9), np.round(ref, 9)).pvalue > 1e-4
    # a privacy loss: E[exp(-Y)] = 1 (no mass where the other density vanishes)
    r = np.exp(-y)
    assert abs(r.mean() - 1.0) < 6 * r.std() / math.sqrt(y.size) + 1e-3


def test_elementary_symmetric_polynomial_survives_underflow():
    # sigma tiny: the k-th largest of exp(l - max) underflows; the log-space path takes over
    spec = RandomAllocation(0.05, 40, 5)
    y = spec.numpy_loss_sampler("add")(np.random.default_rng(0), 2000)
    assert np.all(np.isfinite(y))
    ref = _numpy_reference(40, 5, 20.0, "add", 2000, np.random.default_rng(5))
    assert stats.ks_2samp(y, ref).pvalue > 1e-4


# ---- Renyi bounds ----------------------------------------------------------------------------


@pytest.mark.parametrize("T,a", [(3, 2), (3, 4), (5, 3)])
def test_remove_moment_is_exact_for_balls_and_bins(T, a):
    g = sp.Gaussian(0.9)
    exact = brute_occupancy_moment(T, 1, a, g.mu)
    got = ra.remove_log_moment(a, T, 1, g)
    assert exact <= got <= exact + 1e-9 * max(1.0, exact)


@pytest.mark.parametrize("T,k,a", [(5, 2, 2), (5, 2, 3), (6, 3, 2), (4, 2, 4), (5, 3, 3),
                                   (5, 5, 2)])
def test_remove_moment_is_exact_for_k_of_t(T, k, a):
    """selected > 1: the occupancy recursion equals brute-force enumeration of the
    a-tuples of k-subsets, rounded up by at most 1e-9 relative."""
    g = sp.Gaussian(1.1)
    exact = brute_occupancy_moment(T, k, a, g.mu)
    got = ra.remove_log_moment(a, T, k, g)
    assert exact <= got <= exact + 1e-9 * max(1.0, exact)


def test_occupancy_recursion_general_weights_and_budget():
    """Any weights M(c) (non-Gaussian steps): brute force over the subsets; k = 1 equals
    the multinomial expansion; Hoeffding's comparison is above; too large a recursion is
    refused by name."""
    from sampledprv.rdp.occupancy import MAX_TRANSITIONS, occupancy_log_moment
    rng = np.random.default_rng(5)
    log_m = np.concatenate([[0.0, 0.0], np.cumsum(rng.uniform(0.1, 1.0, size=3))])  # a = 4
    T, k = 5, 2
    subs = list(itertools.combinations(range(T), k))
    tot = 0.0
    for S in itertools.product(subs, repeat=4):
        c = np.bincount(np.concatenate(S), minlength=T)
        tot += math.exp(float(np.sum(log_m[c])))
    brute = math.log(tot / len(subs) ** 4)
    # exact, raised by the stated round-off margin only
    assert brute <= occupancy_log_moment(log_m, T, k) <= brute + 1e-9
    mult = ra.log_multinomial_moment(log_m, 9)
    assert mult - 1e-12 <= occupancy_log_moment(log_m, 9, 1) <= mult + 1e-9
    lm12 = np.array([0.5 * c * (c - 1) * 1.3 for c in range(9)])          # 4 x 2 balls
    assert ra.log_multinomial_moment(lm12, 7) >= occupancy_log_moment(lm12[:5], 7, 2)
    with pytest.raises(ValueError, match="transition evaluations"):
        occupancy_log_moment(np.zeros(41), int(MAX_TRANSITIONS), 5)


@pytest.mark.parametrize("T,k,a", [(6, 2, 77), (6, 2, 40), (10, 3, 20), (391, 5, 7)])
def test_k_of_t_moment_above_the_all_equal_subsets_event(T, k, a):
    """High orders (no brute force): the moment is at least the contribution of the event
    that all a subsets are equal, C(T,k)^-(a-1) exp(mu^2 k a(a-1)/2).  (A version that
    normalised each step before the step's probabilities were applied lost every path
    but the extreme ones to underflow and returned D_77 ~ 5e-10 at T = 6; the samples'
    check caught it.)"""
    g = sp.Gaussian(0.9)
    floor = -(a - 1) * math.log(math.comb(T, k)) + g.mu ** 2 * k * a * (a - 1) / 2
    got = ra.remove_log_moment(a, T, k, g)
    assert got >= floor
    # and at most the largest weight, attained by that event
    assert got <= g.mu ** 2 * k * a * (a - 1) / 2 * (1 + 1e-9)


def test_k_of_t_moment_far_below_hoeffding_at_the_issue_case():
    """T = 391, k = 5, sigma = 0.55: the exact D_3 is about 3.25 nats (Hoeffding's
    comparison gave about 132), and it is above a Monte Carlo estimate."""
    spec = RandomAllocation(0.55, 391, 5)
    d3 = spec.renyi(3, "remove")
    assert 3.0 < d3 < 3.5
    y = spec.numpy_loss_sampler("remove")(np.random.default_rng(0), 100_000)
    # the empirical moment under-estimates a heavy-tailed mean, never over by much
    assert math.log(np.mean(np.exp(2 * y))) / 2 <= d3 + 0.05


def test_fractional_orders_are_chords_above_the_curve():
    spec = BallsAndBins(1.0, 20)
    d2, d3 = spec.renyi(2, "remove"), spec.renyi(3, "remove")
    d25 = spec.renyi(2.5, "remove")
    assert abs(1.5 * d25 - (0.5 * 1 * d2 + 0.5 * 2 * d3)) < 1e-9
    assert spec.renyi(1.5, "remove") <= d2 * (1 + 1e-9)


@pytest.mark.parametrize("spec", [BallsAndBins(1.0, 50), RandomAllocation(0.8, 30, 3),
                                  RandomAllocation(None, 20, 2, base=sp.Laplace(1.0))])
def test_renyi_bounds_hold_against_samples(spec):
    assert_renyi_bounds_hold_against_samples(spec)


def test_registered_with_rdp_divergence():
    spec = BallsAndBins(1.0, 30)
    assert sp.rdp.renyi_divergence(spec, 3.0, "remove") == spec.renyi(3.0, "remove")


def test_bulk_tail_bounds_hold():
    mu, m = 1.0, 29
    s = np.log(np.exp(mu * np.random.default_rng(0).standard_normal((400_000, m))
                      - 0.5 * mu * mu).sum(axis=1))
    t = np.quantile(s, [0.9, 0.99, 0.999])
    for bound in (bulk_tail(m, mu), TruncationTail.build(m, mu)):
        assert np.all(bound.sf(t) >= np.array([0.1, 0.01, 0.001]) * 0.95)


# ---- certified intervals against the deterministic reference --------------------------------
@pytest.mark.parametrize("direction", ["remove", "add"])
def test_interval_contains_exact_delta(direction):
    T, sigma, eps = 3, 1.0, 0.3
    ref = balls_and_bins_delta(eps, sigma, T, direction, nodes=40)
    acc = sp.SampledAccountant(50_000, alpha=1e-3, seed=4).compose(BallsAndBins(sigma, T))
    iv = acc.delta(eps, direction=direction)
    assert iv.lower <= ref <= iv.upper
    assert iv.upper - iv.lower < 0.05
    if direction == "remove":
        assert "proven" in iv.method and "conditional on" not in iv.method


def _coverage_case(seed):
    acc = sp.SampledAccountant(2000, alpha=0.05, seed=seed, bins=256)
    return acc.compose(BallsAndBins(1.0, 2))


@pytest.mark.slow
def test_coverage_300_seeds_balls_and_bins():
    """300 seeds at n = 2000, alpha = 0.05: each direction's interval misses the exact
    delta in at most the binomial 0.999-quantile of Bin(300, 0.05) runs."""
    assert_balls_and_bins_coverage(_coverage_case)


# ---- command line ------------------------------------------------------------------------------
def _cli(capsys, *args):
    """The command line in this process (its exit code, stdout, stderr): what is tested is
    the command, not the interpreter's start (the CLI's own tests run it as a subprocess)."""
    from cli_inprocess import run
    p = run(*args)
    return p.returncode, p.stdout, p.stderr


def test_cli_epsilon_json_and_refusal(capsys):
    code, out, err = _cli(capsys, "epsilon", "--delta", "1e-5", "-m",
                          "balls-and-bins sigma=1 steps=100", "-c", "2", "--accountant",
                          "sampled", "--n-samples", "20000", "--alpha", "1e-3", "--json",
                          "--no-progress")
    assert code == 0, err
    out = json.loads(out)
    res = out["results"][0]
    assert res["lower"] <= res["estimate"] <= res["upper"] < math.inf
    assert out["composition"][0]["mechanism"] == "balls-and-bins sigma=1 steps=100"
    code, out, err = _cli(capsys, "epsilon", "--delta", "1e-5", "-m",
                          "balls-and-bins sigma=1 steps=100")
    assert code != 0 and "SampledAccountant" in err


def test_mechanism_strings_round_trip():
    assert_mechanism_strings_round_trip(("balls-and-bins sigma=1 steps=100",
                                         "random-allocation sigma=0.55 steps=391 selected=5",
                                         "random-allocation scale=2 steps=10 selected=2"))


@pytest.mark.parametrize("T,k,sigma,kind", [(9, 3, 0.8, "gauss"), (7, 1, 0.8, "gauss"),
                                            (6, 2, 1.0, "laplace"), (40, 5, 0.004, "gauss")])
def test_torch_sampler_law(T, k, sigma, kind):
    """The torch tree sampler has the law of the definition (sigma = 0.004: most rows
    take the log-space tree)."""
    torch = pytest.importorskip("torch")
    spec = RandomAllocation(sigma, T, k) if kind == "gauss" else \
        RandomAllocation(None, T, k, base=sp.Laplace(sigma))
    for d in ("remove", "add"):
        f = spec.torch_loss_sampler(d)
        y = f(torch.Generator().manual_seed(0), 20_000).cpu().numpy()
        assert np.all(np.isfinite(y))
        ref = _numpy_reference(T, k, 1.0 / sigma, d, 20_000, np.random.default_rng(7), kind)
        assert stats.ks_2samp(np.round(y, 9), np.round(ref, 9)).pvalue > 1e-4


def test_torch_backend_runs_the_conditional_path():
    pytest.importorskip("torch")
    spec = BallsAndBins(1.0, 3)
    ref = balls_and_bins_delta(0.3, 1.0, 3, "remove", nodes=40)
    acc = sp.SampledAccountant(20_000, alpha=1e-3, seed=1, backend="torch", device="cpu")
    iv = acc.compose(spec).delta(0.3, direction="remove")
    assert iv.lower <= ref <= iv.upper


@pytest.mark.slow
def test_calibrate_is_certified_conservative_and_tight():
    """sp.calibrate on a random-allocation spec returns a sigma whose certified upper end
    meets the target, and 2% less noise does not (same accountant, same seed)."""
    def acc():
        return sp.SampledAccountant(20_000, alpha=1e-3, seed=0, progress=False)
    res = sp.calibrate(lambda s: RandomAllocation(s, 8, 2), count=3, epsilon=2.0, delta=1e-5,
                       accountant=acc, bracket=(0.5, 2.0), rtol=2e-3)
    assert res.interval.upper <= 2.0
    worse = acc().compose(RandomAllocation(0.98 * res.x, 8, 2), 3).epsilon(1e-5)
    assert worse.upper > 2.0


def test_conditional_mixture_equals_the_full_matrix():
    """The normal-CDF mixture of the conditional envelope skips zero weights and the
    points above log(T e^y) (exact 0 / 1 terms): the same sums as the whole matrix, with
    an atom at -inf, zero weights and y outside the range of S."""
    from scipy import special
    from sampledprv.sampled.certification.conditional import _sf
    rng = np.random.default_rng(3)
    s = np.concatenate([[-np.inf], np.sort(rng.normal(0.5, 1.0, 300))])
    w = rng.random(s.size) * (rng.random(s.size) < 0.6)
    w *= 0.9 / w.sum()
    y = np.linspace(-6.0, 6.0, 700)
    mu, log_t = 1.3, math.log(5.0)
    ly = y[:, None] + log_t
    d = ly - s[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        arg = np.where(d > 0, ly + np.log(-np.expm1(-np.maximum(d, 1e-300))), -np.inf)
    p = np.where(d > 0, special.ndtr((0.5 * mu * mu - arg) / mu), 1.0)
    ref = np.minimum(0.05 + p @ w, 1.0)
    got = _sf(y, s, w, 0.05, mu, log_t)
    assert np.allclose(got, ref, rtol=1e-13, atol=1e-15)
    assert np.all(np.diff(got) <= 1e-15)                  # a survival function
