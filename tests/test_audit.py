"""Audits against the certified trade-off curve (issue 26)."""

import json
import math

import numpy as np
import pytest
from scipy import stats

import sampledprv as sp
from sampledprv.core.auditing import (clopper_pearson, load_scores, one_run_p_value,
                                 _fdp_rejects)


@pytest.fixture(scope="module")
def gaussian():
    acc = sp.Accountant().compose(sp.Gaussian(1.0))
    return acc, acc.tradeoff_curve()


def test_exact_pair_never_exceeds_certified_upper_and_is_consistent(gaussian):
    acc, curve = gaussian
    eps_up = acc.epsilon(1e-5).upper
    over = consistent = 0
    for seed in range(200):
        rng = np.random.default_rng(seed)
        r = sp.audit(rng.normal(1.0, 1.0, 1000), rng.normal(0.0, 1.0, 1000), acc,
                     curve=curve)
        over += r.epsilon_lower > eps_up
        consistent += r.consistent
        assert r.epsilon_upper == eps_up
    assert over == 0
    assert consistent >= 190


def test_under_noised_implementation_is_caught(gaussian):
    """Scores simulated at sigma/2 (mu = 2) while sigma (mu = 1) is accounted."""
    acc, curve = gaussian
    caught = 0
    for seed in range(200):
        rng = np.random.default_rng(10_000 + seed)
        r = sp.audit(rng.normal(2.0, 1.0, 1000), rng.normal(0.0, 1.0, 1000), acc,
                     curve=curve)
        caught += not r.consistent
        if not r.consistent:
            assert r.verdict == "the implementation leaks more than accounted"
            assert any(p.violates for p in r.points)
    assert caught >= 190


def test_points_bounds_hold_on_exact_rates():
    """Clopper-Pearson bounds of each point contain the exact rates at its threshold
    (simultaneously, at the audit's confidence) in nearly every seed."""
    misses = 0
    for seed in range(100):
        rng = np.random.default_rng(seed)
        r = sp.audit(rng.normal(1.0, 1.0, 500), rng.normal(0.0, 1.0, 500))
        for p in r.points:
            fpr, tpr = stats.norm.sf(p.threshold), stats.norm.sf(p.threshold - 1.0)
            if fpr > p.fpr_upper or tpr < p.tpr_lower:
                misses += 1
                break
    assert misses <= 10
    assert r.verdict.startswith("no accountant")


def test_clopper_pearson_matches_beta_quantiles():
    assert clopper_pearson(0, 100, 0.05, "upper") == pytest.approx(1 - 0.05 ** (1 / 100))
    assert clopper_pearson(100, 100, 0.05, "lower") == pytest.approx(0.05 ** (1 / 100))
    assert clopper_pearson(0, 10, 0.05, "lower") == 0.0
    with pytest.raises(ValueError, match="side"):
        clopper_pearson(1, 10, 0.05, "both")
    # the upper bound holds at the significance itself, also where 1 - significance
    # rounds away from it (here by 0.3%): P[Bin(n, U) <= k] = significance
    from scipy import special
    tiny = 1e-9 / 65539
    u = clopper_pearson(7, 1000, tiny, "upper")
    assert special.betaincc(8, 993, u) == pytest.approx(tiny, rel=1e-9, abs=0.0)


def test_one_run_snj_and_fdp():
    # (eps, 0)-DP: the p-value is the binomial tail at e^eps / (1 + e^eps)
    p = one_run_p_value(1000, 100, 80, 1.0, 0.0)
    assert p == pytest.approx(stats.binom.sf(79, 100, 1 / (1 + math.exp(-1))))
    # the f-DP test rejects a too-private claim and accepts a loose one
    def gdp_inv(mu):
        return lambda y: stats.norm.cdf(stats.norm.ppf(np.atleast_1d(y)) - mu)
    assert _fdp_rejects(1000, 200, 196, 0.05, gdp_inv(0.3))
    assert not _fdp_rejects(1000, 200, 150, 0.05, gdp_inv(2.0))
    rng = np.random.default_rng(1)
    acc = sp.Accountant().compose(sp.Gaussian(1.0))
    member = rng.random(1000) < 0.5
    scores = rng.normal(0.0, 1.0, 1000) + member
    r = sp.audit(scores[member], scores[~member], acc, mode="one-run")
    assert r.consistent and 0 < r.epsilon_lower < r.epsilon_upper
    # a leakier run against a much more private claim is caught by the f-DP test
    acc_tight = sp.Accountant().compose(sp.Gaussian(4.0))
    scores = rng.normal(0.0, 1.0, 1000) + 2.0 * member
    r = sp.audit(scores[member], scores[~member], acc_tight, mode="one-run")
    assert not r.consistent
    assert any(t["fdp_rejects"] for t in r.details["tests"])


def test_load_scores_two_columns_and_json(tmp_path):
    f = tmp_path / "s.txt"
    f.write_text("score member\n0.5 1\n-0.2 0\n# note\n1.5, 1\n")
    s_in, s_out = load_scores(str(f))
    assert list(s_in) == [0.5, 1.5] and list(s_out) == [-0.2]
    g = tmp_path / "s.json"
    g.write_text(json.dumps({"in": [1, 2], "out": [0]}))
    s_in, s_out = load_scores(str(g))
    assert list(s_in) == [1, 2] and list(s_out) == [0]
    g.write_text(json.dumps({"a": [1]}))
    with pytest.raises(ValueError, match="'in' and 'out'"):
        load_scores(str(g))
    f.write_text("0.5 3\n")
    with pytest.raises(ValueError, match="second column"):
        load_scores(str(f))


def test_bad_audit_input():
    with pytest.raises(ValueError, match="scores_in"):
        sp.audit([], [1.0])
    with pytest.raises(ValueError, match="confidence"):
        sp.audit([1.0], [0.0], confidence=1.5)
    with pytest.raises(ValueError, match="mode"):
        sp.audit([1.0], [0.0], mode="many")
