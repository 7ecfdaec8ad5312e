"""The numpy normal CDF (``sampledprv/core/normal_cdf.py``) against 50-digit values and
against ``scipy.special.ndtr``, and the analytic accountant's process without
``scipy.special``."""

from __future__ import annotations

import subprocess
import sys

import mpmath
import numpy as np
import pytest
import scipy.special as sc

from sampledprv.core.normal_cdf import ndtr


def _points() -> np.ndarray:
    rng = np.random.default_rng(20261127)
    return np.concatenate([
        rng.uniform(-37.5, 8.5, 3000),             # the whole normal range of values
        rng.uniform(-1.5, 1.5, 1500),              # erf branch and its edges
        rng.uniform(-12.0, -1.0, 1500),            # erfc branch, P/Q and R/S tables
        np.array([-1.4142135623730951, 1.4142135623730951, -11.313708498984761,
                  11.313708498984761, 0.0, -1e-300, 1e-10, -8.0, 8.0]),
    ])


@pytest.fixture(scope="module")
def reference():
    mpmath.mp.dps = 50
    x = _points()
    return x, np.array([float(mpmath.ncdf(mpmath.mpf(float(v)))) for v in x])


@pytest.fixture(params=["arrays", "points"])
def path(request, monkeypatch):
    """Both evaluation paths: numpy blocks, and Python floats point by point."""
    import sampledprv.core.normal_cdf as nc
    monkeypatch.setattr(nc, "_SCALAR_SIZE", 8 if request.param == "arrays" else 10**9)
    return nc.ndtr


def test_absolute_error_is_within_two_ulps_of_one(reference, path):
    x, exact = reference
    err = np.abs(path(x) - exact)
    # 2.2e-16 = 2 ulp just below 1 (and 1 ulp between 0.5 and 1): what the engine's CDF
    # rounding term (an absolute 4 ulp of the largest CDF value) needs
    assert err.max() <= 2.3e-16, (x[np.argmax(err)], err.max())


def test_relative_error_in_the_tails_grows_like_x_squared(reference, path):
    x, exact = reference
    normal = exact > 1e-290
    ulps = np.abs(path(x) - exact)[normal] / np.spacing(exact[normal])
    # the rounding of -z^2 before exp: about x^2 / 2 ulps (measured at most 3.3 (2 + x^2/2))
    assert np.all(ulps <= 4.0 * (2.0 + x[normal] ** 2 / 2.0)), ulps.max()


def test_no_worse_than_scipy_anywhere(reference, path):
    x, exact = reference
    ours = np.abs(path(x) - exact)
    theirs = np.abs(sc.ndtr(x) - exact)
    assert np.all(ours <= theirs + 4.0 * np.spacing(np.maximum(exact, 1e-300)))
    assert np.abs(path(x) - sc.ndtr(x)).max() <= 2.3e-16


@pytest.mark.parametrize("table", ["_T", "_U", "_P", "_Q", "_R", "_S"])
def test_a_wrong_coefficient_would_be_caught(reference, path, monkeypatch, table):
    """The checks above are sharp: any table with one coefficient changed in its 8th
    digit fails them."""
    import sampledprv.core.normal_cdf as nc
    x, exact = reference
    bad = list(getattr(nc, table))
    bad[-1] *= 1 + 1e-8
    monkeypatch.setattr(nc, table, tuple(bad))
    for stacked, (num, den) in (("_TU", ("_T", "_U")), ("_PQ", ("_P", "_Q")),
                                ("_RS", ("_R", "_S"))):   # the array path's tables
        monkeypatch.setattr(nc, stacked, nc._stacked(getattr(nc, num), getattr(nc, den)))
    err = np.abs(path(x) - exact)
    ulps = err / np.spacing(np.maximum(exact, 1e-300))
    assert err.max() > 2.3e-16 or np.any(ulps > 4.0 * (2.0 + x ** 2 / 2.0))


def test_special_values_shapes_and_types(path):
    ndtr = path
    v = ndtr(np.array([-np.inf, np.inf, np.nan, 0.0, -38.5, 1e300, -1e300, 5e-324]))
    assert v[0] == 0.0 and v[1] == 1.0 and np.isnan(v[2]) and v[3] == 0.5
    assert v[4] == 0.0 and v[5] == 1.0 and v[6] == 0.0 and v[7] == 0.5
    assert ndtr(-37.0) == sc.ndtr(-37.0) > 0           # the last normal-range values
    s = ndtr(0.3)
    assert isinstance(s, np.floating) and np.ndim(s) == 0
    assert ndtr([[0.1, 2.0], [3.0, -4.0]]).shape == (2, 2)
    assert ndtr(np.arange(-3, 4)).dtype == np.float64  # integers are promoted
    assert ndtr(np.zeros(0)).shape == (0,)


def test_sorted_and_unsorted_arguments_agree_bitwise():
    """Sorted blocks take slices, shuffled ones indices: the same arithmetic."""
    x = np.random.default_rng(5).normal(0.0, 4.0, 200_000)
    order = np.argsort(x)
    assert np.array_equal(ndtr(x)[order], ndtr(x[order]))


def test_the_analytic_accountant_needs_no_scipy_special():
    """A long DP-SGD composition (core/tail split, multi-level tree) in a fresh process
    leaves ``scipy.special`` unimported (0.19 s and 27 MiB of the whole run at 1e6)."""
    code = (
        "import sys, sampledprv as sp\n"
        "acc = sp.Accountant(eps_error=0.05, delta_error=1e-10)\n"
        "acc.compose(sp.PoissonSubsampled(sp.Gaussian(0.8), q=4e-3), count=20000)\n"
        "iv = acc.epsilon(delta=1e-5)\n"
        "assert iv.lower <= iv.upper\n"
        "print(sorted(m for m in sys.modules if m.startswith('scipy')))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert "scipy.special" not in out.stdout, out.stdout
