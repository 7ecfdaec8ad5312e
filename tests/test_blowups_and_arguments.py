"""Regression tests: impossible requests fail fast and small, and bad arguments are named.

Memory is measured with :mod:`tracemalloc` (numpy reports its buffers to it): a
refusal must come before anything proportional to the grid is allocated."""

from __future__ import annotations

import contextlib
import io
import tracemalloc

import numpy as np
import pytest

import sampledprv as sp
from sampledprv.sampled.histograms.histogram import coarsen
from sampledprv.sampled.certification.inputs import LogDensityPair

#: peak of traced allocations allowed for a refused request (the refused grids need
#: 5 to 80 GiB)
SMALL = 256 * 2**20


@contextlib.contextmanager
def traced_peak():
    """Yield a dict whose ``"peak"`` is the peak traced allocation of the block."""
    out = {}
    tracemalloc.start()
    try:
        yield out
    finally:
        out["peak"] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()


@pytest.mark.parametrize("sigma", [1.0, 0.2])
def test_huge_gaussian_composition_is_refused_before_allocating(sigma):
    # merged in closed form into one Gaussian with mu = 1000 / sigma: its window at
    # eps_error 1e-4 has 7e8 to 4e9 points
    acc = sp.Accountant(eps_error=1e-4, delta_error=1e-13).compose(sp.Gaussian(sigma),
                                                                   count=10**6)
    with traced_peak() as mem, pytest.raises(ValueError, match="max_grid_size"):
        acc.epsilon(1e-5)
    assert mem["peak"] < SMALL


def test_composed_grid_is_predicted_before_discretizing():
    # each law fits (3.6e7 points) but the composition of 1,000 does not
    acc = sp.Accountant(eps_error=1e-5).compose(
        sp.PoissonSubsampled(sp.Gaussian(1.0), 0.01), 1000)
    with traced_peak() as mem, pytest.raises(ValueError, match="max_grid_size"):
        acc.epsilon(1e-5)
    assert mem["peak"] < SMALL


def test_cli_grid_refusal_is_early():
    from sampledprv.cli import main
    err = io.StringIO()
    with traced_peak() as mem, contextlib.redirect_stderr(err), \
            contextlib.redirect_stdout(io.StringIO()):
        rc = main(["epsilon", "--delta", "1e-5", "-m", "subsampled-gaussian sigma=1 q=0.01",
                   "-c", "1000", "--eps-error", "1e-5"])
    assert rc == 2
    assert "grid" in err.getvalue().lower()
    assert mem["peak"] < SMALL


def test_grid_prediction_does_not_refuse_what_fits():
    # a composition just inside the limit still runs (the prediction is not a guess
    # that errs on the side of refusing)
    acc = sp.Accountant(eps_error=0.01).compose(sp.PoissonSubsampled(sp.Gaussian(1.0), 0.01),
                                                1000)
    n = acc.delta(1.0).details["grid_points"]
    tight = sp.Accountant(eps_error=0.01, max_grid_size=int(n * 1.3))
    tight.compose(sp.PoissonSubsampled(sp.Gaussian(1.0), 0.01), 1000)
    iv = tight.delta(1.0)
    assert iv.lower <= iv.upper


@pytest.mark.parametrize("max_grid", [0, -5, 10])
def test_sampled_accountant_rejects_bad_max_grid(max_grid):
    with pytest.raises(ValueError, match="max_grid"):
        sp.SampledAccountant(10000, max_grid=max_grid)


@pytest.mark.parametrize("factor", [2**40, 2**70])
def test_coarsening_by_a_huge_factor_stays_small(factor):
    from sampledprv.sampled.histograms.histogram import LossHistogram
    hist = LossHistogram(np.arange(100, dtype=np.int64), 0, 0, 0, 0, 4950, -1.0, 0.02)
    with traced_peak() as mem:
        c = coarsen(hist, factor)
    assert c.counts.tolist() == [4950]
    assert mem["peak"] < 2**20


@pytest.mark.parametrize("seed", [-1, 1.5, "7"])
def test_sampled_accountant_names_a_bad_seed(seed):
    with pytest.raises(ValueError, match="seed"):
        sp.SampledAccountant(1000, seed=seed)


def _normal_logpdf(mean):
    return lambda w: -0.5 * (np.asarray(w) - mean) ** 2 - 0.5 * np.log(2 * np.pi)


def test_check_rejects_a_sampler_that_does_not_match_logp():
    pair = LogDensityPair(logp=_normal_logpdf(0.0), logq=_normal_logpdf(1.0),
                          sample_p=lambda rng, n: np.full(n, 1e4),
                          sample_q=lambda rng, n: rng.normal(1.0, 1.0, n))
    with pytest.raises(ValueError, match="sample_p does not look like it draws from"):
        pair.check()


def test_check_accepts_matching_samplers():
    pair = LogDensityPair(logp=_normal_logpdf(0.0), logq=_normal_logpdf(1.0),
                          sample_p=lambda rng, n: rng.normal(0.0, 1.0, n),
                          sample_q=lambda rng, n: rng.normal(1.0, 1.0, n))
    report = pair.check()
    assert np.isfinite(report["E_p[ratio]"][0]) and np.isfinite(report["E_p[ratio]"][1])


@pytest.mark.parametrize("values", [["a"], ["1.0"], [None]])
def test_sampler_returning_non_numbers_is_named(values):
    pair = LogDensityPair(logp=_normal_logpdf(0.0), logq=_normal_logpdf(1.0),
                          sample_p=lambda rng, n: np.array(values * n),
                          sample_q=lambda rng, n: rng.normal(1.0, 1.0, n))
    with pytest.raises(ValueError, match="sample_p returned values of dtype"):
        pair.check()


def test_sampled_histogram_size_is_checked_against_max_grid():
    with pytest.raises(ValueError, match="bins=.*max_grid"):
        sp.SampledAccountant(1000, bins=2**30, max_grid=2**20)


def test_seed_method_grid_is_checked_before_sampling():
    acc = sp.SampledAccountant(1000, certify="seed", seed_params={"L": 10.0, "h": 1e-12},
                               progress=False).compose(sp.Gaussian(1.0), 4)
    with traced_peak() as mem, pytest.raises(ValueError, match=r"seed_params\['h'\]"):
        acc.epsilon(1e-3)
    assert mem["peak"] < SMALL


@pytest.mark.parametrize("make, names", [
    (lambda: sp.Gaussian(1e-300), "sigma"),
    (lambda: sp.Gaussian(1e-7), "sigma"),
    (lambda: sp.Gaussian(1.0, sensitivity=1e12), "sigma"),
    (lambda: sp.Laplace(1e-300), "scale"),
    (lambda: sp.PureDP(1e300), "epsilon"),
    (lambda: sp.ApproxDP(1e300, 0.1), "epsilon"),
    (lambda: sp.GeneralizedGaussian(1.5, 1e-300), "scale"),
    (lambda: sp.GeneralizedGaussian(3.0, 1e-5), "scale"),
    (lambda: sp.Accountant().compose(sp.Gaussian(1.0), 10**13).delta(1.0), "composed"),
])
def test_specs_beyond_the_representable_loss_fail_at_construction(make, names):
    with pytest.raises(ValueError, match=names):
        make()


def test_large_losses_inside_the_limit_give_certified_answers():
    # mu = 1400 and eps0 = 1e4 (the Laplace CDF used to overflow to NaN above
    # eps0 = 1418), a pure-DP epsilon of 1e12: delta(1) is 1 to 1e-9
    for spec in (sp.Gaussian(1.0 / 1400), sp.Laplace(1e-4), sp.PureDP(1e12)):
        iv = sp.Accountant().compose(spec).delta(1.0)
        assert 0.999 < iv.lower and iv.upper == 1.0
