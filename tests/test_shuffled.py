"""Shuffled batches: certified lower end from Chua et al.'s attained pair, deterministic
upper end (mechanisms/shuffled.py, shuffle.py)."""

from __future__ import annotations

import json
import math

import pytest
from scipy import integrate, stats

import sampledprv as sp
from sampledprv.core.interval import Interval
from sampledprv.mechanisms.shuffled import ShuffleSlicePair

#: Chua et al.'s lower-bound code (google-research dpsgd_batch_sampler_accounting,
#: dpsgd_bounds.ShuffleAccountant().get_epsilons(1.0, (1e-5,), 100, 10), default
#: discretization 1e-3) gives 9.360069 for sigma = 1, T = 100, 10 epochs, delta = 1e-5
CHUA_LOWER = 9.360069


def test_lower_end_is_at_least_chua_et_al_reference():
    iv = sp.ShuffleAccountant().compose(sp.Shuffled(1.0, 100), 10).epsilon(1e-5)
    assert iv.lower >= CHUA_LOWER
    det = iv.details["deterministic_batches"]
    assert iv.upper == det.upper and iv.lower < iv.upper
    assert "zero-out" in iv.method and "no dominating pair" in iv.method


def test_upper_none_reports_inf_and_prints():
    iv = sp.ShuffleAccountant(upper="none").compose(sp.Shuffled(2.0, 10), 2).epsilon(1e-5)
    assert iv.upper == math.inf and math.isfinite(iv.lower)
    assert "inf" in str(iv) and iv.width == math.inf
    assert "deterministic_batches" in iv.details


def test_one_batch_per_epoch_meets_the_deterministic_value():
    """T = 1: shuffling is the full batch, so the attained pair is the Gaussian itself and
    the two ends meet (up to the slicing of the statistic)."""
    for rel in ("add_remove", "substitute"):
        iv = sp.ShuffleAccountant(neighbouring=rel).compose(sp.Shuffled(2.0, 1), 3).epsilon(1e-5)
        assert iv.lower <= iv.upper <= iv.lower + 0.05


def test_slice_pair_single_epoch_below_the_continuous_statistic():
    """One epoch: the slice pair's exact delta is at most that of the continuous max
    statistic (post-processing) and close to it; computed by quadrature."""
    t, mp, mq, eps = 8, 2.0, 1.0, 1.0

    def dens(c, m):
        return stats.norm.pdf(c - m) * stats.norm.cdf(c) ** (t - 1) + \
            (t - 1) * stats.norm.cdf(c - m) * stats.norm.pdf(c) * stats.norm.cdf(c) ** (t - 2)
    cont, _ = integrate.quad(lambda c: max(dens(c, mp) - math.exp(eps) * dens(c, mq), 0.0),
                             -10, 15, limit=400)
    iv = sp.Accountant().compose(ShuffleSlicePair(mp, mq, t)).delta(eps, direction="remove")
    assert iv.lower <= cont + 1e-9
    assert iv.upper >= cont - 1e-3


def test_lower_end_is_below_the_deterministic_value_under_both_relations():
    for rel in ("add_remove", "substitute"):
        acc = sp.ShuffleAccountant(neighbouring=rel).compose(sp.Shuffled(1.5, 20), 4)
        d = acc.delta(2.0)
        assert 0.0 <= d.lower <= d.upper <= 1.0
        assert d.details["lower_pair"].lower <= d.details["deterministic_batches"].upper


def test_other_accountants_refuse_shuffled_with_a_pointer():
    m = sp.Shuffled(1.0, 100)
    with pytest.raises(ValueError, match="ShuffleAccountant"):
        sp.Accountant().compose(m)
    with pytest.raises(ValueError, match="ShuffleAccountant"):
        sp.SampledAccountant(1000).compose(m)
    with pytest.raises(ValueError, match="Shuffled"):
        sp.ShuffleAccountant().compose(sp.Gaussian(1.0))
    with pytest.raises(ValueError, match="steps"):
        sp.Shuffled(1.0, 0)


def test_interval_allows_an_infinite_upper_end():
    iv = Interval(1.0, 1.0, math.inf)
    assert 5.0 in iv and "inf" in str(iv)


def test_cli_shuffled_json(capsys):
    from sampledprv.cli import main
    rc = main(["epsilon", "-m", "shuffled sigma=2 steps=10", "-c", "3", "--delta", "1e-5",
               "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["accountant"]["type"] == "shuffle"
    r = out["results"][0]
    assert r["lower"] <= r["upper"] and "Chua" in r["method"]


def test_cli_plan_refuses_shuffled_and_names_the_command(capsys):
    """`plan` sizes draws of the sampled accountant; shuffled batches take none."""
    from sampledprv.cli import main
    rc = main(["plan", "-m", "shuffled sigma=1 steps=100", "-c", "10", "--delta", "1e-5"])
    err = capsys.readouterr().err
    assert rc == 2 and "not sampled" in err and "epsilon -m" in err


def test_cli_calibrate_shuffled_on_the_certified_upper_end(capsys):
    """Calibrating sigma of shuffled batches meets the target with the certified upper
    end (the deterministic-batch value) and says that the lower end is below it."""
    from sampledprv.cli import main
    rc = main(["calibrate", "-m", "shuffled sigma=? steps=10", "-c", "3", "--epsilon", "6",
               "--delta", "1e-5", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0
    sigma = out["value"]
    assert out["parameter"] == "sigma" and out["interval"]["upper"] <= 6.0
    acc = sp.ShuffleAccountant().compose(sp.Shuffled(sigma, steps=10), count=3)
    iv = acc.epsilon(1e-5)
    assert iv.upper <= 6.0 + 1e-9 and iv.lower < iv.upper
    worse = sp.ShuffleAccountant().compose(sp.Shuffled(0.99 * sigma, steps=10), count=3)
    assert worse.epsilon(1e-5).upper > 6.0
