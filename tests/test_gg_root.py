"""The Generalized Gaussian's loss inverse: the compiled root finder solves
phi(u) = (|u+a|^beta - |u-a|^beta)/s^beta = y, keeps shapes and edge values, and the
roots shared by the two laws of a subsampled step are the roots computed afresh."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

import sampledprv as sp
from sampledprv.mechanisms.generalized_gaussian import _gg_root, generalized_gaussian_pair
from sampledprv.mechanisms.relations import privacy_loss


def _phi(u: float, beta: float, s: float, a: float) -> mpmath.mpf:
    u, a, s = mpmath.mpf(u), mpmath.mpf(a), mpmath.mpf(s)
    return (abs(u + a) ** beta - abs(u - a) ** beta) / s ** beta


@pytest.mark.parametrize("beta", [1.2, 1.5, 2.5, 3.0, 4.0])
@pytest.mark.parametrize("scale", [0.6, 2.0])
def test_roots_solve_the_equation_to_rounding(beta, scale):
    """The root's residual, in 50-digit arithmetic, is within the rounding of phi at
    the root (a few ulps of its two terms) plus the root's own tolerance."""
    mpmath.mp.dps = 50
    a = 0.5
    y = np.concatenate([np.geomspace(1e-3, 1e3, 40), [0.37, 5.0, 17.0]])
    u = _gg_root(y, beta, scale, a)
    for yi, ui in zip(y, u):
        assert ui >= 0
        terms = (abs(mpmath.mpf(ui) + a) ** beta + abs(mpmath.mpf(ui) - a) ** beta) / \
            mpmath.mpf(scale) ** beta
        slope = mpmath.diff(lambda t: _phi(t, beta, scale, a), ui)
        tol = 64 * 2.0 ** -53 * terms + slope * 2e-15 * (ui + a)
        assert abs(_phi(ui, beta, scale, a) - yi) <= tol, (yi, ui)


def test_edge_values_and_shapes():
    u = _gg_root(np.array([0.0, np.inf, np.nan, -1.0]), 1.5, 1.0, 0.5)
    assert u.tolist() == [0.0, np.inf, 0.0, 0.0]
    assert _gg_root(np.array(2.0), 1.5, 1.0, 0.5).shape == ()
    two_d = np.abs(np.random.default_rng(0).normal(size=(3, 4)))
    assert np.array_equal(_gg_root(two_d, 3.0, 2.0, 0.5).ravel(),
                          _gg_root(two_d.ravel(), 3.0, 2.0, 0.5))
    strided = np.linspace(0.1, 5.0, 20)[::3]           # not C-contiguous
    assert np.array_equal(_gg_root(strided, 2.5, 1.0, 0.5),
                          _gg_root(strided.copy(), 2.5, 1.0, 0.5))


def test_shared_roots_give_the_fresh_values():
    """Asking the two laws of a pair at the same points (as a subsampled mixture does)
    gives what asking each alone, with nothing remembered, gives."""
    y = np.linspace(-6.0, 6.0, 1001)
    p, q = generalized_gaussian_pair(sp.GeneralizedGaussian(1.5, 0.8))
    together = (p.sf_cont(y), q.sf_cont(y), p.cdf_cont(y), q.cdf_cont(y))
    alone = []
    for side, fn in ((0, "sf_cont"), (1, "sf_cont"), (0, "cdf_cont"), (1, "cdf_cont")):
        fresh = generalized_gaussian_pair(sp.GeneralizedGaussian(1.5, 0.8))[side]
        alone.append(getattr(fresh, fn)(y))
    for a_, b_ in zip(together, alone):
        assert np.array_equal(a_, b_)
    sub = privacy_loss(sp.PoissonSubsampled(sp.GeneralizedGaussian(1.5, 0.8), 0.1), "remove")
    cdf = sub.cdf_cont(y)
    assert np.all(np.diff(cdf) >= 0) and 0 <= cdf[0] <= cdf[-1] <= 1
