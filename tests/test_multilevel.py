"""The multi-level composition tree and the core/tail split (engine/evolving.py,
engine/core_tail.py): exact identities on small cases, certified bounds, plans."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import sampledprv as sp
from sampledprv.engine.compose import compose_lattices
from sampledprv.engine.core_tail import (binomial_tail_bound, split_step, tail_cap,
                                         tail_mixture)
from sampledprv.engine.discretize import discretize
from sampledprv.engine.evolving import LevelPlan, plan_levels
from sampledprv.engine.lattice import LatticePMF
from sampledprv.mechanisms.relations import privacy_loss

from exact_curves import gaussian_eps


@pytest.mark.parametrize("k", [10, 1000, 10**6])
def test_binomial_tail_bound_is_an_upper_bound(k):
    for p in (1e-7, 1e-4, 0.01, 0.3):
        for j in sorted({0, 1, 3, int(k * p) + 1, int(k * p) + 10, min(k, 40)}):
            if j >= k:
                continue
            exact = stats.binom.sf(j, k, p)
            assert binomial_tail_bound(k, p, j) >= exact * (1 - 1e-12), (k, p, j)
    cap, bound = tail_cap(k, 2.0 / k, 1e-12)
    assert bound <= 1e-12 and stats.binom.sf(cap, k, 2.0 / k) <= 1e-12


def test_tail_mixture_is_the_binomial_expansion():
    """(c + u)^{*k} = c^{*(k-J)} * W + (terms with more than J tail steps): exact on a
    small lattice, and the dropped mass is below the binomial bound."""
    rng = np.random.default_rng(3)
    c = LatticePMF(probs=rng.random(7) * 0.97 / 3.5, offset=-2, h=0.5, shift=0.1)
    c = LatticePMF(probs=c.probs * (0.97 / c.probs.sum()), offset=-2, h=0.5, shift=0.1)
    u = LatticePMF(probs=np.array([0.01, 0.0, 0.02]), offset=9, h=0.5, shift=0.1)
    k, cap = 40, 6
    step = np.zeros(20)
    step[0:7] = c.probs            # index i <-> offset -2 + i
    step[11:14] = u.probs
    full = np.array([1.0])
    for _ in range(k):
        full = np.convolve(full, step)
    w, w_err = tail_mixture(c, u, k, cap)
    x = compose_lattices([(c, k - cap)], tail_mass=1e-30)
    xs = np.convolve(x.probs, w.probs)
    start = x.offset + w.offset + 2 * k            # full[i] <-> offset -2k + i
    got = np.zeros(max(full.size, start + xs.size))
    got[start:start + xs.size] = xs
    full = np.pad(full, (0, got.size - full.size))
    dropped = full - got
    assert np.all(dropped >= -1e-14)
    bound = binomial_tail_bound(k, float(u.probs.sum()), cap)
    assert dropped.sum() <= bound + 1e-14
    assert dropped.sum() > 0                       # the cap really cut something
    assert w.shift == pytest.approx(cap * c.shift) and w_err < 1e-12


@pytest.mark.parametrize("direction", ["remove", "add"])
def test_split_step_keeps_mass_and_mean(direction):
    law = privacy_loss(sp.PoissonSubsampled(sp.Gaussian(0.8), q=4e-3), direction)
    h, factor, k = 4e-6, 25, 10**6
    lo, hi = law.lower_point(1.0 / k), law.upper_point(1.0 / k)
    ct = split_step(law, h, 1e-18, factor, lo, hi)
    full = discretize(law, h, 1e-18)
    core, tail = ct.core.pmf, ct.tail
    assert tail.h == pytest.approx(factor * h) and tail.shift == core.shift
    mass = core.probs.sum() + tail.probs.sum()
    assert mass == pytest.approx(full.pmf.probs.sum(), abs=1e-12)
    assert 0 < ct.tail_mass <= 2.0 / k
    mean = (core.values * core.probs).sum() + (tail.values * tail.probs).sum()
    mean_full = (full.pmf.values * full.pmf.probs).sum()
    assert mean == pytest.approx(mean_full, rel=1e-6, abs=1e-12)
    assert core.probs.size < full.pmf.probs.size / 5


def test_level_plan_decomposition_and_variance():
    v_star = 2 * 0.01 ** 2 / math.log(1 / 5e-11)
    width = lambda n: 0.5 + 0.14 * math.sqrt(n)      # noqa: E731 - a window model
    for count in (20_000, 10**6 + 7, 3 * 10**7 + 11):
        plan = plan_levels([count], v_star, width, extra_top=12)
        n = plan.node_counts
        assert sum(mult * n[j] for j, mult in plan.decompose(count).items()) == count
        assert plan.rounding_variance([count], 12) <= v_star
        assert plan.levels >= 1 and all(f >= 2 for f in plan.factors)
    one = LevelPlan(1e-3)
    assert one.rounding_variance([100]) == pytest.approx(100 * 1e-6)
    with pytest.raises(ValueError):
        LevelPlan(1e-3, (1,), (2,))


@pytest.mark.parametrize("k", [3 * 10**5, 10**6, 10**7, 10**8])
def test_multi_level_gaussian_brackets_exact(k):
    """Discretized Gaussians (split into core and tail, composed by the tree) bracket the
    closed form, down to ``delta = 1e-10``.  From ``k = 1e7`` on, the unweighted
    numeric error (the CDF round-off, 8 ulp per step, and the nodes' FFT round-off) is
    above ``1e-8``: those deltas are answered because the errors are weighted by the
    curve beyond the pieces' windows (engine/error_weights.py)."""
    sigma = math.sqrt(k) / 1.5                     # composed mu = 1.5
    acc = sp.Accountant(eps_error=0.02, delta_error=1e-12, merge_gaussians=False)
    acc.compose(sp.Gaussian(sigma), k)
    for delta in (1e-2, 1e-5, 1e-8, 1e-10):
        iv = acc.epsilon(delta)
        assert "multi-level" in iv.method
        assert iv.lower <= gaussian_eps(1.5, delta) <= iv.upper, (k, delta, iv)
        assert iv.upper - iv.lower < 2.2 * 0.02
        if k >= 10**7:
            assert iv.details["delta_error_upper_unweighted"] > 1e-8
        assert iv.details["delta_error_upper"] < 0.01 * delta


def test_multi_level_subsampled_is_below_the_renyi_bound():
    """DP-SGD at k = 3e5 through the split and the tree: its lower end is below the
    certified Renyi upper bound and its width is the requested one."""
    mech = sp.PoissonSubsampled(sp.Gaussian(1.0), q=0.01)
    k = 300_000
    multi = sp.Accountant(eps_error=0.05).compose(mech, k).epsilon(1e-6)
    assert "multi-level" in multi.method
    from sampledprv.rdp import RdpAccountant
    rdp = RdpAccountant().compose(mech, k).epsilon(1e-6)
    assert multi.lower <= rdp
    assert multi.width <= 2 * 0.05 + 0.01


def test_multi_level_subsampled_at_1e8_is_below_the_renyi_bound():
    """DP-SGD at k = 1e8 (both directions, in two threads below 2^25 points):
    the lower end is below the certified Renyi upper bound, the estimate inside."""
    mech = sp.PoissonSubsampled(sp.Gaussian(1.0), q=0.01)
    k = 10**8
    multi = sp.Accountant(eps_error=0.05).compose(mech, k).epsilon(1e-5)
    assert "multi-level" in multi.method
    assert multi.details["directions"] == ("remove", "add")
    from sampledprv.rdp import RdpAccountant
    rdp = RdpAccountant().compose(mech, k).epsilon(1e-5)
    assert multi.lower <= multi.estimate <= multi.upper
    assert multi.lower <= rdp


def test_every_direction_is_built_when_directions_run_one_after_the_other(monkeypatch):
    """Above the parallel-grid threshold the directions are built one after the other;
    both must be (an earlier version built only the remove direction there, so the add
    direction silently dropped out of the maximum)."""
    import sampledprv.analytic.build as accountant   # the builder (analytic/build.py)
    mech = sp.PoissonSubsampled(sp.Gaussian(0.8), q=4e-3)
    parallel = sp.Accountant(eps_error=0.01).compose(mech, count=1000).epsilon(1e-5)
    monkeypatch.setattr(accountant, "_PARALLEL_GRID", 0)
    serial = sp.Accountant(eps_error=0.01).compose(mech, count=1000).epsilon(1e-5)
    assert serial.details["directions"] == ("remove", "add")
    assert (serial.lower, serial.upper) == (parallel.lower, parallel.upper)
    add_only = sp.Accountant(eps_error=0.01).compose(mech, count=1000).epsilon(
        1e-5, direction="add")
    assert add_only.upper <= serial.upper
