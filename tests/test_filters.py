"""Privacy filters under adaptivity: the filter never lets the total cross the budget,
stops exactly when the next mechanism would cross it, and the adaptive transcript's exact
Renyi divergence (finite outputs, enumerated) stays within the budget."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import sampledprv as sp
from sampledprv.rdp.filters import (GaussianDPFilter, IndividualRenyiFilter, RenyiFilter,
                                    RenyiOdometer, gaussian_record_costs, mechanism_costs)

ORDER = 4.0


def test_adversarial_gaussian_sequence_never_crosses_and_stops_exactly():
    """The next sigma is chosen from the last output (smaller when the output is large, so
    the adversary spends fast exactly when it sees signal); 200 seeds."""
    budget = {2.0: 1.0, ORDER: 2.0, 16.0: 8.0}
    for seed in range(200):
        r = np.random.default_rng(seed)
        f = RenyiFilter(budget)
        sigma, stopped = 3.0, False
        for _ in range(500):
            nxt = sp.Gaussian(sigma)
            cost = mechanism_costs(nxt, f.orders)
            crosses = bool(np.any(f.spent + cost > f._b * (1 + 1e-12)))
            assert f.would_cross(nxt) == crosses
            ran = f.try_spend(nxt)
            assert ran == (not crosses)
            assert np.all(f.spent <= f._b * (1 + 1e-12))
            if not ran:
                stopped = True
                assert f.halted and not f.try_spend(sp.Gaussian(1e6))
                break
            y = r.normal(0.0, sigma)
            sigma = float(np.clip(3.0 / (1.0 + abs(y)), 0.8, 5.0))
        assert stopped


def test_filter_admits_exactly_the_remaining_budget():
    f = RenyiFilter({2.0: 1.0})
    assert f.try_spend({2.0: 0.25}) and f.try_spend({2.0: 0.75})   # sum == budget
    assert f.remaining[2.0] == 0.0
    assert not f.try_spend({2.0: 1e-9}) and f.halted
    g = RenyiFilter({2.0: 1.0}, halt=False)
    assert not g.try_spend({2.0: 1.5}) and g.try_spend({2.0: 0.5}) and not g.halted


def _rr(p, bit):
    """Output law of randomized response (true bit w.p. p) on input ``bit``."""
    return (1 - p, p) if bit else (p, 1 - p)


def _transcript_divergence(budget_value, eps_pool, choose, order, steps):
    """Exact D_order between the transcript laws on bit 1 and bit 0 of an adaptive
    sequence of randomized responses run through a RenyiFilter (halt=False, so a refused
    step is skipped and the next choice may still run)."""
    def law(bit):
        out = {}
        for outs in itertools.product((0, 1), repeat=steps):
            f = RenyiFilter({order: budget_value}, halt=False)
            prob, hist = 1.0, ()
            for t in range(steps):
                eps = eps_pool[choose(hist) % len(eps_pool)]
                p = 1.0 / (1.0 + math.exp(-eps))
                if f.try_spend(sp.RandomizedResponse(p)):
                    prob *= _rr(p, bit)[outs[t]]
                    hist = hist + (outs[t],)
                else:
                    hist = hist + (None,)
                    if outs[t] == 1:          # a skipped step outputs nothing: count once
                        prob = 0.0
            out[hist] = out.get(hist, 0.0) + prob
        return out
    p1, p0 = law(1), law(0)
    keys = set(p1) | set(p0)
    def d(a, b):
        return math.log(sum(a.get(k, 0) ** order * b.get(k, 0) ** (1 - order)
                            for k in keys if a.get(k, 0) > 0)) / (order - 1)
    return max(d(p1, p0), d(p0, p1))


@pytest.mark.parametrize("seed", range(5))
def test_adaptive_transcript_stays_within_the_budget(seed):
    r = np.random.default_rng(seed)
    pool = [0.2, 0.5, 1.0, 1.5]
    table = {}

    def choose(hist):
        # an arbitrary adaptive rule: a fixed random function of the history so far
        if hist not in table:
            table[hist] = int(r.integers(0, 4))
        return table[hist]

    budget = 1.2
    d = _transcript_divergence(budget, pool, choose, ORDER, steps=6)
    assert d <= budget * (1 + 1e-9)


def test_gaussian_dp_filter():
    f = GaussianDPFilter(1.0)
    assert f.try_spend(sp.Gaussian(2.0)) and f.try_spend(0.5) and f.try_spend(0.5)
    assert f.spent ** 2 == pytest.approx(0.75)
    assert f.would_cross(sp.Gaussian(1.9)) and not f.try_spend(sp.Gaussian(1.9))
    assert f.halted
    with pytest.raises(ValueError, match="RenyiFilter"):
        GaussianDPFilter(1.0).try_spend(sp.Laplace(1.0))


def test_individual_filter_charges_small_gradients_less():
    n, sigma, steps = 50, 2.0, 400
    norms = np.linspace(0.05, 1.0, n)            # clipped per-record gradient norms
    f = IndividualRenyiFilter(n, {ORDER: 4.0})
    worst = RenyiFilter({ORDER: 4.0})
    costs = gaussian_record_costs(norms, sigma, f.orders)
    ran_worst = 0
    for _ in range(steps):
        f.admit(costs)
        ran_worst += worst.try_spend(sp.Gaussian(sigma, 1.0))
    assert np.all(f.spent <= 4.0 * (1 + 1e-12))
    # the record with the full norm is stopped when the worst case is; small ones go on
    assert not f.active[-1] and f.active[0]
    assert f.spent[0, 0] < f.spent[-1, 0]
    step = float(mechanism_costs(sp.Gaussian(sigma, 1.0), [ORDER])[0])   # 0.5, rounded up
    assert ran_worst == max(k for k in range(100) if k * step <= 4.0 * (1 + 1e-12))
    with pytest.raises(ValueError, match="shape"):
        f.admit(np.zeros((n + 1, 1)))


def test_subsampled_record_costs_round_up():
    norms = np.array([0.0, 0.3, 1.0])
    c = gaussian_record_costs(norms, 1.0, [2.0, 8.0], q=0.1, levels=8, clip=1.0)
    assert c[0].sum() == 0.0
    exact = mechanism_costs(sp.PoissonSubsampled(sp.Gaussian(1.0, 0.3), 0.1), [2.0, 8.0])
    assert np.all(c[1] >= exact) and np.all(c[1] <= c[2])


def test_for_dp_and_odometer():
    f = RenyiFilter.for_dp(2.0, 1e-5, order=16.0)
    assert f.epsilon(1e-5) <= 2.0 + 1e-9
    od = RenyiOdometer(ORDER, base=0.05)
    for s in (5.0, 3.0, 2.0):
        od.spend(sp.Gaussian(s))
    assert od.spent == pytest.approx(ORDER / 2 * (1 / 25 + 1 / 9 + 1 / 4))
    b_k = 0.05 * 2 ** (od.level - 1)
    assert b_k / 2 < od.spent <= b_k
    assert od.epsilon(1e-5) >= sp.rdp.epsilon_from_rdp([ORDER], [od.spent], 1e-5)


def test_bad_budgets():
    with pytest.raises(ValueError, match="budget"):
        RenyiFilter({})
    with pytest.raises(ValueError, match="orders"):
        RenyiFilter({1.0: 1.0})
    with pytest.raises(ValueError, match="missing"):
        RenyiFilter({2.0: 1.0, 4.0: 2.0}).try_spend({2.0: 0.1})
    with pytest.raises(ValueError, match="RenyiFilter"):
        GaussianDPFilter(1.0).would_cross("gaussian")
