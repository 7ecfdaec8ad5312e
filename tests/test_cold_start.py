"""Cold start: one kernel calling per-kind fills by address, compile progress, fast
Clopper-Pearson."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from numba import njit
from numba.core.caching import NullCache
from numba.core.errors import TypingError
from scipy import stats

import sampledprv as sp
from sampledprv.sampled.certification.envelopes import _CP_CHUNK, cp_lower, cp_upper
from sampledprv.sampled.draws._mechloss import SAMPLER_KINDS, builtin_source, kind_fill
from sampledprv.sampled.draws.rng import STATE_DTYPE, normal
from sampledprv.sampled.histograms import _compile_notice as notice
from sampledprv.sampled.histograms import kernels
from sampledprv.sampled.histograms._fill_call import call_fill, fill_address
from sampledprv.core.progress import Progress
from sampledprv.sampled.histograms.kernels import loss_histogram

ROOT = Path(__file__).resolve().parents[1]


def test_every_family_names_a_known_sampler_kind():
    specs = [sp.Gaussian(1.0), sp.Laplace(1.0), sp.GeneralizedGaussian(beta=1.5, scale=1.0),
             sp.GeneralizedGaussian(beta=1.0, scale=1.0), sp.RandomizedResponse(p=0.7),
             sp.Binomial(trials=4, p=0.5)]
    kinds = [builtin_source(m, "remove")[0] for m in specs]
    assert kinds == ["gaussian", "laplace", "gg", "laplace", "two_point", "table"]
    assert set(kinds) <= set(SAMPLER_KINDS)


def test_one_kernel_and_one_cached_fill_per_kind():
    # the kernel is one function for every source; each kind's fill is its own
    # dispatcher, cached on disk under its own qualified name
    assert not isinstance(kernels._kernel._cache, NullCache)
    fills = {k: kind_fill(k) for k in ("gaussian", "gg", "table", "gaussian_sym")}
    assert len({id(f) for f in fills.values()}) == len(fills)
    for k, f in fills.items():
        assert not isinstance(f._cache, NullCache), k
    assert fills["gaussian"].py_func.__qualname__ == "_fill_gaussian"
    assert fills["gaussian_sym"].py_func.__qualname__ == "_fill_gaussian_sym"
    assert fills["table"].py_func.__code__ is SAMPLER_KINDS["two_point"].py_func.__code__
    assert fills["gg"].py_func.__qualname__ == "gg_fill"     # the block sampler itself


def test_fill_called_by_address_propagates_errors_and_counts_agree():
    @njit
    def fill(state, params, out):  # pragma: no cover - numba
        for i in range(out.shape[0]):
            out[i] = params[0] * normal(state)
            if out[i] > params[1]:
                raise ValueError("loss above the limit")

    class Src:
        def __init__(self, limit):
            self.limit = limit

        def loss_sampler(self, direction):
            return fill, np.array([1.0, self.limit])

    kw = dict(direction="remove", n=20_000, lo=-6.0, h=0.01, bins=1200, seed=3,
              progress=False)
    ref = loss_histogram(Src(1e9), n_threads=1, **kw)
    for chunk in (5000, 1 << 20):
        other = loss_histogram(Src(1e9), n_threads=2, chunk_size=chunk, **kw)
        assert np.array_equal(other.counts, ref.counts)
    for thr in (1, 2):
        with pytest.raises(ValueError, match="loss above the limit"):
            loss_histogram(Src(2.0), n_threads=thr, **kw)


def test_call_fill_refuses_other_argument_types():
    @njit
    def caller(addr, params, out):  # pragma: no cover - numba
        st = np.zeros(1, dtype=STATE_DTYPE)
        call_fill(addr, st[0], params, out)

    with pytest.raises(TypingError, match="call_fill takes"):
        caller(0, np.zeros(2, dtype=np.float32), np.zeros(4))
    assert fill_address(kind_fill("gaussian")) == fill_address(kind_fill("gaussian")) > 0


def test_thread_pool_is_made_again_after_fork():
    pool = kernels._pool()
    assert kernels._pool() is pool
    kernels._POOL[1] = -1                # as in a forked child: another process id
    fresh = kernels._pool()
    assert fresh is not pool and kernels._POOL[1] == os.getpid()
    pool.shutdown(wait=False)


@pytest.mark.slow
def test_fresh_process_compiles_only_the_kind_it_samples(tmp_path):
    code = textwrap.dedent("""
        import sampledprv as sp
        from sampledprv.sampled import loss_histogram
        from sampledprv.sampled.draws._mechloss import kind_fill
        from sampledprv.sampled.histograms._compile_notice import will_compile
        from sampledprv.sampled.histograms.kernels import _kernel
        g = kind_fill("gaussian")
        print("before", will_compile(g), will_compile(_kernel))
        loss_histogram(sp.Gaussian(1.0), direction="remove", n=5000, lo=-3.0, h=0.01,
                       bins=600, seed=0, n_threads=2, progress=False)
        print("gg compiled", bool(kind_fill("gg").signatures))
    """)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path), PYTHONPATH=str(ROOT),
               NUMBA_NUM_THREADS="2")
    run = [sys.executable, "-c", code]
    first = subprocess.run(run, env=env, capture_output=True, text=True, timeout=900)
    assert first.returncode == 0, first.stderr
    assert "before True True" in first.stdout and "gg compiled False" in first.stdout
    assert "compiling the gaussian sampling kernel" in first.stderr
    second = subprocess.run(run, env=env, capture_output=True, text=True, timeout=900)
    assert second.returncode == 0, second.stderr
    assert "before False False" in second.stdout          # loaded from the disk cache
    assert "compiling" not in second.stderr


class _Uncompiled:
    signatures: list = []


@pytest.fixture
def no_announced(monkeypatch):
    """An empty record of announced dispatchers: it holds ``id``s, and an ``_Uncompiled``
    of another test that was freed may have had the id of this test's one (that test then
    saw nothing announced, a flake of the whole suite)."""
    monkeypatch.setattr(notice, "_announced", set())


def test_compile_notice_line_with_estimate(capsys, monkeypatch, no_announced):
    monkeypatch.setattr(notice, "_busy_factor", lambda: 2.0)
    first, other = _Uncompiled(), _Uncompiled()
    with notice.compiling(first, "the test kernel", "gaussian", progress=False):
        pass
    err = capsys.readouterr().err
    est = 2.0 * notice.COMPILE_CPU_S["gaussian"]
    assert f"compiling the test kernel (first use, about {est:.0f} s" in err
    with notice.compiling(other, "the test kernel", "gaussian", progress=False):
        pass                                   # another dispatcher: announced too
    assert "compiling" in capsys.readouterr().err


def test_compile_notice_bar_when_asked(capsys, no_announced):
    d = _Uncompiled()
    with notice.compiling(d, "the test kernel", "gg", progress=True):
        pass
    assert "compiling the test kernel" in capsys.readouterr().err
    with notice.compiling(d, "the test kernel", "gg", progress=True):
        pass                                   # same dispatcher: once only
    assert capsys.readouterr().err == ""


def test_no_notice_when_already_compiled(capsys):
    class Done:
        signatures = [("float64",)]
    with notice.compiling(Done(), "x", "gg", progress=True):
        pass
    assert capsys.readouterr().err == ""


def test_automatic_progress_is_off_without_a_terminal(capsys):
    bar = Progress(None, 10, "x")           # pytest's stderr is not a terminal
    assert bar.mode is False
    assert Progress(True, 10, "x").bar is not None


def test_clopper_pearson_chunks_are_fixed_slices():
    """The thread pool's chunks are fixed slices of the sorted counts: the bounds are
    those of computing each slice alone, whatever the number of threads."""
    from sampledprv.sampled.certification.envelopes import _quantiles
    n = 10**6
    k = np.concatenate([np.arange(0, 3 * _CP_CHUNK + 17, dtype=np.float64), [n - 1, n]])
    a = 1e-9 / 65539
    up, low = cp_upper(k, n, a), cp_lower(k, n, a)
    m = k < n
    ku = k[m]
    want_up = np.concatenate([_quantiles(True, a, ku[s:s + _CP_CHUNK] + 1.0,
                                         n - ku[s:s + _CP_CHUNK])
                              for s in range(0, ku.size, _CP_CHUNK)])
    assert np.array_equal(up[m], want_up) and np.all(up[~m] == 1.0)
    m = k > 0
    kl = k[m]
    want_low = np.concatenate([_quantiles(False, a, kl[s:s + _CP_CHUNK],
                                          n - kl[s:s + _CP_CHUNK] + 1.0)
                               for s in range(0, kl.size, _CP_CHUNK)])
    assert np.array_equal(low[m], want_low) and np.all(low[~m] == 0.0)


@pytest.mark.parametrize("n", [1000, 10**5, 10**7, 105_261_688])
def test_clopper_pearson_bounds_are_safe_and_tight(n):
    """Most quantiles are found by Halley steps from interpolated anchors.  Each is on the
    safe side: its test's tail at it is at most the level (evaluated with the incomplete
    beta function of that side, which agrees with 30-digit binomial sums to about 1e-11
    of the tail, also at n = 1.05e8, where boost's inverse misses the level by up to 1e-6
    of it); and it is within 1e-10 (relative, plus 2^-51) of boost's inverse incomplete
    beta (scipy's ``betainccinv`` / ``betaincinv``; their difference is the outward
    margin and boost's own error)."""
    from scipy import special
    rng = np.random.default_rng(n)
    k = np.unique(np.concatenate([np.arange(0, 300), rng.integers(0, n, 5000),
                                  n - np.arange(1, 300)])).astype(np.float64)
    k = k[(k >= 0) & (k < n)]
    kl = k[k > 0]
    for a in (1e-9 / 65539, 1e-6, 0.01):
        up = cp_upper(k, n, a)
        assert np.all(special.betaincc(k + 1.0, n - k, up) <= a)
        exact = special.betainccinv(k + 1.0, n - k, a)
        assert np.all(up <= exact * (1.0 + 1e-10) + 2.0 ** -51)
        low = cp_lower(kl, n, a)
        assert np.all(special.betainc(kl, n - kl + 1.0, low) <= a)
        assert np.all(low >= special.betaincinv(kl, n - kl + 1.0, a) * (1.0 - 1e-10) - 2.0 ** -51)


def test_clopper_pearson_tests_have_their_stated_level():
    """Each one-sided test fails with probability ``a`` itself (to the outward margin):
    the upper bound is solved at ``a`` (the inverse complementary incomplete beta), not
    at ``1 - a``, which for the envelopes' levels (``alpha`` over tens of thousands of
    tests) is a double whose distance from 1 is off by up to 1% (here 0.3%, above the
    tolerance)."""
    from scipy import special
    n = 10**6
    k = np.array([0.0, 3.0, 40.0, 1000.0, 2.5e5, n - 100.0])
    a = 1e-9 / 65539
    assert abs((1.0 - (1.0 - a)) / a - 1.0) > 5e-4          # what 1 - a loses
    up, low = cp_upper(k, n, a), cp_lower(k[1:], n, a)
    # P[Bin(n, U) <= k] = a and P[Bin(n, D) >= k] = a
    assert np.allclose(special.betaincc(k + 1.0, n - k, up), a, rtol=1e-6, atol=0.0)
    assert np.allclose(special.betainc(k[1:], n - k[1:] + 1.0, low), a, rtol=1e-6, atol=0.0)


def test_calibrate_progress_bar(capsys):
    res = sp.calibrate(lambda s: sp.Gaussian(s), count=3, epsilon=2.0, delta=1e-5,
                       progress=True)
    err = capsys.readouterr().err
    assert "calibrate" in err and "evaluation" in err
    assert res.interval.upper <= 2.0
    sp.calibrate(lambda s: sp.Gaussian(s), count=3, epsilon=2.0, delta=1e-5)
    assert capsys.readouterr().err == ""          # automatic: no terminal, no bar
    with pytest.raises(ValueError, match="progress"):
        sp.calibrate(lambda s: sp.Gaussian(s), count=3, epsilon=2.0, delta=1e-5,
                     progress="yes")


def test_composition_has_its_own_progress_bar(capsys):
    from sampledprv.engine import LatticePMF, compose_lattices
    steps = []
    pmf = LatticePMF(probs=np.array([0.25, 0.5, 0.25]), offset=-1, h=0.5)
    one = compose_lattices([(pmf, 3), (pmf, 2)], tail_mass=1e-16, on_step=steps.append)
    assert steps == [1, 1, 1]                     # two components and the inverse
    assert np.allclose(one.probs, compose_lattices([(pmf, 5)], tail_mass=1e-16).probs)
    acc = sp.SampledAccountant(n_samples=20_000, progress=True, seed=1)
    iv = acc.compose(sp.Gaussian(2.0), count=3).compose(sp.Laplace(2.0), count=2) \
        .epsilon(delta=1e-3)
    err = capsys.readouterr().err
    assert "composing (FFT)" in err and "transform" in err
    quiet = sp.SampledAccountant(n_samples=20_000, progress=False, seed=1) \
        .compose(sp.Gaussian(2.0), count=3).compose(sp.Laplace(2.0), count=2) \
        .epsilon(delta=1e-3)
    assert capsys.readouterr().err == ""
    assert (iv.lower, iv.upper) == (quiet.lower, quiet.upper)
