"""Straight paths (issue 32, 4.7): the Renyi tail bound evaluates a base spec's bound
through the internal, cached path (not the public ``renyi_divergence``, once per base
order and direction), and the numpy fallback path of the sampler reports progress to a
callback it is given (it keeps no progress bar of its own)."""

from __future__ import annotations

import collections

import numpy as np
import pytest

import sampledprv as sp
from sampledprv.mechanisms import registry
from sampledprv.rdp import divergence
from sampledprv.sampled.histograms import _pypath


def _fresh():
    divergence._integer_sum_cached.cache_clear()
    divergence._spec_bound_cached.cache_clear()


def test_subsampling_sums_do_not_call_the_public_function(monkeypatch):
    public = divergence.renyi_divergence
    calls = collections.Counter()

    def counted(spec, order, direction):
        calls[type(spec).__name__] += 1
        return public(spec, order, direction)

    _fresh()
    monkeypatch.setattr(divergence, "renyi_divergence", counted)
    spec = sp.PoissonSubsampled(sp.Laplace(1.0), 0.05)
    got = [public(spec, float(a), d) for a in (2, 3.5, 8, 32) for d in ("remove", "add")]
    assert not calls, dict(calls)                  # main: hundreds of Laplace calls
    _fresh()
    monkeypatch.undo()
    assert got == [public(spec, float(a), d) for a in (2, 3.5, 8, 32)
                   for d in ("remove", "add")]


def test_a_base_order_is_evaluated_once():
    fam = registry.family_of(sp.Laplace(1.0))
    hook = fam.renyi
    seen = collections.Counter()

    def counted(spec, order, direction):
        seen[(spec, order, direction)] += 1
        return hook(spec, order, direction)

    _fresh()
    object.__setattr__(fam, "renyi", counted)       # a frozen record: patched for the test
    try:
        spec = sp.PoissonSubsampled(sp.Laplace(1.0), 0.05)
        for a in range(2, 65):
            divergence.renyi_divergence(spec, float(a), "add")
        assert seen and max(seen.values()) == 1, seen.most_common(3)
    finally:
        object.__setattr__(fam, "renyi", hook)
        _fresh()


def test_the_straight_path_checks_what_it_is_given():
    with pytest.raises(ValueError, match="order"):
        divergence.spec_divergence(sp.Gaussian(1.0), 1.0, "remove")
    with pytest.raises(ValueError, match="direction"):
        divergence.spec_divergence(sp.Gaussian(1.0), 2.0, "both")
    with pytest.raises(ValueError, match="infinite"):
        divergence.spec_divergence(sp.ApproxDP(1.0, 1e-5), 2.0, "remove")
    with pytest.raises(ValueError, match="no Renyi divergence bound"):
        divergence.spec_divergence(sp.DiscreteLaplace(1.0), 2.0, "remove")
    assert divergence.spec_divergence(sp.Gaussian(2.0), 3.0, "add") == \
        divergence.renyi_divergence(sp.Gaussian(2.0), 3, "add")


def test_the_python_path_reports_to_the_callback_it_is_given():
    assert "Progress" not in vars(_pypath)             # no bar kept there
    got = []
    n = 3 * _pypath.FALLBACK_BLOCK + 17
    counts, extra = _pypath.python_histogram(
        "pair", lambda rng, size: rng.standard_normal(size), "remove", n, -8.0, 0.01, 1600,
        np.random.SeedSequence(3), on_draws=got.append)
    assert got == [_pypath.FALLBACK_BLOCK] * 3 + [17]
    assert counts.sum() + extra[:2].sum() == n
    again, _ = _pypath.python_histogram(
        "pair", lambda rng, size: rng.standard_normal(size), "remove", n, -8.0, 0.01, 1600,
        np.random.SeedSequence(3))
    assert np.array_equal(counts, again)
