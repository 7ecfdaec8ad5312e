"""Discrete Gaussian: direct-sum oracle (k-fold by exact convolution of the noise),
certified truncation, dp-accounting peer."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special

import sampledprv as sp
from discrete_oracles import DELTAS, assert_brackets, hockey_stick
from sampledprv.core.advice import AdvisedError


def dg_log_pmf(sigma: float, half_width: int) -> np.ndarray:
    x = np.arange(-half_width, half_width + 1, dtype=np.float64)
    w = -x * x / (2 * sigma * sigma)
    return w - special.logsumexp(w)


def dg_delta_fn(sigma: float, count: int, sens: int = 1):
    """delta(eps) of `count` runs: the loss depends on the outputs only through their
    sum S, so the pair is (S, S + count * sens) with S the `count`-fold convolution."""
    pmf = np.exp(dg_log_pmf(sigma, int(40 * sigma) + 5))
    s = np.array([1.0])
    for _ in range(count):
        s = np.convolve(s, pmf)
    with np.errstate(divide="ignore"):
        ls = np.log(s)
    shift = count * sens
    lp = np.concatenate([ls, np.full(shift, -np.inf)])
    lq = np.concatenate([np.full(shift, -np.inf), ls])
    return lambda e: max(hockey_stick(lp, lq, e), hockey_stick(lq, lp, e))


@pytest.mark.parametrize("sigma, count, sens", [(0.7, 1, 1), (2.0, 1, 3), (3.0, 10, 1),
                                                (1.5, 100, 1)])
def test_discrete_gaussian_bracketed(sigma, count, sens):
    """Brackets at every delta the accountant resolves; below its realised error terms
    (the FFT round-off of 100 copies is about 1.2e-12) it must refuse, not guess."""
    acc = sp.Accountant(eps_error=0.02, delta_error=1e-14).compose(
        sp.DiscreteGaussian(sigma, sens), count)
    floor = acc.delta(0.3).details["delta_error_upper"]
    resolved = [d for d in DELTAS if d > 2.0 * floor]
    for d in sorted(set(DELTAS) - set(resolved)):
        if d <= floor:
            with pytest.raises(AdvisedError, match="below what this accountant resolves"
                               ) as err:
                acc.epsilon(d)
            # round-off dominates there: the advice is a larger delta, not delta_error
            assert "raise delta" in str(err.value) and "delta_error=" not in str(err.value)
    assert_brackets(acc, dg_delta_fn(sigma, count, sens), deltas=resolved,
                    eps_values=(0.3,))


def test_truncation_is_certified_and_tiny():
    law = sp.DiscreteGaussian(2.5, 1).law()
    # the tail beyond the table (at +inf, at most 1e-40) plus the masses' rounding bound
    assert law.values[-1] == np.inf and 0 < law.p[-1] <= 1e-40
    assert law.p[-1] <= law.mass_defect <= 1e-13


def test_inside_dp_accounting_interval():
    from dp_accounting.pld import privacy_loss_distribution as pld
    sigma, count = 3.0, 20
    peer = pld.from_discrete_gaussian_mechanism(sigma, sensitivity=1,
                                                value_discretization_interval=1e-4
                                                ).self_compose(count)
    acc = sp.Accountant(eps_error=0.01, delta_error=1e-12).compose(sp.DiscreteGaussian(sigma),
                                                                   count)
    for d in (1e-6, 1e-3):
        iv = acc.epsilon(d)
        assert iv.lower <= peer.get_epsilon_for_delta(d) <= iv.upper + 2e-3


@pytest.mark.parametrize("kwargs, needle", [
    ({"sigma": 0.0}, "sigma"), ({"sigma": 2e4}, "sigma must be at most"),
    ({"sigma": 1.0, "sensitivity": 0.5}, "sensitivity must be a positive integer"),
])
def test_bad_parameters(kwargs, needle):
    with pytest.raises(ValueError, match=needle):
        sp.DiscreteGaussian(**kwargs)
