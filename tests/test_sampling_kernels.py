"""Fused loss-histogram kernels: behaviour, reproducibility, statistics (never timing)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from numba import njit
from scipy import stats

import sampledprv as sp
from sampledprv.sampled.draws import rng
from sampledprv.sampled.draws._mechloss import builtin_source, kind_fill
from sampledprv.sampled.histograms.histogram import LossHistogram
from sampledprv.sampled.histograms.kernels import BLOCK, NUM_STREAMS, loss_histogram


def _edges(hist: LossHistogram) -> np.ndarray:
    return hist.lo + np.arange(hist.bins + 1) * hist.h


def _chi2_pvalue(observed: np.ndarray, probs: np.ndarray, min_expected: float = 20.0) -> float:
    """Chi-square p-value, pooling consecutive cells until each expects >= min_expected."""
    n = observed.sum()
    obs, exp = [], []
    o_acc = e_acc = 0.0
    for o, p in zip(observed, probs):
        o_acc += o
        e_acc += n * p
        if e_acc >= min_expected:
            obs.append(o_acc)
            exp.append(e_acc)
            o_acc = e_acc = 0.0
    obs[-1] += o_acc
    exp[-1] += e_acc
    obs, exp = np.array(obs), np.array(exp)
    exp *= obs.sum() / exp.sum()
    return float(stats.chisquare(obs, exp).pvalue)


def _all_cells(hist: LossHistogram) -> np.ndarray:
    return np.concatenate([[hist.below + hist.neg_inf], hist.counts, [hist.above + hist.pos_inf]])


def _cell_probs(cdf, hist: LossHistogram) -> np.ndarray:
    c = cdf(_edges(hist))
    return np.concatenate([[c[0]], np.diff(c), [1.0 - c[-1]]])


# ------------------------------------------------------------------ reproducibility
@pytest.mark.parametrize("mech", [
    sp.GeneralizedGaussian(beta=1.5, scale=2.0),
    sp.PoissonSubsampled(sp.Gaussian(sigma=0.8), q=0.3),
])
def test_same_seed_identical_counts_across_chunks_and_threads(mech):
    n = 3 * NUM_STREAMS * BLOCK + 12345
    kw = dict(direction="remove", n=n, lo=-3.0, h=0.01, bins=600, seed=2024)
    ref = loss_histogram(mech, chunk_size=1, n_threads=1, progress=False, **kw)
    for chunk, thr in [(1 << 20, 2), (70_000, 1), (10**9, 2), (5000, 2)]:
        other = loss_histogram(mech, chunk_size=chunk, n_threads=thr, progress=False, **kw)
        assert np.array_equal(ref.counts, other.counts)
        assert (ref.below, ref.above, ref.pos_inf, ref.neg_inf) == (
            other.below, other.above, other.pos_inf, other.neg_inf)
    diff = loss_histogram(mech, chunk_size=chunk, n_threads=1, progress=False,
                          **{**kw, "seed": 2025})
    assert not np.array_equal(ref.counts, diff.counts)


def test_counts_add_up_and_nothing_dropped():
    h = loss_histogram(sp.Gaussian(sigma=0.5), direction="remove", n=100_003, lo=-1.0,
                       h=0.05, bins=40, seed=1, progress=False)
    assert h.n == 100_003
    assert h.counts.sum() + h.below + h.above + h.pos_inf + h.neg_inf == h.n
    assert h.below > 0 and h.above > 0
    assert h.counts.dtype == np.int64 and h.counts.shape == (40,)


def test_merge_histograms():
    kw = dict(direction="add", n=50_000, lo=-2.0, h=0.1, bins=40, progress=False)
    a = loss_histogram(sp.Laplace(scale=1.0), seed=1, **kw)
    b = loss_histogram(sp.Laplace(scale=1.0), seed=2, **kw)
    c = a + b
    assert c.n == 100_000 and np.array_equal(c.counts, a.counts + b.counts)
    other = loss_histogram(sp.Laplace(scale=1.0), seed=3, **{**kw, "h": 0.2, "bins": 20})
    with pytest.raises(ValueError, match="different windows"):
        _ = a + other


def test_zero_samples_and_bad_arguments():
    h = loss_histogram(sp.Gaussian(1.0), direction="remove", n=0, lo=0.0, h=1.0, bins=3,
                       seed=0, progress=False)
    assert h.n == 0 and h.counts.sum() == 0
    kw = dict(n=10, lo=0.0, h=1.0, bins=3, seed=0)
    with pytest.raises(ValueError, match="direction"):
        loss_histogram(sp.Gaussian(1.0), direction="both", **kw)
    with pytest.raises(ValueError, match="h"):
        loss_histogram(sp.Gaussian(1.0), direction="add", **{**kw, "h": 0.0})
    with pytest.raises(ValueError, match="bins"):
        loss_histogram(sp.Gaussian(1.0), direction="add", **{**kw, "bins": 0})
    with pytest.raises(TypeError, match="loss_sampler\\(direction\\)"):
        loss_histogram(object(), direction="add", **kw)


# ------------------------------------------------------------------ bin edges and atoms
def test_atoms_on_bin_edges_follow_float_edges():
    # PureDP(eps): atoms at +-eps; put them exactly on the float edges lo + j*h
    eps, h = 0.3, 0.1
    hist = loss_histogram(sp.PureDP(eps), direction="remove", n=20_000, lo=-1.0, h=h,
                          bins=20, seed=5, progress=False)
    edges = _edges(hist)
    for atom in (eps, -eps):
        j = np.searchsorted(edges, atom, side="right") - 1   # edges[j] <= atom < edges[j+1]
        assert hist.counts[j] > 0
    assert hist.counts.sum() == hist.n
    p = math.exp(eps) / (1 + math.exp(eps))
    k = hist.counts[np.searchsorted(edges, eps, side="right") - 1]
    assert stats.binomtest(int(k), hist.n, p).pvalue > 1e-4


def test_approx_dp_and_rr_atoms():
    n = 200_000
    h = loss_histogram(sp.ApproxDP(1.0, 0.05), direction="add", n=n, lo=-2.0, h=0.25,
                       bins=16, seed=9, progress=False)
    assert stats.binomtest(h.pos_inf, n, 0.05).pvalue > 1e-4
    assert h.neg_inf == 0
    rr = loss_histogram(sp.RandomizedResponse(1.0), direction="remove", n=1000, lo=-1.0,
                        h=0.5, bins=4, seed=0, progress=False)
    assert rr.pos_inf == 1000
    # subsampled approx DP, remove: -inf under Q0 becomes log(1-q), +inf stays
    q = 0.5
    sub = loss_histogram(sp.PoissonSubsampled(sp.ApproxDP(1.0, 0.1), q), direction="remove",
                         n=n, lo=-3.0, h=0.01, bins=600, seed=1, progress=False)
    assert stats.binomtest(sub.pos_inf, n, q * 0.1).pvalue > 1e-4
    j = int(np.floor((math.log(1 - q) + 3.0) / 0.01))
    assert stats.binomtest(int(sub.counts[j]), n, (1 - q) * 0.1).pvalue > 1e-4


# ------------------------------------------------------------------ distributions
@pytest.mark.parametrize("direction", ["remove", "add"])
@pytest.mark.parametrize("sigma,sens", [(1.0, 1.0), (0.5, 2.0)])
def test_gaussian_loss_matches_analytic_cdf(direction, sigma, sens):
    mu = sens / sigma
    hist = loss_histogram(sp.Gaussian(sigma, sens), direction=direction, n=400_000,
                          lo=mu * mu / 2 - 4 * mu, h=mu / 25, bins=200, seed=11,
                          progress=False)
    law = stats.norm(mu * mu / 2, mu)
    assert _chi2_pvalue(_all_cells(hist), _cell_probs(law.cdf, hist)) > 1e-3


@pytest.mark.parametrize("direction", ["remove", "add"])
@pytest.mark.parametrize("beta", [1.0, 1.5, 1.37, 2.0, 3.0, 4.3])
def test_gg_loss_matches_exact_cdf(direction, beta):
    s, dsens = 1.3, 0.9
    mech = sp.GeneralizedGaussian(beta=beta, scale=s, sensitivity=dsens)
    hist = loss_histogram(mech, direction=direction, n=300_000, lo=-3.0, h=0.03, bins=200,
                          seed=3, progress=False)
    # exact CDF: the loss (|x-D|^b - |x|^b)/s^b is decreasing in x, x ~ gennorm under P0
    x = stats.gennorm(beta, scale=s)
    grid = np.linspace(-40 * s, 40 * s, 400_001)
    loss = (np.abs(grid - dsens) ** beta - np.abs(grid) ** beta) / s ** beta
    pdf = x.pdf(grid)
    w = pdf / pdf.sum()
    def cdf(t):
        order = np.argsort(loss)
        cum = np.concatenate([[0.0], np.cumsum(w[order])])
        return cum[np.searchsorted(loss[order], t, side="left")]
    assert _chi2_pvalue(_all_cells(hist), _cell_probs(cdf, hist)) > 1e-3


@pytest.mark.parametrize("base", [sp.Gaussian(1.0), sp.Laplace(1.0),
                                  sp.GeneralizedGaussian(1.5, 1.0)])
def test_subsampled_losses_match_mixture(base):
    q, n = 0.2, 300_000
    mech = sp.PoissonSubsampled(base, q)
    gen = np.random.default_rng(0)
    if isinstance(base, sp.Gaussian):
        draw = lambda size: gen.normal(0, 1, size)
        loss0 = lambda x: 0.5 - x
    elif isinstance(base, sp.Laplace):
        draw = lambda size: gen.laplace(0, 1, size)
        loss0 = lambda x: np.abs(x - 1) - np.abs(x)
    else:
        draw = lambda size: stats.gennorm(1.5).rvs(size, random_state=gen)
        loss0 = lambda x: np.abs(x - 1) ** 1.5 - np.abs(x) ** 1.5
    for direction in ("remove", "add"):
        hist = loss_histogram(mech, direction=direction, n=n, lo=-0.6, h=0.01, bins=150,
                              seed=4, progress=False)
        m = 2_000_000
        if direction == "remove":
            x = draw(m) + np.where(gen.random(m) < q, 0.0, 1.0)
            ref = np.log1p(q * np.expm1(loss0(x)))
        else:
            ref = -np.log1p(q * np.expm1(loss0(draw(m) + 1.0)))
        edges = _edges(hist)
        probs = np.histogram(ref, bins=np.concatenate([[-np.inf], edges, [np.inf]]))[0] / m
        # two-sample chi-square: the reference is 7x larger, widen by its own noise
        obs = _all_cells(hist).astype(float)
        exp = probs * n
        keep = exp > 30
        chi = np.sum((obs[keep] - exp[keep]) ** 2 / (exp[keep] * (1 + n / m)))
        assert stats.chi2.sf(chi, keep.sum() - 1) > 1e-3


# ------------------------------------------------------------------ generic sources
@njit
def _shifted_normal_fill(state, out):  # pragma: no cover - numba
    for i in range(out.shape[0]):
        out[i] = 0.125 + 0.5 * rng.normal(state)


@njit
def _nan_fill(state, params, out):  # pragma: no cover - numba
    for i in range(out.shape[0]):
        u = rng.uniform(state)
        out[i] = math.nan if u < params[0] else u


class _Src:
    def __init__(self, sampler):
        self.sampler = sampler

    def loss_sampler(self, direction):
        return self.sampler


def test_generic_jitted_source_two_arg_and_reproducible():
    src = _Src(_shifted_normal_fill)
    kw = dict(direction="remove", n=200_000, lo=-2.0, h=0.02, bins=200, seed=8,
              progress=False)
    a = loss_histogram(src, n_threads=1, **kw)
    b = loss_histogram(src, n_threads=2, chunk_size=3000, **kw)
    assert np.array_equal(a.counts, b.counts)
    law = stats.norm(0.125, 0.5)
    assert _chi2_pvalue(_all_cells(a), _cell_probs(law.cdf, a)) > 1e-3


def test_generic_nan_raises():
    src = _Src((_nan_fill, np.array([1e-4])))
    with pytest.raises(ValueError, match="NaN"):
        loss_histogram(src, direction="add", n=100_000, lo=0.0, h=0.1, bins=10, seed=0,
                       progress=False)


def test_python_fallback_reproducible_and_checked():
    def sample(gen, size):
        return gen.normal(0.5, 1.0, size)
    src = _Src(sample)
    kw = dict(direction="remove", n=150_000, lo=-4.0, h=0.05, bins=180, seed=3,
              progress=False)
    a = loss_histogram(src, **kw)
    b = loss_histogram(src, chunk_size=777, **kw)
    assert np.array_equal(a.counts, b.counts) and a.n == 150_000
    law = stats.norm(0.5, 1.0)
    assert _chi2_pvalue(_all_cells(a), _cell_probs(law.cdf, a)) > 1e-3

    with pytest.raises(ValueError, match="shape"):
        loss_histogram(_Src(lambda g, size: np.zeros(size + 1)), **kw)

    def nan_sampler(gen, size):
        y = gen.normal(size=size)
        y[size // 2] = np.nan
        return y
    with pytest.raises(ValueError, match="NaN at draw"):
        loss_histogram(_Src(nan_sampler), **kw)


def test_progress_bar_runs(capsys):
    loss_histogram(sp.Gaussian(1.0), direction="remove", n=10_000, lo=0.0, h=0.1, bins=5,
                   seed=0, progress=True)
    assert "draw" in capsys.readouterr().err


_GG_FILL = kind_fill("gg")


@njit
def _builtin_wrapper(state, params, out):  # pragma: no cover - numba
    _GG_FILL(state, params, out)


def test_user_kernel_matches_builtin_kernel():
    # the cached built-in kernel and the per-process kernel of user fills share a body
    mech = sp.PoissonSubsampled(sp.GeneralizedGaussian(beta=1.37, scale=1.5), q=0.4)
    kind, prm = builtin_source(mech, "add")
    assert kind == "gg"
    kw = dict(direction="add", n=300_001, lo=-2.0, h=0.01, bins=300, seed=77, progress=False)
    a = loss_histogram(mech, **kw)
    b = loss_histogram(_Src((_builtin_wrapper, prm)), **kw)
    assert np.array_equal(a.counts, b.counts)
    assert (a.below, a.above, a.pos_inf, a.neg_inf) == (b.below, b.above, b.pos_inf, b.neg_inf)


def test_window_too_fine_for_float_edges():
    with pytest.raises(ValueError, match="too small"):
        loss_histogram(sp.Gaussian(1.0), direction="add", n=10, lo=1e6, h=1e-9, bins=10,
                       seed=0, progress=False)
