"""Checks every sampled-only batch family passes (random allocation, the matrix mechanism):
one copy of each, called from the families' test files with their own specs."""

from __future__ import annotations

import math

import numpy as np
import pytest

import sampledprv as sp


def assert_sampled_only(m) -> None:
    """The analytic accountant refuses ``m`` and names the sampled one; the sampled one
    takes it under add/remove and refuses substitution."""
    assert not sp.Accountant().supports(m)
    with pytest.raises(ValueError, match="SampledAccountant"):
        sp.Accountant().compose(m)
    assert sp.SampledAccountant(1000).supports(m)
    with pytest.raises(ValueError, match="add_remove"):
        sp.SampledAccountant(1000, neighbouring="substitute").compose(m)


def assert_renyi_bounds_hold_against_samples(spec, seed: int = 3, n: int = 200_000) -> None:
    """The spec's Renyi bounds at orders 2 and 3, both directions, lie above the empirical
    divergence of ``n`` sampled losses (2% + 1e-3 of slack for the sampling error)."""
    rng = np.random.default_rng(seed)
    for d in ("remove", "add"):
        y = spec.numpy_loss_sampler(d)(rng, n)
        for a in (2, 3):
            emp = math.log(np.mean(np.exp((a - 1) * y))) / (a - 1)
            bound = spec.renyi(a, d)
            assert emp <= bound + 0.02 * abs(bound) + 1e-3, (d, a, emp, bound)


def assert_mechanism_strings_round_trip(strings) -> None:
    """Each CLI mechanism string builds a spec that formats back to itself."""
    from sampledprv.cli.mechanism_strings import format_mechanism, parse_mechanism
    for s in strings:
        spec = parse_mechanism(s).build()
        assert format_mechanism(spec) == s
        assert parse_mechanism(format_mechanism(spec)).build() == spec
