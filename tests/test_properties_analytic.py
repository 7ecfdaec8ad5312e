"""Property test: the analytic accountant's certified intervals contain the exact truth.

For every analytic spec with an exact oracle (``tests/exact_oracles.py``, 34-digit
mpmath), seeded random valid parameters are drawn -- mechanism parameters, the number
of compositions, ``eps_error`` and ``delta_error`` -- and every query is checked:

* ``delta(eps)``: ``lower <= exact delta(eps) <= upper``;
* ``epsilon(delta)``: ``exact delta(upper) <= delta`` (so the exact epsilon is at most
  ``upper``) and ``exact delta(lower) >= delta`` (so it is at least ``lower``).

A fifth of the accountants with at most 64 runs are online (``horizon=``, composed in
two steps with a query in between), so the Plancherel path is held to the same
promise.  Query points include the places where the bounds are tight to round-off: the flat
part of the curve beyond the largest finite loss, where ``delta`` is the mass at
``+inf`` alone, the atoms of discrete laws, and deltas just above that mass.  Over all
families at least 5,000 comparisons are made.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import sampledprv as sp
from exact_oracles import (GaussianCurve, GeneralizedGaussianCurve, LaplaceCurve,
                           LaplaceKFoldCurve,
                           approx_dp_outputs, as_mpf, finite_pair, rr_outputs,
                           subsample_outputs)

SEED = 20261122
#: comparisons each family must make (their sum is the acceptance's 5,000)
MINIMUM = {"approx_dp": 1500, "randomized_response": 900, "subsampled": 1400,
           "gaussian": 1000, "laplace": 300, "two_level": 150, "generalized_gaussian": 60}


def _accountant(rng: np.random.Generator, spec, k: int, **kw) -> sp.Accountant:
    """A random accountant with ``k`` runs of ``spec``; one in five with ``k <= 64`` is
    online (a ``horizon``, the runs added in two calls, a query in between), the rest
    rebuild."""
    eps_error = float(rng.choice([0.01, 0.02, 0.05, 0.1]))
    delta_error = float(10.0 ** rng.uniform(-13, -8))
    if rng.random() < 0.2 and k <= 64:
        acc = sp.Accountant(eps_error=eps_error, delta_error=delta_error,
                            horizon=int(k * rng.uniform(1.0, 3.0)) + 1, **kw)
        first = int(rng.integers(1, k + 1))
        acc.compose(spec, first)
        if first < k:
            acc.delta(float(rng.uniform(0, 2)))        # a query before the rest arrives
            acc.compose(spec, k - first)
        return acc
    return sp.Accountant(eps_error=eps_error, delta_error=delta_error, **kw).compose(spec, k)


def _deltas(rng: np.random.Generator, oracle, acc: sp.Accountant, eps_hi: float,
            p_inf: float) -> list[float]:
    """Query deltas: on the curve at random epsilons, log-uniform, and just above the
    mass at +inf (where the upper bound is tight to round-off)."""
    floor = 1e3 * acc.delta_error + 1e-11
    out = [float(oracle.delta(e)) for e in rng.uniform(0.0, eps_hi, 2)]
    out.append(float(10.0 ** rng.uniform(math.log10(floor), -0.5)))
    if p_inf > 0:
        out.append(p_inf * (1.0 + float(10.0 ** rng.uniform(-9, -1))))
    return [d for d in out if floor < d < 1.0]


def _check(label: str, acc: sp.Accountant, oracle, epsilons, deltas) -> int:
    """Compare every query with the oracle; returns the number of comparisons."""
    n = 0
    for eps in epsilons:
        iv = acc.delta(float(eps))
        exact = oracle.delta(float(eps))
        assert as_mpf(iv.lower) <= exact <= as_mpf(iv.upper), (
            f"{label} {acc!r}: delta({eps!r}) = [{iv.lower!r}, {iv.upper!r}] excludes "
            f"the exact {mp_str(exact)}")
        assert iv.lower <= iv.estimate <= iv.upper
        n += 1
    for d in deltas:
        try:
            iv = acc.epsilon(float(d))
        except ValueError as err:            # delta below the realised error terms
            assert "below what this accountant resolves" in str(err)
            continue
        except RuntimeError as err:
            raise AssertionError(f"{label} {acc!r} horizon={acc.horizon}: epsilon({d!r}) "
                                 f"failed: {err}") from None
        if math.isfinite(iv.upper):
            assert oracle.delta(iv.upper) <= as_mpf(d), (
                f"{label} {acc!r}: epsilon({d!r}) upper {iv.upper!r} is below the exact "
                f"epsilon (exact delta there {mp_str(oracle.delta(iv.upper))})")
        if iv.lower > 0:
            assert oracle.delta(iv.lower) >= as_mpf(d), (
                f"{label} {acc!r}: epsilon({d!r}) lower {iv.lower!r} is above the exact "
                f"epsilon (exact delta there {mp_str(oracle.delta(iv.lower))})")
        assert iv.lower <= iv.estimate <= iv.upper
        n += 1
    return n


def mp_str(x) -> str:
    return format(float(x), ".17g")


def _lattice_points(rng: np.random.Generator, step: float, k: int, extra: float) -> list:
    """Multiples of an atom's loss (where composed discrete laws have atoms), random
    points, and a point beyond every finite loss."""
    pts = [j * step for j in rng.integers(0, k + 1, 2)] if step > 0 else [0.0]
    pts += list(rng.uniform(0.0, max(extra, 0.1), 2))
    pts.append(k * step + 1.0 + float(rng.uniform(0, 50)))
    return pts


def test_approx_and_pure_dp_compositions():
    rng = np.random.default_rng(SEED)
    n = 0
    while n < MINIMUM["approx_dp"]:
        eps0 = 0.0 if rng.random() < 0.15 else float(rng.uniform(0.0, 2.0))
        delta0 = 0.0 if rng.random() < 0.25 else float(10.0 ** rng.uniform(-9, -0.5))
        k = int(rng.integers(1, 41))
        spec = sp.PureDP(eps0) if delta0 == 0 else sp.ApproxDP(eps0, delta0)
        oracle = finite_pair(*approx_dp_outputs(eps0, delta0), k)
        acc = _accountant(rng, spec, k)
        p_inf = -math.expm1(k * math.log1p(-delta0))
        n += _check(f"{spec!r} x{k}", acc, oracle, _lattice_points(rng, eps0, k, k * eps0),
                    _deltas(rng, oracle, acc, k * eps0 + 0.1, p_inf))


def test_randomized_response_compositions():
    rng = np.random.default_rng(SEED + 1)
    n = 0
    while n < MINIMUM["randomized_response"]:
        p = 1.0 if rng.random() < 0.03 else float(rng.uniform(0.5, 0.995))
        k = int(rng.integers(1, 41))
        spec = sp.RandomizedResponse(p)
        oracle = finite_pair(*rr_outputs(p), k)
        acc = _accountant(rng, spec, k)
        step = math.log(p / (1 - p)) if p < 1 else 0.0
        n += _check(f"{spec!r} x{k}", acc, oracle, _lattice_points(rng, step, k, k * step),
                    _deltas(rng, oracle, acc, k * step + 0.1, 1.0 if p == 1 else 0.0))


def test_subsampled_finite_mechanisms():
    rng = np.random.default_rng(SEED + 2)
    n = 0
    while n < MINIMUM["subsampled"]:
        kind = rng.integers(0, 3)
        q = float(10.0 ** rng.uniform(-9, 0))
        k = int(rng.integers(1, 11))
        if kind == 0:
            eps0, delta0 = float(rng.uniform(0, 2)), float(10.0 ** rng.uniform(-6, -0.5))
            base, outputs = sp.ApproxDP(eps0, delta0), approx_dp_outputs(eps0, delta0)
        elif kind == 1:
            eps0, delta0 = float(rng.uniform(0, 3)), 0.0
            base, outputs = sp.PureDP(eps0), approx_dp_outputs(eps0, 0.0)
        else:
            p = float(rng.uniform(0.5, 0.99))
            eps0, delta0 = math.log(p / (1 - p)), 0.0
            base, outputs = sp.RandomizedResponse(p), rr_outputs(p)
        spec = sp.PoissonSubsampled(base, q)
        oracle = finite_pair(*subsample_outputs(*outputs, q), k)
        acc = _accountant(rng, spec, k)
        step = math.log1p(q * math.expm1(eps0))       # the subsampled atom's loss
        p_inf = -math.expm1(k * math.log1p(-q * delta0))
        n += _check(f"{spec!r} x{k}", acc, oracle, _lattice_points(rng, step, k, k * step),
                    _deltas(rng, oracle, acc, k * step + 0.1, p_inf))


def test_gaussian_compositions():
    rng = np.random.default_rng(SEED + 3)
    n = 0
    while n < MINIMUM["gaussian"]:
        sigma = float(10.0 ** rng.uniform(-0.5, 1.3))
        sens = float(rng.choice([1.0, float(rng.uniform(0.1, 3.0))]))
        merge = bool(rng.random() < 0.8)
        k = int(10.0 ** rng.uniform(0, 3)) if merge else int(rng.integers(1, 9))
        spec = sp.Gaussian(sigma, sens)
        oracle = GaussianCurve.build(sigma, sens, k)
        acc = _accountant(rng, spec, k, merge_gaussians=merge)
        mu = float(oracle.mu)
        hi = 0.5 * mu * mu + 4 * mu
        eps = list(rng.uniform(0.0, hi, 3)) + [0.0]
        n += _check(f"{spec!r} x{k}", acc, oracle, eps, _deltas(rng, oracle, acc, hi, 0.0))


def test_long_compositions_through_the_multi_level_scheme():
    # Gaussians composed without the closed-form merge, long enough for the multi-level
    # (regridded) composition
    rng = np.random.default_rng(SEED + 6)
    n = 0
    while n < MINIMUM["two_level"]:
        sigma = float(10.0 ** rng.uniform(0.8, 1.8))
        k = int(rng.integers(16384, 40000))
        spec = sp.Gaussian(sigma)
        oracle = GaussianCurve.build(sigma, 1.0, k)
        acc = sp.Accountant(eps_error=float(rng.choice([0.05, 0.1])),
                            delta_error=float(10.0 ** rng.uniform(-12, -8)),
                            merge_gaussians=False).compose(spec, k)
        assert acc.delta(0.0).details["mesh_coarse"] > acc.delta(0.0).details["mesh_fine"]
        mu = float(oracle.mu)
        hi = 0.5 * mu * mu + 4 * mu
        n += _check(f"{spec!r} x{k}", acc, oracle, list(rng.uniform(0.0, hi, 3)),
                    _deltas(rng, oracle, acc, hi, 0.0))


def test_laplace_compositions():
    rng = np.random.default_rng(SEED + 4)
    n = 0
    while n < MINIMUM["laplace"]:
        scale, sens = float(10.0 ** rng.uniform(-0.7, 1.0)), float(rng.uniform(0.2, 2.0))
        k = int(rng.integers(1, 4))
        spec = sp.Laplace(scale, sens)
        e0 = sens / scale
        oracle = LaplaceKFoldCurve(as_mpf(e0), k) if k > 1 else LaplaceCurve(as_mpf(e0))
        acc = _accountant(rng, spec, k)
        eps = list(rng.uniform(0.0, k * e0, 2)) + [e0, k * e0 + 1.0]
        n += _check(f"{spec!r} x{k}", acc, oracle, eps, _deltas(rng, oracle, acc, k * e0, 0.0))


def test_generalized_gaussian():
    rng = np.random.default_rng(SEED + 5)
    n = 0
    while n < MINIMUM["generalized_gaussian"]:
        beta = float(rng.uniform(1.05, 4.0))
        scale = float(10.0 ** rng.uniform(0.0, 0.7))
        spec = sp.GeneralizedGaussian(beta, scale)
        oracle = GeneralizedGaussianCurve(as_mpf(beta), as_mpf(scale), as_mpf(1.0))
        acc = _accountant(rng, spec, 1)
        eps = list(rng.uniform(0.0, 2.0 / scale ** beta + 0.5, 2))
        n += _check(f"{spec!r}", acc, oracle, eps, _deltas(rng, oracle, acc, 1.0, 0.0)[:1])


def test_the_families_make_the_required_number_of_comparisons():
    assert sum(MINIMUM.values()) >= 5000
