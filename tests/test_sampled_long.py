"""Long compositions: bins from k, monotone regridding, two-level envelopes, coverage."""

from __future__ import annotations

import math

import numpy as np
import pytest

import sampledprv as sp
from sampledprv.engine import LatticePMF
from sampledprv.sampled.histograms.window import choose_window
from sampledprv.sampled.certification.twolevel import bins_for, monotone_regrid

from exact_curves import gaussian_eps


def test_bins_for_grows_like_sqrt_k():
    assert bins_for(1) == 2**15 and bins_for(1000) == 2**17 and bins_for(10**4) == 2**19
    assert bins_for(10**9) == 2**22
    with pytest.raises(ValueError, match="k must be"):
        bins_for(0)


@pytest.mark.parametrize("k", [1000, 3000, 10**4, 10**5])
def test_rounding_bias_is_a_small_fraction_of_the_spread(k):
    """k h stays below 1% of the composed standard deviation sqrt(k) mu (Gaussian PRV,
    window for n = 1e12), i.e. below ~10% of the certified widths at those n."""
    mu = 1.0 / math.sqrt(k)
    lo, h, nb = choose_window(sp.Gaussian(1.0 / mu), "remove", 10**12, bins_for(k),
                              np.random.default_rng(0))
    assert k * h <= 0.01 * math.sqrt(k) * mu
    lo4, h4, _ = choose_window(sp.Gaussian(1.0 / mu), "remove", 10**12, 4096,
                               np.random.default_rng(0))
    assert k * h4 > 4 * k * h      # what a fixed small grid would have cost


def test_monotone_regrid_orders_and_keeps_mass():
    rng = np.random.default_rng(1)
    p = LatticePMF(rng.random(101) / 200, -37, 0.01, shift=0.003, p_inf=0.01)
    up, down = monotone_regrid(p, 8, "up"), monotone_regrid(p, 8, "down")
    for q in (up, down):
        assert q.h == 0.08 and math.isclose(q.probs.sum(), p.probs.sum(), rel_tol=1e-12)
        assert q.p_inf == p.p_inf

    def tail(q, t):   # P[X >= t]
        return float(q.probs[q.values >= t - 1e-12].sum())
    for t in np.linspace(-0.5, 0.7, 61):
        assert tail(down, t) <= tail(p, t) + 1e-15 <= tail(up, t) + 2e-15


def test_two_level_envelopes_bracket_the_exact_curve():
    k, delta = 400, 1e-2
    mu = 1.0 / math.sqrt(k)
    exact = gaussian_eps(1.0, delta)
    kw = dict(alpha=1e-6, seed=4, progress=False, bins=2**15)
    one = sp.SampledAccountant(2_000_000, **kw).compose(sp.Gaussian(1 / mu), k)
    iv1 = one.epsilon(delta=delta)
    two = sp.SampledAccountant(2_000_000, max_grid=2**18, **kw).compose(sp.Gaussian(1 / mu), k)
    iv2 = two.epsilon(delta=delta)
    assert iv2.details["two_level_factor"] >= 2 and "two_level_factor" not in iv1.details
    assert iv2.details["mesh"] == iv1.details["mesh"]      # the fine mesh is kept
    assert iv2.lower <= exact <= iv2.upper
    assert iv2.lower <= iv1.lower + 1e-12 and iv2.upper >= iv1.upper - 1e-12
    assert iv2.width <= iv1.width + 2 * iv2.details["mesh_width"]


def test_coverage_with_the_auto_bins_rule():
    """Four independent runs with bins='auto' (2**15 bins at k = 64) all contain the
    exact epsilon; at alpha = 1e-3 a miss has probability below 0.4% if certified."""
    k, delta = 64, 1e-2
    mu = 1.0 / math.sqrt(k)
    exact = gaussian_eps(1.0, delta)
    for seed in range(4):
        acc = sp.SampledAccountant(1_000_000, alpha=1e-3, seed=100 + seed, progress=False)
        iv = acc.compose(sp.Gaussian(1 / mu), k).epsilon(delta=delta)
        assert iv.details["bins"] == 2**15
        assert iv.lower <= exact <= iv.upper, (seed, iv, exact)
        assert iv.width < 0.5 * exact


@pytest.mark.parametrize("n, pilot", [(500, 2**13), (2000, 2**13), (5000, 20_000),
                                      (16_384, 2**16), (10**6, 2**16)])
def test_pilot_of_a_window_scales_with_the_run(monkeypatch, n, pilot):
    """A mechanism without an analytic law gets its window from a pilot of
    min(2^16, max(2^13, 4 n)) draws, drawn from the generator it is given (not the
    run's), and the window covers the pilot's draws."""
    from sampledprv.sampled.histograms import window as win
    seen = []
    real = win._np_hist.numpy_loss_sampler

    def recording(mechanism, direction):
        draw = real(mechanism, direction)

        def sample(rng, size):
            seen.append(size)
            out = draw(rng, size)
            seen.append(out)
            return out
        return sample

    monkeypatch.setattr(win._np_hist, "numpy_loss_sampler", recording)
    spec = sp.RandomAllocation(1.0, 4, 2)
    lo, h, nb = choose_window(spec, "remove", n, 256, np.random.default_rng(5))
    assert seen[0] == pilot
    draws = seen[1][np.isfinite(seen[1])]
    assert lo <= draws.min() and draws.max() < lo + nb * h
    again = choose_window(spec, "remove", n, 256, np.random.default_rng(5))
    assert again == (lo, h, nb)                   # the pilot's generator decides it
