"""Every discrete spec works with PoissonSubsampled, both accountants, calibration and the
command line; per-direction answers; the Numba and numpy samplers agree with the laws."""

from __future__ import annotations

import json

import numpy as np
import pytest

import sampledprv as sp
from sampledprv.cli import format_mechanism, main, parse_mechanism

SPECS = [
    sp.Binomial(200, 0.5),
    sp.DiscreteLaplace(3.0),
    sp.DiscreteGaussian(3.0),
    sp.ExponentialMechanism(0.5, (2.0, 1.0, 0.0), (1.0, 1.0, 1.0)),
    sp.FinitePair((0.5, 0.3, 0.2), (0.3, 0.3, 0.4)),
]


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: type(s).__name__)
def test_subsampled_in_both_accountants(spec):
    sub = sp.PoissonSubsampled(spec, 0.1)
    exact = sp.Accountant(eps_error=0.01).compose(sub, 20)
    iv = exact.delta(0.3)
    assert 0.0 <= iv.lower <= iv.upper <= 1.0
    sampled = sp.SampledAccountant(100_000, alpha=1e-6, seed=3).compose(sub, 20)
    s_iv = sampled.delta(0.3)
    assert s_iv.lower <= iv.upper and iv.lower <= s_iv.upper
    # per-direction answers bracket each direction and the default is their maximum
    rem, add = exact.delta(0.3, direction="remove"), exact.delta(0.3, direction=sp.Direction.ADD)
    assert max(rem.upper, add.upper) == pytest.approx(iv.upper, rel=1e-12)
    assert max(rem.lower, add.lower) == pytest.approx(iv.lower, rel=1e-12)


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: type(s).__name__)
def test_samplers_match_the_law(spec):
    """The numpy sampler's empirical mean of (1 - e^{eps - L})_+ matches the exact law
    (both directions), and the Numba kernel (table kind) agrees with it."""
    from sampledprv.mechanisms.relations import privacy_loss
    from sampledprv.sampled.histograms._numpy_histogram import numpy_loss_sampler
    from sampledprv.sampled.histograms.kernels import loss_histogram
    rng = np.random.default_rng(0)
    for d in ("remove", "add"):
        law = privacy_loss(spec, d)
        y = numpy_loss_sampler(spec, d)(rng, 200_000)
        for eps in (0.0, 0.5):
            emp = float(np.mean(np.where(y > eps, -np.expm1(eps - np.minimum(y, 1e300)), 0.0)))
            vals, m = law.atom_values, law.atom_masses
            exact = float(np.sum(m[vals > eps] * -np.expm1(eps - vals[vals > eps]))) + law.p_pos_inf
            assert abs(emp - exact) < 5e-3
        lo, hi = float(np.min(y[np.isfinite(y)])) - 1, float(np.max(y[np.isfinite(y)])) + 1
        hist = loss_histogram(spec, direction=d, n=200_000, lo=lo, h=(hi - lo) / 64, bins=64,
                              seed=1)
        ref = np.histogram(y[np.isfinite(y)], bins=64, range=(lo, lo + 64 * (hi - lo) / 64))[0]
        assert np.abs(hist.counts / hist.n - ref / y.size).max() < 1e-2


def test_calibration_of_discrete_noise():
    r = sp.calibrate(lambda s: sp.PoissonSubsampled(sp.DiscreteLaplace(s), 0.05), count=50,
                     epsilon=1.0, delta=1e-6)
    assert r.interval.upper <= 1.0 and r.interval.upper >= 0.98
    r2 = sp.calibrate(lambda s: sp.DiscreteGaussian(s), count=10, epsilon=2.0, delta=1e-6)
    assert r2.interval.upper <= 2.0


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: type(s).__name__)
def test_cli_strings(spec):
    back = parse_mechanism(format_mechanism(spec)).build()
    assert type(back) is type(spec)
    assert format_mechanism(back) == format_mechanism(spec)


def test_cli_runs_discrete_kinds(capsys):
    code = main(["epsilon", "-m", "subsampled-discrete-laplace scale=8 q=256/60000", "-c", "100",
                 "-m", "binomial trials=100", "-c", "1", "--delta", "1e-6", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["results"][0]["upper"] > 0
    code = main(["delta", "-m", "finite-pair p=0.5:0.5 q=0.4:0.6", "--epsilon", "0.1",
                 "--neighbouring", "substitute", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["accountant"]["neighbouring"] == "substitute"
    code = main(["epsilon", "-m", "fixed-gaussian sigma=1 batch_size=100 dataset_size=10000",
                 "-c", "10", "--neighbouring", "substitute", "--delta", "1e-5"])
    assert code == 0
    code = main(["epsilon", "-m", "finite-pair p=0.5:0.6 q=0.4:0.6", "--delta", "1e-5"])
    err = capsys.readouterr().err
    assert code == 2 and "p must sum to 1" in err
