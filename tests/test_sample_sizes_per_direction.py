"""``n_samples`` per direction (issue 33, item 5): an int, ``(n_remove, n_add)`` or a
mapping; each direction's histograms are drawn with its own ``n``; the planner proposes
both; the command line takes ``--n-samples N_REMOVE,N_ADD``."""

from __future__ import annotations

import json
import math
from types import SimpleNamespace

import pytest

import sampledprv as sp
from sampledprv.sampled.certification.planner import per_direction_n
from sampledprv.sampled.certification.sample_sizes import per_direction

SUB = sp.PoissonSubsampled(sp.Gaussian(1.0), 0.2)     # asymmetric: both directions sampled


@pytest.mark.parametrize("given, want", [
    (1000, {"remove": 1000, "add": 1000}),
    ((1000, 200), {"remove": 1000, "add": 200}),
    ([1000, 200], {"remove": 1000, "add": 200}),
    ({"remove": 7, "add": 9}, {"remove": 7, "add": 9}),
    ({sp.Direction.REMOVE: 7, sp.Direction.ADD: 9}, {"remove": 7, "add": 9}),
])
def test_forms_of_n_samples(given, want):
    assert per_direction(given) == want


@pytest.mark.parametrize("bad, match", [
    ((1000,), r"pair is \(n_remove, n_add\)"),
    ((1, 2, 3), r"pair is \(n_remove, n_add\)"),
    ({"remove": 5}, "keys 'remove' and 'add'"),
    ({"remove": 5, "add": 5, "both": 5}, "keys 'remove' and 'add'"),
    ((0, 5), r"n_samples\[0\] \(remove\)"),
    ((5, 2.5), r"n_samples\[1\] \(add\)"),
    ("many", "n_samples"),
])
def test_bad_n_samples_named(bad, match):
    with pytest.raises(ValueError, match=match):
        sp.SampledAccountant(bad)


def test_equal_pair_is_the_same_accountant_as_one_int():
    a = sp.SampledAccountant(40_000, alpha=1e-3, seed=3, progress=False).compose(SUB, 4)
    b = sp.SampledAccountant((40_000, 40_000), alpha=1e-3, seed=3,
                             progress=False).compose(SUB, 4)
    assert b.n_samples == 40_000
    ia, ib = a.epsilon(1e-3), b.epsilon(1e-3)
    assert (ia.lower, ia.estimate, ia.upper) == (ib.lower, ib.estimate, ib.upper)


def test_each_direction_is_drawn_with_its_own_n():
    acc = sp.SampledAccountant({"remove": 60_000, "add": 15_000}, alpha=1e-3, seed=1,
                               progress=False).compose(SUB, 3)
    emp = acc.empirical(SUB)
    assert emp.remove.n == 60_000 and emp.add.n == 15_000
    assert acc.n_for("remove") == 60_000 and acc.n_for(sp.Direction.ADD) == 15_000
    assert "remove 60,000 / add 15,000" in repr(acc)
    assert json.loads(json.dumps(acc.settings()))["n_samples"] == {"remove": 60_000,
                                                                  "add": 15_000}


def test_intervals_with_unequal_n_bracket_the_analytic_truth():
    truth = sp.Accountant(eps_error=1e-3, delta_error=1e-12).compose(SUB, 3)
    for seed in range(5):
        acc = sp.SampledAccountant((50_000, 10_000), alpha=1e-4, seed=seed,
                                   progress=False).compose(SUB, 3)
        for d in (1e-3, 1e-2):
            iv, ex = acc.epsilon(d), truth.epsilon(d)
            assert iv.lower <= ex.upper and ex.lower <= iv.upper, (seed, d, iv, ex)
        iv, ex = acc.delta(0.5), truth.delta(0.5)
        assert iv.lower <= ex.upper and ex.lower <= iv.upper


def test_fewer_draws_in_one_direction_only_widen_that_direction():
    wide = sp.SampledAccountant((60_000, 6_000), alpha=1e-3, seed=2,
                                progress=False).compose(SUB, 3)
    narrow = sp.SampledAccountant(60_000, alpha=1e-3, seed=2, progress=False).compose(SUB, 3)
    w_add = wide.epsilon(1e-2, direction="add")
    n_add = narrow.epsilon(1e-2, direction="add")
    assert w_add.upper - w_add.lower > n_add.upper - n_add.lower


def test_per_direction_proposal_meets_the_width_of_the_maximum():
    """max_d up_d - max_d lo_d <= up_j - lo_j for j the direction of the largest upper end:
    so each direction extrapolated to the target is enough; the narrower direction gets
    fewer draws."""
    iv = SimpleNamespace(details={"per_direction": {"remove": (1.0, 1.1, 1.4),
                                                    "add": (0.5, 0.55, 0.6)}})
    n = per_direction_n(iv, 10_000, 0.0, 0.1, n_min=1)
    assert n["remove"] == math.ceil(10_000 * (0.4 / 0.1) ** 2)
    assert n["add"] == math.ceil(10_000 * (0.1 / 0.1) ** 2)
    same = SimpleNamespace(details={"per_direction": {"remove": (1, 1, 2), "add": (1, 1, 2)}})
    assert per_direction_n(same, 100, 0.0, 0.5, 1) is None
    assert per_direction_n(SimpleNamespace(details={}), 100, 0.0, 0.5, 1) is None


def test_planner_proposes_both_and_the_command_line_takes_them():
    from cli_inprocess import run
    plan = sp.plan_samples(sp.BallsAndBins(1.0, 10), 3, 1e-3, alpha=1e-3, target_width=0.05,
                           pilot_n=50_000, sims=1)
    if plan.n_per_direction is not None:
        assert set(plan.n_per_direction) == {"remove", "add"}
        assert "per direction" in str(plan)
    res = run("epsilon", "-m", "balls-and-bins sigma=1 steps=10", "--accountant", "sampled",
              "--delta", "1e-3", "--alpha", "1e-3", "--n-samples", "4e4,1e4", "--json")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["accountant"]["n_samples"] == {"remove": 40_000,
                                                                 "add": 10_000}
    res = run("epsilon", "-m", "balls-and-bins sigma=1 steps=10", "--accountant", "sampled",
              "--delta", "1e-3", "--n-samples", "1,2,3")
    assert res.returncode == 2 and "N_REMOVE,N_ADD" in res.stderr
