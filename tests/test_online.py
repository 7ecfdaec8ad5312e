"""Online accounting (``Accountant(horizon=...)``): spectra multiplied in place, curves read
by Plancherel sums, compared with full rebuilds and exact curves."""

from __future__ import annotations

import math

import numpy as np
import pytest

import sampledprv as sp
from sampledprv.engine.compose import compose_lattices
from sampledprv.engine.curve import PrivacyCurve
from sampledprv.engine.discretize import discretize
from sampledprv.engine.online import OnlineComposition
from sampledprv.mechanisms.relations import privacy_loss

from exact_curves import gaussian_delta, gaussian_eps

HETEROGENEOUS = [
    sp.Gaussian(2.0),
    sp.Laplace(4.0),
    sp.RandomizedResponse(0.6),
    sp.PoissonSubsampled(sp.GeneralizedGaussian(1.5, 1.0), q=0.05),
    sp.PoissonSubsampled(sp.Gaussian(1.0), q=0.02),
]


def _sequence(steps: int) -> list:
    return [HETEROGENEOUS[i % len(HETEROGENEOUS)] for i in range(steps)]


@pytest.mark.parametrize("direction", ["remove", "add"])
def test_plancherel_answers_equal_a_rebuild_within_the_error_terms(direction):
    """Same mesh and discretization: the online curve and a fresh FFT rebuild differ only
    by aliasing and round-off, so by at most the sum of both sides' bounds."""
    h, tau, tail = 2e-3, 1e-14, 1e-12
    pmfs = {m: discretize(privacy_loss(m, direction), h, tau).pmf for m in HETEROGENEOUS}
    n = 2**15
    lam = np.geomspace(1e-3, 1e3, 37) / 2.0
    online = OnlineComposition(h, n, lam, tail, eps_min=-0.05)
    seq = _sequence(60)
    for step, mech in enumerate(seq, start=1):
        online.add(mech, pmfs[mech], 1)
        if step not in (1, 7, 23, 60):
            continue
        counts: dict = {}
        for m in seq[:step]:
            counts[m] = counts.get(m, 0) + 1
        rebuilt = compose_lattices([(pmfs[m], c) for m, c in counts.items()], tail_mass=tail)
        curve = PrivacyCurve(rebuilt.values, rebuilt.probs, rebuilt.p_inf, eps_min=-0.05)
        slack = (online.spill_upper + online.spill_lower + online.numeric_error
                 + rebuilt.spill_upper + rebuilt.spill_lower + rebuilt.numeric_error)
        assert slack < 1e-9
        for eps in (0.0, 0.3, 1.0, 2.5, 4.0):
            assert abs(online.delta(eps) - curve.delta(eps)) <= slack, (step, eps)
        for delta in (1e-2, 1e-4, 1e-6):
            if delta <= online.p_inf + 10 * slack:
                continue
            e = online.epsilon(delta)
            # the online answer lies between the rebuild's answers at delta -+ slack
            assert curve.epsilon(delta + slack) - 1e-9 <= e <= curve.epsilon(delta - slack) + 1e-9


def test_online_accountant_brackets_exact_gaussians_step_by_step():
    """Heterogeneous Gaussians added one at a time: every interval contains the exact
    epsilon of the merged Gaussian."""
    acc = sp.Accountant(eps_error=0.02, delta_error=1e-12, horizon=300)
    sigmas = [2.0, 3.0, 5.0]
    mu2 = 0.0
    for step in range(1, 301):
        sigma = sigmas[step % 3]
        acc.compose(sp.Gaussian(sigma))
        mu2 += 1.0 / sigma ** 2
        if step in (1, 10, 77, 300):
            for delta in (1e-3, 1e-6):
                iv = acc.epsilon(delta)
                assert "online" in iv.method
                truth = gaussian_eps(math.sqrt(mu2), delta)
                assert iv.lower <= truth <= iv.upper, (step, delta, iv, truth)
                assert iv.width <= 2 * 0.02 + 1e-3
            iv = acc.delta(1.0)
            assert iv.lower <= gaussian_delta(math.sqrt(mu2), 1.0) <= iv.upper


def test_online_accountant_agrees_with_rebuilds_on_heterogeneous_sequences():
    """Gaussian, Laplace, randomized response and subsampled GG steps: online intervals
    and rebuilt intervals (another mesh) both certify, so they must overlap, and the
    online estimate lies within the rebuild's interval widened by the mesh error."""
    acc = sp.Accountant(eps_error=0.03, delta_error=1e-11, horizon=120)
    seq = _sequence(120)
    for step, mech in enumerate(seq, start=1):
        acc.compose(mech)
        if step in (3, 40, 120):
            rebuilt = sp.Accountant(eps_error=0.03, delta_error=1e-11, merge_gaussians=False)
            for m, c in acc.composition:
                rebuilt.compose(m, c)
            for delta in (1e-3, 1e-6):
                a, b = acc.epsilon(delta), rebuilt.epsilon(delta)
                assert "online" in a.method and "online" not in b.method
                assert a.lower <= b.upper and b.lower <= a.upper, (step, delta, a, b)
                assert b.lower - 0.03 <= a.estimate <= b.upper + 0.03
            for eps in (0.5, 2.0):
                a, b = acc.delta(eps), rebuilt.delta(eps)
                assert a.lower <= b.upper and b.lower <= a.upper


def test_beyond_the_horizon_rebuilds_and_says_so():
    acc = sp.Accountant(eps_error=0.02, delta_error=1e-12, horizon=20)
    for _ in range(50):
        acc.compose(sp.Gaussian(4.0))
        iv = acc.epsilon(1e-5)
    assert iv.lower <= gaussian_eps(math.sqrt(50) / 4.0, 1e-5) <= iv.upper
    text = acc.describe()
    assert "exceed the horizon of 20" in text and "exceed the horizon of 40" in text
    assert "online updates: on" in text
    assert "Accountant(" in sp.Accountant().describe()
    assert "no horizon" in sp.Accountant().compose(sp.Gaussian(1.0)).describe()


def test_many_queries_reuse_one_spectrum(monkeypatch):
    """A curve over many epsilons costs one inverse FFT (online) or one build."""
    from sampledprv import plotting
    from sampledprv.analytic import build as accountant_module   # the builder
    from sampledprv.engine import online as online_engine

    calls = {"irfft": 0, "compose": 0}
    real_irfft, real_compose = online_engine.irfft, accountant_module.compose_lattices

    def counting_irfft(*a, **k):
        calls["irfft"] += 1
        return real_irfft(*a, **k)

    def counting_compose(*a, **k):
        calls["compose"] += 1
        return real_compose(*a, **k)

    monkeypatch.setattr(online_engine, "irfft", counting_irfft)
    monkeypatch.setattr(accountant_module, "compose_lattices", counting_compose)
    online = sp.Accountant(eps_error=0.05, delta_error=1e-10, horizon=100)
    online.compose(sp.Gaussian(3.0), 60)
    curve = plotting.privacy_curve(online, np.linspace(0, 4, 40))
    assert calls["irfft"] == 1 and calls["compose"] == 0
    mu = math.sqrt(60) / 3.0
    for e, lo, up in zip(curve.epsilons, curve.lower, curve.upper):
        assert lo <= gaussian_delta(mu, e) <= up
    plain = sp.Accountant(eps_error=0.05, delta_error=1e-10, merge_gaussians=False)
    plain.compose(sp.Gaussian(3.0), 60)
    plotting.privacy_curve(plain, np.linspace(0, 4, 40))
    assert calls["compose"] == 1


def test_horizon_validation():
    with pytest.raises(ValueError, match="horizon"):
        sp.Accountant(horizon=0)
