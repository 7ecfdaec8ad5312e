"""The binomial weights of the core/tail mixture ``W`` (``engine/core_tail.py``): within
their stated relative error of 40-digit values, which the former difference of
log-Gammas was not."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from scipy.special import gammaln

from sampledprv.engine.core_tail import _weights


def _exact(k: int, j: int, p: float) -> float:
    mpmath.mp.dps = 40
    return float(mpmath.log(mpmath.binomial(k, j)) + j * mpmath.log(p))


@pytest.mark.parametrize("k,p", [(20_000, 4e-4), (10**6, 8e-6), (10**7, 8e-7),
                                 (10**8, 8e-8), (10**9, 8e-9)])
def test_weights_are_within_their_relative_bound(k, p):
    w, rel = _weights(k, 35, p)
    errors = [abs(math.log(w[j]) - _exact(k, j, p)) for j in range(36)]
    # |log w - log exact| bounds the relative error to first order (log rounds by 1e-16)
    assert max(errors) <= rel / 1.01
    assert rel < 2e-14                     # small enough to cost nothing in delta


def test_the_former_log_gamma_difference_breaks_the_bound_at_long_k():
    """The cancelling ``gammaln`` form was off by far more than the stated bound: the
    check above can fail."""
    k, p = 10**8, 8e-8
    _, rel = _weights(k, 35, p)
    j = np.arange(36)
    old = gammaln(k + 1) - gammaln(j + 1) - gammaln(k - j + 1) + j * math.log(p)
    worst = max(abs(old[i] - _exact(k, i, p)) for i in range(36))
    assert worst > 100 * rel


def test_zero_tail_probability_leaves_one_weight():
    w, rel = _weights(100, 3, 0.0)
    assert w[0] == 1.0 and np.all(w[1:] == 0.0) and rel < 1e-14
