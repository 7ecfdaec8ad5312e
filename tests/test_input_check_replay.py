"""The default input check of a user pair runs once per pair object and is replayed.

The check draws from one fixed seed, so its outcome is a property of the pair; composing
the same pair into many accountants (coverage studies, calibration by hand) must not pay
its 2^20 sampler draws each time, yet must still issue its warnings and fail when the
pair is wrong."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import sampledprv as sp


def _counting_pair(calls: list, logq_shift: float = 0.0) -> sp.LogDensityPair:
    def sample_p(rng, n):
        calls.append(n)
        return rng.normal(1.0, 1.0, n)

    return sp.LogDensityPair(logp=lambda w: -0.5 * (w - 1.0) ** 2,
                             logq=lambda w: -0.5 * w ** 2 + logq_shift,
                             sample_p=sample_p,
                             sample_q=lambda rng, n: rng.normal(0.0, 1.0, n), name="shift")


def test_second_compose_of_the_same_pair_draws_nothing_for_the_check():
    calls: list = []
    pair = _counting_pair(calls)
    sp.SampledAccountant(2000, alpha=0.05, seed=1, progress=False).compose(pair)
    first = sum(calls)
    assert first >= 1 << 20               # the tail check's draws
    sp.SampledAccountant(2000, alpha=0.05, seed=2, progress=False).compose(pair)
    assert sum(calls) == first            # replayed, not drawn again
    assert pair.check() == pair.run_checks()      # the same report as a fresh run


def test_an_explicit_rng_always_runs_the_checks():
    calls: list = []
    pair = _counting_pair(calls)
    pair.check()
    before = sum(calls)
    pair.check(np.random.default_rng(0))
    assert sum(calls) > before


def test_replayed_check_issues_its_warning_again():
    # log-normalising constants that differ by 0.01: the quadrature check warns
    pair = _counting_pair([], logq_shift=-0.01)
    for _ in range(2):
        with pytest.warns(RuntimeWarning, match="normalizing constants"):
            pair.check()


def test_a_failing_check_fails_every_time():
    # logq shifted by +1: E_P[q/p] = e > 1, the normalisation check refuses the pair
    pair = _counting_pair([], logq_shift=1.0)
    for _ in range(2):
        with pytest.raises(ValueError, match="normalized consistently"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                pair.check()
