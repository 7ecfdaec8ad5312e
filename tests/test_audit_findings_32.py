"""Issue 32, sections 1 and 2: silent wrong answers and raw errors found by an audit and a
new user.  Each test failed on the code before the fix (checked against main)."""

from __future__ import annotations

import copy
import json
import math
import pickle

import numpy as np
import pytest

import sampledprv as sp
from sampledprv.core.tradeoff import GDPBracket

from cli_inprocess import run

from gaussian_pair import good_p, good_q, logp, logq  # noqa: E402 (tests/ on the path)


def cut_p(c):
    """N(1, 1) truncated on one side, at w < c (redrawn above it)."""
    def sample(rng, n):
        out = rng.normal(1.0, 1.0, n)
        bad = out >= c
        while bad.any():
            out[bad] = rng.normal(1.0, 1.0, int(bad.sum()))
            bad = out >= c
        return out
    return sample


# ---- 1.1 gdp_mu: a finite, valid lower end where the curve's lower end rounds to 1 ------
@pytest.mark.parametrize("fpr_min", [1e-6, 1e-9])
def test_gdp_mu_lower_end_is_finite_and_valid(fpr_min):
    """Gaussian(1/16) is exactly 16-GDP; the bracket must contain 16 with a finite lower
    end (it was [inf, inf]: ndtri(1.0) = inf)."""
    b = sp.Accountant().compose(sp.Gaussian(1.0 / 16.0)).gdp_mu(fpr_min=fpr_min)
    assert math.isfinite(b.lower)
    assert 8.0 < b.lower <= 16.0 <= b.upper


def test_gdp_mu_unchanged_where_no_point_rounds_to_one():
    b = sp.Accountant().compose(sp.Gaussian(1.0)).gdp_mu()
    assert b.lower <= 1.0 <= b.upper and b.upper - b.lower < 0.1


# ---- 1.2 one-sided truncation of sample_p ------------------------------------------------
@pytest.mark.parametrize("c", [3.0, 3.5])
@pytest.mark.parametrize("symmetric", [True, False])
def test_one_sided_truncation_is_refused(c, symmetric):
    """truth epsilon(1e-2) = 4.9042 at k = 3; the cut sampler gave optimistic intervals
    (upper end 4.73 at c = 3.5)."""
    pair = sp.LogDensityPair(logp, logq, sample_p=cut_p(c), sample_q=good_q,
                             symmetric=symmetric)
    with pytest.raises(ValueError, match="misses an upper tail"):
        sp.SampledAccountant(20_000, alpha=0.1, seed=0).compose(pair, 3).epsilon(1e-2)


@pytest.mark.parametrize("symmetric", [True, False])
def test_exact_samplers_pass_the_tail_check(symmetric):
    pair = sp.LogDensityPair(logp, logq, sample_p=good_p, sample_q=good_q,
                             symmetric=symmetric)
    for seed in range(3):
        pair.check(np.random.default_rng(seed))


def test_tail_check_false_alarms_are_rare():
    """The tail inequality holds for every pair: 20 seeds of exact draws, no alarm."""
    from sampledprv.sampled.certification.input_checks import check_upper_tails
    for seed in range(20):
        rng = np.random.default_rng(seed)
        y = rng.normal(1.0, 1.0, 20_000) - 0.5           # remove loss under P
        y_add = 0.5 - rng.normal(0.0, 1.0, 20_000)       # add loss -L under Q
        check_upper_tails("exact", y, y_add)


# ---- 1.3 tradeoff at fpr 0 does not depend on the other rates ---------------------------
def test_tradeoff_at_zero_alone_matches_with_other_rates():
    acc = sp.Accountant().compose(sp.Gaussian(1.0))
    alone = acc.tradeoff([0.0])[0]
    with_other = acc.tradeoff([0.0, 1e-3])[0]
    assert alone.upper < 1e-9                    # was 0.0965
    assert abs(alone.upper - with_other.upper) < 1e-10
    assert alone.estimate <= alone.upper


# ---- 1.4 an audit without an accountant is not a pass; the CLI exits 1 on a leak ---------
def test_audit_without_accountant_is_not_consistent():
    rng = np.random.default_rng(0)
    r = sp.audit(rng.normal(1.0, 1.0, 1000), rng.normal(0.0, 1.0, 1000))
    assert r.consistent is None and not r.consistent
    assert r.verdict.startswith("no accountant given: not compared")


def test_cli_audit_exits_nonzero_on_a_failed_audit(tmp_path):
    rng = np.random.default_rng(1)
    f = tmp_path / "scores.json"
    f.write_text(json.dumps({"in": (rng.normal(0, 1, 1000) + 4.0).tolist(),
                             "out": rng.normal(0, 1, 1000).tolist()}))
    bad = run("audit", "--scores", str(f), "-m", "gaussian sigma=4")
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "leaks more than accounted" in bad.stdout
    ok = run("audit", "--scores", str(f), "-m", "gaussian sigma=0.2")
    assert ok.returncode == 0, ok.stdout + ok.stderr


# ---- 1.5 subsampled user pair without renyi= warns and names the fix ---------------------
def test_subsampled_user_pair_without_renyi_warns():
    pair = sp.LogDensityPair(logp, logq, sample_p=good_p, sample_q=good_q, symmetric=True)
    with pytest.warns(Warning, match="renyi="):
        iv = sp.SampledAccountant(2000, seed=0).compose(sp.PoissonSubsampled(pair, 0.1), 3) \
            .epsilon(1e-6)
    assert iv.upper == math.inf


# ---- 1.6 to_dp_event counts --------------------------------------------------------------
@pytest.mark.parametrize("count", [-1, 0, 2.5])
def test_to_dp_event_refuses_bad_counts(count):
    pytest.importorskip("dp_accounting")
    with pytest.raises(ValueError, match="count"):
        sp.to_dp_event([(sp.Gaussian(1.0), count)])


def test_to_dp_event_integral_float_count():
    pytest.importorskip("dp_accounting")
    assert sp.to_dp_event([(sp.Gaussian(1.0), 2.0)]).count == 2


# ---- 1.7 the online accountant pickles and copies after queries ---------------------------
def test_online_accountant_pickles_after_queries_and_tradeoff():
    acc = sp.Accountant(horizon=100).compose(sp.Gaussian(2.0), 5)
    for _ in range(3):
        acc.epsilon(1e-5)
    acc.tradeoff(0.1)
    for clone in (pickle.loads(pickle.dumps(acc)), copy.deepcopy(acc), copy.copy(acc)):
        assert clone.epsilon(1e-5) == acc.epsilon(1e-5)
    clone = pickle.loads(pickle.dumps(acc))
    clone.compose(sp.Gaussian(2.0), 5)
    assert clone.epsilon(1e-5).upper > acc.epsilon(1e-5).upper


# ---- 1.8 GDPBracket str --------------------------------------------------------------
def test_gdp_bracket_str_has_no_fit_outside_the_bracket():
    outside = GDPBracket(1.0, 2.0, 3.25, (1e-6, 1 - 1e-6), "deterministic", 1.0)
    assert "3.25" not in str(outside) and "best fit" not in str(outside)
    inside = GDPBracket(1.0, 2.0, 1.5, (1e-6, 1 - 1e-6), "deterministic", 1.0)
    assert "uncertified best fit 1.5" in str(inside)
    nan = GDPBracket(1.0, 2.0, math.nan, (1e-6, 1 - 1e-6), "deterministic", 1.0)
    assert "nan" not in str(nan)


# ---- 2. raw errors and hangs on bad input ------------------------------------------------
def test_truncation_tail_small_sigma_no_math_domain_error():
    """BallsAndBins(sigma=0.01, steps=3): the conditional envelope's truncation tail
    raised 'math domain error' (both terms of a sum underflowed)."""
    from sampledprv.sampled.certification.conditional import TruncationTail
    t = TruncationTail.build(2, 100.0)
    sf = t.sf(np.array([0.0, 10.0, 1e3]))
    assert np.all((sf >= 0.0) & (sf <= 1.0))


@pytest.mark.parametrize("call, name", [
    (lambda acc: acc.gdp_mu(fpr_min="0.1"), "fpr_min"),
    (lambda acc: acc.gdp_mu(points=float("nan")), "points"),
    (lambda acc: acc.tradeoff_curve(points=float("nan")), "points"),
    (lambda acc: acc.tradeoff(0.1, max_queries=float("nan")), "max_queries"),
    (lambda acc: acc.tradeoff_curve(points=10 ** 7), "points must be at most 20,000"),
    (lambda acc: acc.tradeoff(0.1, rtol="a"), "rtol"),
])
def test_tradeoff_arguments_are_named(call, name):
    acc = sp.Accountant().compose(sp.Gaussian(1.0))
    with pytest.raises(ValueError, match=name):
        call(acc)


def test_dp_event_composition_query_types():
    pytest.importorskip("dp_accounting")
    comp = sp.from_dp_event(sp.to_dp_event(sp.Gaussian(1.0)))
    with pytest.raises(ValueError, match="delta"):
        comp.epsilon("1e-5")
    with pytest.raises(ValueError, match="epsilon"):
        comp.delta("1")


@pytest.mark.parametrize("bad", [3.0, None, "gaussian", [3.0],
                                 sp.LogDensityPair(logp, logq)])
def test_to_dp_event_refuses_non_compositions(bad):
    pytest.importorskip("dp_accounting")
    with pytest.raises(ValueError, match="to_dp_event"):
        sp.to_dp_event(bad)


def test_complex_audit_scores():
    with pytest.raises(ValueError, match="scores_in must be real"):
        sp.audit([1 + 1j, 2.0], [0.0, 1.0])


def test_subsampled_batch_scheme_refused_at_construction():
    with pytest.raises(ValueError, match="already a batch-sampling scheme"):
        sp.PoissonSubsampled(sp.BallsAndBins(1.0, steps=3), 0.1)
    with pytest.raises(ValueError, match="already a batch-sampling scheme"):
        sp.FixedSizeSubsampled(sp.BallsAndBins(1.0, steps=3), 10, 100)


def test_things_that_cannot_run_are_refused_with_the_limit():
    with pytest.raises(ValueError, match="sigma"):
        sp.Shuffled(sigma=1e-308, steps=3)
    with pytest.raises(ValueError, match="slices"):
        sp.Shuffled(sigma=1e-3, steps=3)
    with pytest.raises(ValueError, match="10,000,000"):
        sp.BallsAndBins(1.0, steps=10 ** 12)
    sp.Shuffled(sigma=0.5, steps=3)
    sp.BallsAndBins(1.0, steps=10 ** 6)


# ---- a conditional envelope that would take hours is refused; minutes warn ---------------

def test_conditional_envelope_work_is_refused_or_warned_with_the_fix(monkeypatch):
    """``compose(BallsAndBins(1.0, 3), 10**6)`` ran on for many minutes without a word:
    its conditional envelope has 3.6e6 lattice points times about 4096 points of the bulk
    statistic, three times (about 4.4e10 normal-CDF evaluations).  The work is checked
    before it starts (limits lowered here so that the test is fast)."""
    import warnings

    from sampledprv.sampled.certification import conditional
    real_warn, real_refuse = conditional._WARN_WORK, conditional._REFUSE_WORK
    conditional._envelopes.clear()
    monkeypatch.setattr(conditional, "_REFUSE_WORK", 1e6)
    acc = sp.SampledAccountant(20_000, alpha=1e-3, seed=0, progress=False)
    with pytest.raises(ValueError, match=r"above the limit .*bins=2\*\*15"):
        acc.compose(sp.BallsAndBins(1.0, 3), 10).epsilon(1e-3)
    conditional._envelopes.clear()
    monkeypatch.setattr(conditional, "_REFUSE_WORK", 1e12)
    monkeypatch.setattr(conditional, "_WARN_WORK", 1e6)
    acc = sp.SampledAccountant(20_000, alpha=1e-3, seed=0, progress=False)
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        acc.compose(sp.BallsAndBins(1.0, 3), 10).epsilon(1e-3)
    assert any("minutes on one core" in str(w.message) for w in got)
    # the measured case (count 10**6: 3,612,452 lattice points, about 3 x 4096 points of
    # the bulk statistic) warns with the real limits and is not refused
    assert real_warn < 3_612_452 * 3 * 4096 < real_refuse
