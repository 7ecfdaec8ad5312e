"""Unit tests of the engine pieces: curves, regridding, composition bounds."""

from __future__ import annotations

import math

import numpy as np
import pytest

import sampledprv as sp
from sampledprv.engine.compose import compose_lattices
from sampledprv.engine.curve import PrivacyCurve
from sampledprv.engine.evolving import split_count
from sampledprv.engine.lattice import LatticePMF
from sampledprv.engine.regrid import regrid


def brute_delta(v, p, p_inf, eps):
    m = v > eps
    return p_inf + float(np.sum(p[m] * -np.expm1(eps - v[m])))


@pytest.mark.parametrize("shift", [0.0, 800.0])
def test_privacy_curve_inverts_exactly(shift):
    rng = np.random.default_rng(3)
    v = np.sort(rng.normal(2, 3, 2000)) + shift
    p = rng.random(2000)
    p /= p.sum() * 1.02
    curve = PrivacyCurve(v, p, 0.001)
    for d in [0.0011, 0.01, 0.2, 0.6]:
        e = curve.epsilon(d)
        assert brute_delta(v, p, 0.001, e) == pytest.approx(d, rel=1e-9, abs=1e-15)
        assert curve.delta(e) == pytest.approx(d, rel=1e-9, abs=1e-15)
    assert curve.epsilon(0.0005) == np.inf          # below the atom at +inf


@pytest.mark.parametrize("offset,factor", [(-37, 7), (0, 2), (5, 16), (1001, 3)])
def test_regrid_preserves_mass_and_mean(offset, factor):
    rng = np.random.default_rng(offset + 100)
    p = rng.random(500)
    p /= p.sum()
    fine = LatticePMF(p, offset, 0.01, 0.003, 0.01)
    coarse = regrid(fine, factor)
    assert coarse.h == pytest.approx(0.01 * factor)
    assert coarse.probs.sum() == pytest.approx(p.sum(), abs=1e-14)
    assert np.dot(coarse.values, coarse.probs) == pytest.approx(np.dot(fine.values, p), abs=1e-12)
    assert coarse.p_inf == fine.p_inf


def test_chernoff_spill_bounds_hold():
    """The window's spill bounds dominate the exact mass outside it."""
    p = np.exp(-0.5 * ((np.arange(201) - 100) / 20.0) ** 2)
    p /= p.sum()
    pmf = LatticePMF(p, -100, 0.05, 0.0, 0.0)
    c = compose_lattices([(pmf, 30)], tail_mass=1e-6)
    # exact linear convolution
    full = p.copy()
    for _ in range(29):
        full = np.convolve(full, p)
    idx = np.arange(full.size) - 3000
    above = full[idx > c.offset + c.probs.size - 1].sum()
    below = full[idx < c.offset].sum()
    assert above <= c.spill_upper + 1e-18 and below <= c.spill_lower + 1e-18
    assert c.spill_upper <= 1e-6 and c.spill_lower <= 1e-6


def test_split_count_covers_count():
    for count in [2048, 5000, 10**5, 10**6 + 7]:
        s = split_count(count)
        assert s.inner * s.copies + s.rest == count and 0 <= s.rest < s.copies


def test_multi_level_agrees_with_single_level(monkeypatch):
    """The same subsampled composition through the multi-level tree (with the core/tail
    split) and on one mesh: overlapping intervals, close estimates."""
    mech = sp.PoissonSubsampled(sp.Gaussian(1.0), 0.02)
    import sampledprv.analytic.build as A   # the builder (analytic/build.py)
    one = sp.Accountant(eps_error=0.02).compose(mech, 4000).epsilon(1e-6)
    assert "multi-level" not in one.method
    monkeypatch.setattr(A, "_MULTI_LEVEL_COUNT", 1000)
    multi = sp.Accountant(eps_error=0.02).compose(mech, 4000).epsilon(1e-6)
    assert "multi-level" in multi.method
    assert multi.details["mesh_coarse"] > multi.details["mesh_fine"]
    assert multi.lower <= one.upper and one.lower <= multi.upper
    assert abs(multi.estimate - one.estimate) < 0.02


def test_next_fast_len_is_the_smallest_5_smooth_length():
    """The engine's FFT lengths are scipy's real-transform lengths (2^a 3^b 5^c)."""
    import scipy.fft

    from sampledprv.engine.fft import next_fast_len

    rng = np.random.default_rng(5)
    targets = list(range(1, 3000)) + [int(t) for t in rng.integers(3000, 10**9, 3000)]
    for t in targets:
        n = next_fast_len(t)
        assert n == scipy.fft.next_fast_len(t, real=True), t
    with pytest.raises(ValueError, match="target"):
        next_fast_len(0)


def test_engine_ffts_round_trip():
    from sampledprv.engine.fft import irfft, rfft

    x = np.random.default_rng(1).random(1000)
    spec = rfft(x, 2250)
    assert spec.shape == (1126,)
    back = irfft(spec, 2250)
    assert np.allclose(back[:1000], x, atol=1e-14) and np.allclose(back[1000:], 0, atol=1e-14)


@pytest.mark.parametrize("n", [64, 96, 200, 1000, 4096, 6000, 30000, 102400, 2**21 + 2**19])
def test_four_step_ffts_equal_numpy(monkeypatch, n):
    """The four-step transforms (forced down to 64 points here; by default from 1.5e6 points)
    agree with numpy's one-dimensional ones within a few ulps of the spectrum's scale,
    for padded, exact and truncated inputs, and keep the spectrum's shape and the
    ``irfft`` conventions (imaginary parts of ``X_0`` and ``X_(n/2)`` ignored)."""
    from sampledprv.engine import fft

    monkeypatch.setattr(fft, "_FOUR_STEP_MIN", 64)
    split = fft._four_step_split(n)
    assert split is not None and split[0] * split[1] == n
    rng = np.random.default_rng(n)
    for size in (7, n // 3, n, n + 5):
        x = rng.random(size) ** 3
        ours, ref = fft.rfft(x, n), np.fft.rfft(x, n)
        assert ours.shape == ref.shape
        assert np.abs(ours - ref).max() <= 2e-15 * x.sum()
        spec = ref + 1j * rng.normal(size=ref.size) * 1e-3   # X_0, X_(n/2) not real
        back, back_ref = fft.irfft(spec, n), np.fft.irfft(spec, n)
        assert back.shape == (n,)
        assert np.abs(back - back_ref).max() <= 2e-15 * np.abs(spec).sum() / n * 4
    # lengths without an even split fall back to numpy (identical results)
    odd = 3 * 5**4
    assert fft._four_step_split(odd) is None
    x = rng.random(100)
    assert np.array_equal(fft.rfft(x, odd), np.fft.rfft(x, odd))


def test_four_step_twiddles_are_correctly_rounded():
    from sampledprv.engine.fft import _unit_roots

    import mpmath

    n = 24_883_200
    m = np.arange(0, n, 99_991)
    w = _unit_roots(m, n, -1.0)
    with mpmath.workdps(40):
        ref = np.array([complex(mpmath.expjpi(-2 * mpmath.mpf(int(j)) / n)) for j in m])
    # each part rounded once from the extended-precision value: at most about an ulp
    assert np.abs(w - ref).max() <= 2.3e-16


@pytest.mark.parametrize("seed", range(6))
def test_lattice_points_give_the_same_curve_as_stored_points(seed):
    """PrivacyCurve over LatticePoints (computed on demand) is bit-identical to the curve
    over the materialized points."""
    from sampledprv.engine.curve import LatticePoints

    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 200_000))
    offset, h = int(rng.integers(-10**6, 10**6)), float(rng.choice([1e-4, 3e-3, 0.7, 5.0]))
    shift = float(rng.normal())
    p = rng.random(n)
    p /= 1.1 * p.sum()
    points = LatticePoints(offset, h, shift, n)
    stored = (offset + np.arange(n)) * h + shift
    assert np.array_equal(points.array(), stored) and points[-1] == stored[-1]
    assert np.array_equal(points[5:9].array(), stored[5:9])
    eps_min = float(stored[n // 3])
    a = PrivacyCurve(stored, p, 1e-9, eps_min=eps_min)
    b = PrivacyCurve(points, p, 1e-9, eps_min=eps_min)
    m = n - n // 3 - 1
    for j in {0, 1, m // 2, m - 1, m, *map(int, rng.integers(0, m + 1, 20))}:
        assert a._tails.at(j) == b._tails.at(j)
        tail_p, log_q = b._tails.at(j)
        kept = p[np.searchsorted(stored, eps_min, side="right"):]
        exact_p = math.fsum([1e-9, *kept[j:]])
        assert abs(tail_p - exact_p) <= 1e-13 * exact_p
        if j < kept.size:
            s_kept = stored[stored.size - kept.size:]
            top = float(s_kept[j])
            exact_q = math.fsum(kept[j:] * np.exp(top - s_kept[j:]))   # e^{top} sum p e^{-s}
            # log_q is exact to a few ulps of its own size (PrivacyCurve.rounding_bound)
            tol = 1e-13 + 8 * np.finfo(float).eps * (abs(log_q) + abs(top))
            assert abs(math.exp(log_q + top) - exact_q) <= tol * exact_q
    for eps in [eps_min, float(stored[-1]), float(stored[-1]) + 1.0,
                *map(float, rng.choice(stored[n // 3:], 5))]:
        assert a.delta(eps) == b.delta(eps) and a.rounding_bound(eps) == b.rounding_bound(eps)
        assert points.searchsorted(eps) == np.searchsorted(stored, eps, side="right")
        assert points.searchsorted(eps, "left") == np.searchsorted(stored, eps, side="left")
    for delta in [1e-12, 1e-5, 0.3]:
        assert a.epsilon(delta) == b.epsilon(delta)


@pytest.mark.parametrize("seed", range(6))
def test_layout_composition_equals_natural_order(monkeypatch, seed):
    """``compose_lattices`` keeps long spectra in the four-step layout (products, powers,
    norms, inverse); forced down to short lengths it gives the natural-order path's law
    within both round-off bounds, and the same bound."""
    from sampledprv.engine import compose, fft

    rng = np.random.default_rng(seed)
    laws = []
    for offset, count in zip(rng.integers(-500, 500, 2), rng.integers(1, 40, 2)):
        p = rng.random(int(rng.integers(50, 3000))) ** 2
        laws.append((LatticePMF(p / p.sum(), int(offset), 1e-3), int(count)))
    natural = compose_lattices(laws, tail_mass=1e-25)
    used = []
    real = compose.rfft_layout
    monkeypatch.setattr(fft, "_FOUR_STEP_MIN", 64)
    monkeypatch.setattr(compose, "rfft_layout", lambda *a: used.append(a[1]) or real(*a))
    layout = compose_lattices(laws, tail_mass=1e-25)
    if not used:
        pytest.skip("no four-step split of this length")
    assert len(used) == 2
    assert (layout.offset, layout.probs.size) == (natural.offset, natural.probs.size)
    assert layout.numeric_error == pytest.approx(natural.numeric_error, rel=1e-9)
    assert np.abs(layout.probs - natural.probs).sum() <= \
        layout.numeric_error + natural.numeric_error


@pytest.mark.parametrize("seed", range(4))
def test_lazy_tail_sums_do_not_depend_on_the_query_order(seed):
    """The row carries are summed from the top down only as far as queries need: a
    small-delta query leaves the bulk unsummed, and every number equals the one of a
    curve whose sums were all finished first (same operations, same order)."""
    from sampledprv.engine import curve as cv

    rng = np.random.default_rng(seed)
    n = int(rng.integers(3 * cv._PASS, 6 * cv._PASS))
    points = cv.LatticePoints(int(rng.integers(-10**5, 10**5)), 1e-3, float(rng.normal()), n)
    p = np.exp(-0.5 * ((np.arange(n) - n / 2) / (n / 10)) ** 2)
    p /= 1.01 * p.sum()
    lazy, eager = PrivacyCurve(points, p, 1e-12), PrivacyCurve(points, p, 1e-12)
    eager._tails.at(0)                                  # every pass done
    assert eager._tails._done_row == 0
    e_small = lazy.epsilon(1e-6)
    assert lazy._tails._done_row > 0                    # the bulk was never summed
    assert e_small == eager.epsilon(1e-6)
    for j in map(int, rng.permutation(np.r_[rng.integers(0, n, 30), 0, n - 1])):
        assert lazy._tails.at(j) == eager._tails.at(j)
    for d in [1e-11, 1e-3, 0.2, 0.9, 1.0]:
        assert lazy.epsilon(d) == eager.epsilon(d)


@pytest.mark.parametrize("seed", range(6))
def test_galloping_epsilon_equals_bisection(seed):
    """``epsilon(delta)`` (galloping down from the top, then bisecting) returns the
    point of plain bisection over the whole support, including the answers 0 and
    ``inf`` and curves with ``eps_min`` inside the support."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 5000))
    v = np.sort(rng.normal(rng.uniform(-2, 5), 3, n))
    p = rng.random(n) ** 3
    p /= p.sum() * 1.05
    p_inf = float(rng.choice([0.0, 1e-9, 1e-3]))
    eps_min = float(rng.choice([-1.0, float(v[n // 2])]))
    curve = PrivacyCurve(v, p, p_inf, eps_min=eps_min)

    def bisect(delta):
        if delta < p_inf:
            return np.inf
        e0 = max(0.0, eps_min)
        if curve.delta(e0) <= delta:
            return 0.0
        kept = curve.values
        lo, hi = 0, kept.size
        while lo < hi:
            mid = (lo + hi) // 2
            if curve._delta_at(mid) <= delta:
                hi = mid
            else:
                lo = mid + 1
        if lo >= kept.size:
            return float(kept[-1])
        tail_p, log_q = curve._tails.at(lo)
        rem = tail_p - delta
        return float(kept[lo]) if rem <= 0 else max(0.0, float(np.log(rem) - log_q))

    for d in [1e-12, 1e-9, 1e-6, 1e-3, 0.01, 0.1, 0.5, 0.99, 1.0,
              *map(float, rng.random(10))]:
        assert curve.epsilon(d) == bisect(d), d
