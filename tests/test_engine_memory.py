"""Peak-memory changes of the analytic engine leave every number as it was: the column
transforms without a zero-padded copy, the tree that frees its fine laws, and the cache
that keeps only short discretized steps."""

from __future__ import annotations

import numpy as np
import pytest

import sampledprv as sp
import sampledprv.analytic.build as build
from sampledprv.engine import fft
from sampledprv.engine.evolving import LevelPlan, compose_tree
from sampledprv.engine.lattice import LatticePMF


def _padded_reference(x: np.ndarray, n: int, n1: int, n2: int) -> np.ndarray:
    """The former column pass: ``x`` copied into a zero-padded ``rows x n2`` array."""
    size = min(x.size, n)
    rows = -(-size // n2)
    x2 = np.zeros(rows * n2)
    x2[:size] = x[:size]
    return np.fft.rfft(x2.reshape(rows, n2), n=n1, axis=0)


@pytest.mark.parametrize("size,n1,n2", [
    (1000 * 1024 + 37, 1024, 1024),    # a partial last row
    (1000 * 1024, 1024, 1024),         # whole rows only
    (300, 16, 64),                     # fewer entries than one column's length
    (40, 16, 64),                      # less than one row
    (5_000_123, 1000, 6000),           # a level of k = 1e7's size
    (16 * 64 + 5, 16, 64),             # more input than n: cut to n
])
def test_column_transforms_are_those_of_the_padded_copy_bit_for_bit(size, n1, n2):
    x = np.random.default_rng(size).random(size)
    out = fft.column_transforms(x, n1 * n2, n1, n2)
    assert out.shape == (n1 // 2 + 1, n2)
    assert np.array_equal(out, _padded_reference(x, n1 * n2, n1, n2))


def _gaussian_lattice(h: float, sd: float, mean: float) -> LatticePMF:
    i = np.arange(int(-8 * sd / h), int(8 * sd / h) + 1)
    p = np.exp(-0.5 * ((i * h - mean) / sd) ** 2)
    return LatticePMF(probs=p / p.sum(), offset=int(i[0]), h=h)


def test_compose_tree_consumes_a_list_and_gives_the_same_law():
    plan = LevelPlan(1e-3, (8, 8), (2, 2))
    law = _gaussian_lattice(1e-3, 0.02, 0.001)
    kwargs = dict(inner_budget=1e-12, tail_mass=1e-12, max_size=2**22)
    as_tuple, tv_tuple = compose_tree(((law, 200),), plan, **kwargs)
    handed = [(law, 200)]
    as_list, tv_list = compose_tree(handed, plan, **kwargs)
    assert handed == [None]                       # the fine law was let go
    assert np.array_equal(as_tuple.probs, as_list.probs) and tv_tuple == tv_list
    assert as_tuple.offset == as_list.offset and as_tuple.numeric_error == as_list.numeric_error


def _long_dpsgd(count: int):
    acc = sp.Accountant(eps_error=0.05, delta_error=1e-10)
    acc.compose(sp.PoissonSubsampled(sp.Gaussian(0.8), q=4e-3), count=count)
    return acc


def test_only_short_discretized_steps_are_cached(monkeypatch):
    acc = _long_dpsgd(20000)
    first = acc.epsilon(delta=1e-5)
    cache = acc._builder.cache if hasattr(acc, "_builder") else None
    if cache is None:                                 # find the builder on the facade
        cache = next(v.cache for v in vars(acc).values() if isinstance(v, build.CurveBuilder))
    assert len(cache) == 2                            # both directions' steps are short
    monkeypatch.setattr(build, "_CACHE_POINTS", 0)    # now every step counts as long
    acc2 = _long_dpsgd(20000)
    second = acc2.epsilon(delta=1e-5)
    cache2 = next(v.cache for v in vars(acc2).values() if isinstance(v, build.CurveBuilder))
    assert len(cache2) == 0
    assert (first.lower, first.estimate, first.upper) == \
        (second.lower, second.estimate, second.upper)
