"""The weighted numeric error (engine/error_weights.py): an error ``E`` on a piece's
window, propagated through the rest of a composition (convolutions and a randomized
regridding), moves the hockey-stick curve at ``x`` by at most the weighted bound --
checked exactly on small lattices, with the worst-placed error (all of it at the top
of the window) and random signed errors."""

from __future__ import annotations

import numpy as np
import pytest

from sampledprv.engine.curve import LatticePoints, PrivacyCurve
from sampledprv.engine.error_weights import WeightedError, weighted_total
from sampledprv.engine.lattice import LatticePMF
from sampledprv.engine.regrid import regrid


def _bump(rng, size, h):
    z = np.arange(size) - rng.uniform(0.3, 0.7) * size
    p = np.exp(-0.5 * (z / rng.uniform(0.1, 0.3) / size) ** 2) + 1e-3
    return p / p.sum()


def _rest(piece: LatticePMF, others: np.ndarray, factor: int, tail: np.ndarray,
          other_offset: int) -> LatticePMF:
    """``regrid(piece * others, factor) * tail`` (exact direct convolutions; the tail
    on the coarse mesh starting at coarse index 0)."""
    conv = np.convolve(piece.probs, others)
    fine = LatticePMF(conv, piece.offset + other_offset, piece.h, 0.0, 0.0)
    coarse = regrid(fine, factor) if factor > 1 else fine
    out = np.convolve(coarse.probs, tail)
    return LatticePMF(out, coarse.offset, coarse.h, 0.0, 0.0)


def _curve(law: LatticePMF) -> PrivacyCurve:
    return PrivacyCurve(LatticePoints(law.offset, law.h, law.shift, law.probs.size),
                        np.clip(law.probs, 0.0, None), 0.0, eps_min=-1e9)


def _delta_signed(probs: np.ndarray, offset: int, h: float, x: float) -> float:
    """The hockey-stick functional of a signed lattice measure."""
    v = (offset + np.arange(probs.size)) * h
    m = v > x
    return float(np.sum(probs[m] * -np.expm1(x - v[m])))


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("worst", [True, False])
def test_weighted_bound_covers_propagated_errors(seed, worst):
    rng = np.random.default_rng(seed)
    h = float(rng.choice([0.01, 0.05]))
    factor = int(rng.choice([1, 3, 4]))
    size = int(rng.integers(20, 200))
    offset = int(rng.integers(-300, 300))
    base = _bump(rng, size, h)
    e = 1e-10
    err = np.zeros(size)
    if worst:
        # the bound is tight when the piece's mass sits at the bottom of its window and
        # its error at the top
        base = np.full(size, 1e-9)
        base[0] = 1.0
        base /= base.sum()
        err[-1] = e
    else:
        err = rng.normal(size=size)
        err *= e / np.abs(err).sum()
    computed = LatticePMF(base + err, offset, h, 0.0, 0.0)
    exact = LatticePMF(base, offset, h, 0.0, 0.0)
    others = _bump(rng, int(rng.integers(50, 400)), h)
    other_offset = int(rng.integers(-200, 200))
    tail = _bump(rng, int(rng.integers(20, 300)), factor * h)
    tail = np.convolve(tail, tail)                  # a wider rest on the coarse mesh
    c_hat = _rest(computed, others, factor, tail, other_offset)
    c_exact = _rest(exact, others, factor, tail, other_offset)
    assert c_hat.offset == c_exact.offset and c_hat.probs.size == c_exact.probs.size
    diff = c_hat.probs - c_exact.probs
    curve = _curve(c_hat)
    term = WeightedError.of(e, computed)
    xs = (c_hat.offset + np.arange(0, c_hat.probs.size, 7)) * c_hat.h + 0.37 * c_hat.h
    tight = 0.0
    for x in xs:
        effect = abs(_delta_signed(diff, c_hat.offset, c_hat.h, float(x)))
        bound = weighted_total([term], e, e, factor * h, curve.delta, float(x))
        # the exact differences are read from float64 laws of mass about 1: 1e-14 of noise
        assert effect <= bound + 1e-14, (x, effect, bound)
        tight = max(tight, effect / bound)
    if worst:
        assert tight > 0.3             # the bound is not vacuous where it matters


def test_weights_and_floor():
    law = LatticePMF(np.full(11, 1 / 11), 5, 0.1, 0.0, 0.0)
    term = WeightedError.of(2e-9, law)
    assert term.width == pytest.approx(1.0) and term.mass == pytest.approx(1.0)
    curve = lambda y: 1.0 if y < 0 else 1e-6                 # noqa: E731
    # total 3e-9 (1e-9 unweighted elsewhere); at x far right the weight is (1e-6 + B)
    assert weighted_total([term], 3e-9, 3e-9, 0.1, curve, 10.0) == pytest.approx(
        1e-9 + 2e-9 * (1e-6 + 3e-9))
    # reading the curve where the shifted point is in the bulk: weight 1
    assert weighted_total([term], 3e-9, 3e-9, 0.1, curve, 0.5) == pytest.approx(3e-9)
    # a cap below 1 (the rest's mass) bounds the weight too
    capped = WeightedError.of(2e-9, law, cap=0.25)
    assert weighted_total([capped], 1.5e-9, 1.5e-9, 0.1, curve, 0.5) == pytest.approx(1.5e-9)
    assert weighted_total([], 3e-9, 3e-9, 0.1, curve, 10.0) == 3e-9


@pytest.mark.parametrize("delta", [1e-3, 1e-6, 1e-9])
def test_epsilon_ends_agree_with_delta_queries(delta):
    """The ends of ``epsilon(delta)``, found by bisection where the error terms depend on
    the point, are consistent with ``delta(epsilon)`` read there: the upper bound on
    delta at the upper end is at most ``delta``, the lower bound at the lower end at
    least ``delta``; and the weighted terms are below the unweighted ones."""
    import sampledprv as sp

    acc = sp.Accountant(eps_error=0.05, delta_error=1e-12)
    acc.compose(sp.PoissonSubsampled(sp.Gaussian(0.8), q=4e-3), 300_000)
    iv = acc.epsilon(delta)
    assert "multi-level" in iv.method
    assert iv.details["delta_error_upper"] < iv.details["delta_error_upper_unweighted"]
    assert acc.delta(iv.upper).upper <= delta * (1 + 1e-12)
    assert acc.delta(iv.lower).lower >= delta * (1 - 1e-12)
    assert iv.upper - iv.lower <= 2 * 0.05 * 1.01
