"""A tree level in the frequency domain (compose, then regrid) against the two-step path
and against extended-precision references."""

from __future__ import annotations

import numpy as np
import pytest

from sampledprv.engine.compose import compose_lattices
from sampledprv.engine.compose_regrid import compose_regridded, foldable
from sampledprv.engine.fft import next_fast_len
from sampledprv.engine.lattice import LatticePMF
from sampledprv.engine.regrid import regrid


def _random_law(rng, size, offset, p_inf=0.0):
    p = rng.random(size) ** 3
    p *= (1.0 - p_inf) / p.sum()
    return LatticePMF(p, offset, 1e-3, 0.01, p_inf)


def _smooth_law(rng, size, offset, p_inf=0.0):
    """Two Gaussian bumps, one wide and one narrow (the shape of a discretized privacy
    loss: a bulk and a thin tail)."""
    i = np.arange(size)
    p = np.exp(-0.5 * ((i - 0.3 * size) / (0.05 * size)) ** 2) \
        + 1e-3 * np.exp(-0.5 * ((i - 0.8 * size) / (0.1 * size)) ** 2) * rng.random()
    p *= (1.0 - p_inf) / p.sum()
    return LatticePMF(p, offset, 1e-3, 0.01, p_inf)


def _on(law, lo, hi, dtype=np.float64):
    out = np.zeros(hi - lo, dtype=dtype)
    out[law[1] - lo:law[1] - lo + law[0].size] = law[0]
    return out


def _exact_regridded(p: np.ndarray, offset: int, count: int, factor: int):
    """count-fold convolution and randomized regridding in numpy's extended type."""
    pl = p.astype(np.longdouble)
    t = pl.copy()
    for _ in range(count - 1):
        t = np.convolve(t, pl)
    return _regrid_exact(t, count * offset, factor)


def _regrid_exact(t: np.ndarray, start: int, factor: int):
    """Randomized regridding of the law ``t`` (lattice indices from ``start``) by
    ``factor``, in numpy's extended type: the coarse law and its first index."""
    q0, lead = divmod(start, factor)
    cells = -(-(lead + t.size) // factor)
    grid = np.zeros(cells * factor, dtype=np.longdouble)
    grid[lead:lead + t.size] = t
    grid = grid.reshape(cells, factor)
    w = np.arange(factor, dtype=np.longdouble) / factor
    out = np.zeros(cells + 1, dtype=np.longdouble)
    out[:-1] = (grid * (1 - w)).sum(axis=1)
    out[1:] += (grid * w).sum(axis=1)
    return out, q0


@pytest.mark.parametrize("seed", range(12))
def test_same_law_as_composing_then_regridding(seed):
    rng = np.random.default_rng(seed)
    factor = int(rng.choice([2, 3, 4, 5, 6, 7, 9, 12, 27]))
    count = int(rng.integers(1, 70))
    law = _smooth_law(rng, int(rng.integers(50, 20_000)), int(rng.integers(-50_000, 50_000)),
                      p_inf=1e-9)
    two_step = compose_lattices([(law, count)], tail_mass=1e-20)
    expected = regrid(LatticePMF(two_step.probs, two_step.offset, two_step.h,
                                 two_step.shift, two_step.p_inf), factor)
    got, spill_up, spill_down, numeric = compose_regridded(law, count, factor,
                                                           tail_mass=1e-20, max_size=2**26)
    assert got.h == pytest.approx(law.h * factor, rel=1e-15)
    assert got.shift == expected.shift and got.p_inf == expected.p_inf
    assert spill_up == two_step.spill_upper and spill_down == two_step.spill_lower
    lo = min(got.offset, expected.offset)
    hi = max(got.offset + got.probs.size, expected.offset + expected.probs.size)
    a = _on((got.probs, got.offset), lo, hi)
    b = _on((expected.probs, expected.offset), lo, hi)
    assert abs(a.sum() - b.sum()) < 1e-13
    assert np.abs(a - b).sum() <= numeric + two_step.numeric_error


@pytest.mark.parametrize("four_step", [False, True])
@pytest.mark.parametrize("seed", range(16))
def test_round_off_estimates_cover_extended_precision_references(seed, four_step,
                                                                  monkeypatch):
    """Both paths' round-off bounds hold against a long-double convolution, with numpy's
    one-dimensional transforms and with the four-step ones (forced down to 64 points;
    by default they take over from 1.5e6 points)."""
    from sampledprv.engine import fft

    if four_step:
        monkeypatch.setattr(fft, "_FOUR_STEP_MIN", 64)
    rng = np.random.default_rng(100 + seed)
    factor = int(rng.choice([2, 3, 4, 5, 9]))
    count = int(rng.integers(3, 10))
    law = _random_law(rng, int(rng.integers(300, 2000)), int(rng.integers(-500, 500)))
    exact, q0 = _exact_regridded(law.probs, law.offset, count, factor)
    fine = compose_lattices([(law, count)], tail_mass=1e-30)
    two_step = regrid(LatticePMF(fine.probs, fine.offset, fine.h, fine.shift, fine.p_inf),
                      factor)
    folded, _, _, numeric = compose_regridded(law, count, factor, tail_mass=1e-30,
                                              max_size=2**26)
    lo = min(q0, two_step.offset, folded.offset)
    hi = max(q0 + exact.size, two_step.offset + two_step.probs.size,
             folded.offset + folded.probs.size)
    truth = _on((exact, q0), lo, hi, np.longdouble)
    for probs, offset, bound in ((two_step.probs, two_step.offset, fine.numeric_error),
                                 (folded.probs, folded.offset, numeric)):
        err = float(np.abs(_on((probs, offset), lo, hi) - truth).sum())
        assert err <= bound, (err, bound)


def test_foldable_factors_and_refusals():
    assert [f for f in range(1, 30) if foldable(f)] == \
        [2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 14, 15, 16, 18, 20, 21, 24, 25, 27, 28]
    law = LatticePMF(np.array([0.5, 0.5]), 0, 1.0)
    with pytest.raises(ValueError, match="prime factor"):
        compose_regridded(law, 2, 11, tail_mass=1e-12, max_size=2**20)
    with pytest.raises(ValueError, match="count"):
        compose_regridded(law, 0, 3, tail_mass=1e-12, max_size=2**20)


@pytest.mark.parametrize("factor", [2, 3, 4, 5, 6, 7, 9, 27])
@pytest.mark.parametrize("count", [1, 7, 64])
def test_fused_four_step_level_equals_the_unfused_one(factor, count, monkeypatch):
    """The fused four-step pass (engine/four_step_regrid.py, forced down to short
    lengths) gives the unfused path's law within both round-off bounds, and the same
    spectral sums (so the same bound)."""
    from sampledprv.engine import compose_regrid, fft, four_step_regrid

    rng = np.random.default_rng(1000 * factor + count)
    law = _smooth_law(rng, int(rng.integers(2000, 30_000)), int(rng.integers(-5000, 5000)),
                      p_inf=1e-9)
    unfused = compose_regridded(law, count, factor, tail_mass=1e-20, max_size=2**26)
    used = []
    real = four_step_regrid.compose_fold_invert

    def spy(*args):
        used.append(args[3])
        return real(*args)

    monkeypatch.setattr(fft, "_FOUR_STEP_MIN", 64)
    monkeypatch.setattr(compose_regrid, "compose_fold_invert", spy)
    fused = compose_regridded(law, count, factor, tail_mass=1e-20, max_size=2**26)
    if not used:
        pytest.skip("no four-step split of this coarse length")
    assert fused[1:3] == unfused[1:3]
    assert fused[3] == pytest.approx(unfused[3], rel=1e-9)
    got, ref = fused[0], unfused[0]
    assert (got.h, got.shift, got.p_inf) == (ref.h, ref.shift, ref.p_inf)
    lo = min(got.offset, ref.offset)
    hi = max(got.offset + got.probs.size, ref.offset + ref.probs.size)
    diff = np.abs(_on((got.probs, got.offset), lo, hi) - _on((ref.probs, ref.offset), lo, hi))
    assert diff.sum() <= fused[3] + unfused[3]


def test_fused_pass_splits_and_refusals(monkeypatch):
    from sampledprv.engine import fft
    from sampledprv.engine.four_step_regrid import split_for

    assert split_for(100_000, 3) is None                  # short: numpy's transforms
    n1, n2, s, n2c, sc = split_for(8_294_400, 3)
    assert n1 * n2 == 3 * 8_294_400 and n2 == 3 * n2c and n2c % 2 == 0
    assert n2 % s == 0 and n2c % sc == 0
    monkeypatch.setattr(fft, "_FOUR_STEP_MIN", 64)
    assert split_for(2 * 7919, 2) is None                 # prime cofactor: no split


def _sampled_gaussian(var: float, lo: int, hi: int) -> np.ndarray:
    j = np.arange(lo, hi).astype(np.longdouble)
    return np.exp(-j * j / (2 * var)) / np.sqrt(2 * np.pi * var)


def _gaussian_power(width: float, half: int, count: int,
                    window: tuple[int, int] | None = None):
    """A sampled Gaussian law of standard deviation ``width`` points on ``[-half, half]``
    (rounded to doubles) and, in extended precision, the exact ``count``-fold power of
    that double law on ``[-count half, count half]`` (or on the lattice indices
    ``window = (lo, hi)``, ``lo <= j < hi``, inside it): the sampled Gaussian of variance
    ``count width^2`` (exact up to ``exp(-2 pi^2 width^2)``) plus the first-order effect
    of the input's rounding, ``count (rounding * p^(count - 1))``."""
    p = _sampled_gaussian(width ** 2, -half, half + 1)
    top = count * half
    lo, hi = (-top, top + 1) if window is None else window
    exact = _sampled_gaussian(count * width ** 2, lo, hi)
    rounding = (p.astype(np.float64).astype(np.longdouble) - p).astype(np.float64)
    # the (count - 1)-fold power where the window's convolution with ``rounding`` reads it
    r0, r1 = max(lo - half, half - top), min(hi + half, top - half + 1)
    rest = _sampled_gaussian((count - 1) * width ** 2, r0, r1)
    n = next_fast_len(rounding.size + rest.size)
    start = lo - (r0 - half)                       # index lo in the full convolution
    exact += count * np.fft.irfft(np.fft.rfft(rounding, n) * np.fft.rfft(
        rest.astype(np.float64), n), n)[start:start + exact.size].astype(np.longdouble)
    return p.astype(np.float64), exact


@pytest.mark.parametrize("four_step", [False, True])
@pytest.mark.parametrize("width, count, factor", [(403, 100, 4), (1624, 64, 3),
                                                  (2869, 16, 3)])
def test_round_off_estimates_cover_wide_smooth_laws(width, count, factor, four_step,
                                                    monkeypatch):
    """Wide smooth laws, whose spectrum is concentrated in few frequencies: the
    ``count``-fold power of a sampled Gaussian of standard deviation ``width`` points is
    the sampled Gaussian of variance ``count width^2`` up to ``exp(-2 pi^2 width^2)``
    (plus the first-order effect of rounding the input to doubles, added here), so the
    reference is exact.  The first-order estimate alone was exceeded up to 3.3 times on
    such laws; the l2 term of ``compose.roundoff_estimate`` covers them."""
    from sampledprv.engine import fft

    if four_step:
        monkeypatch.setattr(fft, "_FOUR_STEP_MIN", 64)
    half = 12 * width
    p, t = _gaussian_power(width, half, count)
    law = LatticePMF(p, -half, 1e-3, 0.0, 0.0)
    exact, q0 = _regrid_exact(t, -count * half, factor)
    got, _, _, numeric = compose_regridded(law, count, factor, tail_mass=1e-30,
                                           max_size=2**27)
    lo, hi = min(q0, got.offset), max(q0 + exact.size, got.offset + got.probs.size)
    err = float(np.abs(_on((got.probs, got.offset), lo, hi)
                       - _on((exact, q0), lo, hi, np.longdouble)).sum())
    assert err <= numeric, (err, numeric)


@pytest.mark.parametrize("width, count", [(3, 10_000), (20, 1000), (100, 10_000)])
def test_single_level_round_off_covers_high_powers(width, count):
    """``compose_lattices`` (one level, ``count`` products) against the closed-form power
    of a sampled Gaussian: the first-order estimate alone was exceeded 1.22 times at
    ``(100, 10_000)``; the realised error grows like ``count eps ||Y||_2``."""
    half = 12 * width + 1
    p = _sampled_gaussian(width ** 2, -half, half + 1).astype(np.float64)
    law = LatticePMF(p, -half, 1e-3, 0.0, 0.0)
    got = compose_lattices([(law, count)], tail_mass=1e-40, max_size=2**27)
    lo, hi = got.offset, got.offset + got.probs.size
    # the reference on the returned window only (the comparison reads nothing else;
    # the full power has count * (2 half + 1) points: 24 million at (100, 10_000))
    _, exact = _gaussian_power(width, half, count, window=(lo, hi))
    err = float(np.abs(got.probs.astype(np.longdouble) - exact).sum())
    assert err <= got.numeric_error, (err, got.numeric_error)


@pytest.mark.parametrize("n1, n2c, factor", [(16, 5000, 3), (1024, 8100, 3), (64, 3000, 5),
                                             (1000, 2000, 2)])
def test_fused_fold_weights_are_accurate(n1, n2c, factor):
    """The fused pass folds every stored coarse frequency ``k < N' - n1/2`` (the unfused
    one only ``k <= N'/2``): as ``theta -> pi/f`` the last alias's weight is a ratio of
    two vanishing sines, which the angle-addition tables lose to cancellation (5e-12
    absolute) unless taken from the reflected angle.  Against extended precision."""
    from sampledprv.engine import four_step_regrid as fr

    h1, n = n1 // 2 + 1, n1 * n2c * factor
    tables = fr._fold_tables(h1, n1, n2c, n, factor)
    k = (np.arange(h1)[:, None] + n1 * np.arange(n2c)[None, :]).astype(np.longdouble)
    pi = np.longdouble("3.14159265358979323846264338327950288")
    numerator = np.sin(pi * k / (n1 * n2c)) ** 2          # the same for every alias j
    for j in range(factor):
        block = np.zeros((h1, n2c * factor), dtype=np.complex128)
        block[:, j * n2c:(j + 1) * n2c] = 1.0
        out = np.empty((h1, n2c), dtype=np.complex128)
        fr._fold_rows(block, 0, factor, tables, out)
        with np.errstate(divide="ignore", invalid="ignore"):
            ref = numerator / (factor ** 2 * np.sin(pi * (k + j * n1 * n2c) / n) ** 2)
        ref[0, 0] = 1.0 if j == 0 else 0.0
        assert float(np.abs(out.real - ref).max()) < 1e-14
        assert not out.imag.any()
