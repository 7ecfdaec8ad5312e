"""The GG ziggurat: its tables, its law (through the numpy mirror of the GPU kernel), the
mirror's Philox, and the Triton kernel itself where Triton is installed (interpreter)."""

from __future__ import annotations

import importlib.util
import math
import os
import subprocess
import sys

import numpy as np
import pytest
import scipy.stats as st
from scipy import integrate

from sampledprv.torch.ziggurat import LAYERS, U_BITS, ziggurat_tables
from ziggurat_reference import philox4x32, ziggurat_reference

BETAS = [1.0, 1.5, 2.5, 3.0, 4.0]


@pytest.mark.parametrize("beta", BETAS + [1.2, 8.0, 30.0])
def test_strips_have_equal_areas_and_close_at_the_top(beta):
    t = ziggurat_tables(beta)
    x = t.x
    f = np.exp(-x ** beta)
    assert x[0] > x[1] == t.r and np.all(np.diff(x[1:]) < 0) and x[-1] == 0.0
    areas = x[1:-1] * (f[2:] - f[1:-1])                 # strips 1 .. N-1
    np.testing.assert_allclose(areas, t.v, rtol=1e-11)
    tail, _ = integrate.quad(lambda y: math.exp(-y ** beta), t.r, np.inf, epsabs=0,
                             epsrel=1e-12)
    assert t.r * f[1] + tail == pytest.approx(t.v, rel=1e-10)   # strip 0 with the tail
    assert x[0] * f[1] == pytest.approx(t.v, rel=1e-12)
    assert t.f[-1] == 1.0 and t.k[-1] == 0               # the top strip is all wedge


@pytest.mark.parametrize("beta", BETAS)
def test_fast_path_thresholds_are_exact_in_integers(beta):
    """u < K_i exactly when u x_i 2^-23 < x_{i+1} (float64), for the u next to each K_i."""
    t = ziggurat_tables(beta)
    for i in range(LAYERS):
        for u in (t.k[i] - 1, t.k[i]):
            if 0 <= u < 2 ** U_BITS:
                assert (u < t.k[i]) == (u * t.x[i] * 2.0 ** -U_BITS < t.x[i + 1])
    assert 0.97 < t.fast_fraction < 1.0
    np.testing.assert_array_equal(t.w, (t.x[:-1] * 2.0 ** -U_BITS).astype(np.float32))


def test_tables_refuse_bad_arguments():
    with pytest.raises(ValueError, match="beta must be"):
        ziggurat_tables(0.5)
    with pytest.raises(ValueError, match="layers must be 256"):
        ziggurat_tables(1.5, 128)


def test_philox_known_answers():
    """Random123's Philox4x32-10 known-answer vectors (counter (0,0,0,0), key (0,0)) and
    the words Triton's randint4x gives for seed 123, offsets 0..3 (its interpreter)."""
    w = philox4x32(0, np.array([0]))
    assert [int(a[0]) for a in w] == [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]
    a0, _, _, _ = philox4x32(123, np.arange(4))
    assert a0.dtype == np.uint32 and len(set(a0.tolist())) == 4


@pytest.mark.parametrize("beta", BETAS)
def test_mirror_draws_the_gg_law(beta):
    """KS and a 200-bin chi-square against scipy.stats.gennorm, 5e5 draws; the tail beyond
    r (the tail sampler's cases) has the right mass."""
    n = 500_000
    x = ziggurat_reference(n, beta, seed=1234 + int(10 * beta)).astype(np.float64)
    assert np.isfinite(x).all()
    law = st.gennorm(beta)
    u = law.cdf(x)
    assert st.kstest(u, "uniform").pvalue > 1e-3
    counts = np.bincount(np.minimum((u * 200).astype(int), 199), minlength=200)
    assert st.chisquare(counts).pvalue > 1e-3
    r = ziggurat_tables(beta).r
    p_tail = 2 * law.sf(r)
    k = int((np.abs(x) > r).sum())
    assert st.binomtest(k, n, p_tail).pvalue > 1e-3
    assert abs(x.mean()) < 5 * math.sqrt(law.var() / n)


def test_mirror_tail_beyond_r_follows_the_law():
    """Conditional on |X| > r, |X| - r against the truncated law (Laplace: Exp(1))."""
    x = np.abs(ziggurat_reference(1_500_000, 1.0, seed=7).astype(np.float64))
    r = ziggurat_tables(1.0).r
    tail = x[x > r] - r
    assert tail.size > 5
    assert st.kstest(tail, st.expon.cdf).pvalue > 1e-3


def test_mirror_is_reproducible_and_depends_on_the_seed():
    a = ziggurat_reference(10_000, 1.5, seed=5)
    assert np.array_equal(a, ziggurat_reference(10_000, 1.5, seed=5))
    assert not np.array_equal(a, ziggurat_reference(10_000, 1.5, seed=6))


_TRITON = importlib.util.find_spec("triton") is not None


@pytest.mark.skipif(not _TRITON, reason="Triton is not installed (the CPU torch build has none)")
def test_triton_kernel_equals_the_mirror_bit_for_bit_in_the_interpreter():
    """Triton's interpreter runs the kernel with numpy's float32 arithmetic: it must write
    exactly the mirror's draws, for every finishing scheme (kernels 0, 1, 2, 3) and short
    lists (cap 2 and 4 take the recomputed-words path of kernels 1 and 2, and several
    lists per block in kernel 3; block 32 and 64 give kernel 3 several blocks, the last
    one partly past the end)."""
    code = (
        "import sys, numpy as np, torch\n"
        "from sampledprv.torch.fused_gg import launch_ziggurat\n"
        "from ziggurat_reference import ziggurat_reference\n"
        "for beta, n, q, cap, k, blk in [\n"
        "        (1.5, 3000, 128, 16, 2, 4096), (1.0, 2100, 64, 2, 1, 4096),\n"
        "        (4.0, 2000, 128, 4, 2, 4096), (2.5, 1500, 32, 64, 1, 4096),\n"
        "        (3.0, 2000, 64, 64, 0, 4096), (1.0, 1500, 32, 64, 0, 4096),\n"
        "        (1.5, 3000, 64, 4, 3, 4096), (1.0, 2100, 32, 8, 3, 64),\n"
        "        (4.0, 2500, 16, 2, 3, 32)]:\n"
        "    out = launch_ziggurat(torch.empty(n), beta, torch.tensor([987654321012]),\n"
        "                          q=q, cap=cap, kernels=k, block=blk)\n"
        "    ref = ziggurat_reference(n, beta, 987654321012, q=q)\n"
        "    assert np.array_equal(out.numpy(), ref), (beta, q, cap, k, blk)\n"
        "print('ok')\n")
    env = dict(os.environ, TRITON_INTERPRET="1",
               PYTHONPATH=os.pathsep.join([os.path.dirname(__file__)] + sys.path))
    res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, timeout=600)
    assert res.returncode == 0 and res.stdout.strip().endswith("ok"), res.stderr[-2000:]


@pytest.mark.parametrize("beta", [1.0, 1.5, 4.0])
def test_mirror_wedge_and_tail_decisions_match_float64(beta):
    """The float32 wedge test and tail acceptance decide as the exact (float64) rule does,
    but for points within float32 rounding of the boundary."""
    from ziggurat_reference import F32, _test
    t = ziggurat_tables(beta)
    rng = np.random.default_rng(3)
    m = 200_000
    i = rng.integers(1, LAYERS, m)
    u = rng.integers(0, 2 ** U_BITS, m)
    x = F32(u) * t.w[i]
    wa = rng.integers(0, 2 ** 32, m, dtype=np.uint64).astype(np.uint32)
    wb = rng.integers(0, 2 ** 32, m, dtype=np.uint64).astype(np.uint32)
    c = (F32(t.beta), F32(1.0 / t.beta), F32(t.r ** t.beta), F32(t.beta - 1.0),
         F32(np.log2(t.r)))
    acc, _ = _test(i, x, np.zeros(m, bool), wa, wb, t, c)
    v = (wa >> 8) * 2.0 ** -24
    fx = np.exp(-t.x ** beta)
    exact = fx[i] + v * (fx[i + 1] - fx[i]) < np.exp(-x.astype(np.float64) ** beta)
    assert (acc != exact).mean() < 1e-4
    acc_t, xt = _test(np.zeros(m, int), x, np.ones(m, bool), wa, wb, t, c)
    e = -np.log((wa + 0.5) * 2.0 ** -32)
    xt64 = (t.r ** beta + e) ** (1 / beta)
    np.testing.assert_allclose(xt, xt64, rtol=1e-5)
    exact_t = (wb >> 8) * 2.0 ** -24 < (t.r / xt64) ** (beta - 1)
    assert (acc_t != exact_t).mean() < 1e-4


def test_launch_refuses_bad_arguments():
    torch = pytest.importorskip("torch")
    from sampledprv.torch import fused_gg
    key = torch.tensor([1])
    if not fused_gg._HAVE_TRITON:
        with pytest.raises(ValueError, match="launch_ziggurat needs Triton"):
            fused_gg.launch_ziggurat(torch.empty(8), 1.5, key)
        return
    with pytest.raises(ValueError, match="out must be a contiguous 1-D float32"):
        fused_gg.launch_ziggurat(torch.empty(8, dtype=torch.float64), 1.5, key)
    with pytest.raises(ValueError, match="key must be one int64"):
        fused_gg.launch_ziggurat(torch.empty(8), 1.5, torch.tensor([1, 2]))
    with pytest.raises(ValueError, match="powers of two"):
        fused_gg.launch_ziggurat(torch.empty(8), 1.5, key, q=48)
    with pytest.raises(ValueError, match="powers of two"):
        fused_gg.launch_ziggurat(torch.empty(8), 1.5, key, kernels=3, block=100)
    with pytest.raises(ValueError, match="kernels must be"):
        fused_gg.launch_ziggurat(torch.empty(8), 1.5, key, kernels=4)
    with pytest.raises(ValueError, match="finish_warps must be a power of two"):
        fused_gg.launch_ziggurat(torch.empty(8), 1.5, key, kernels=3, finish_warps=3)
