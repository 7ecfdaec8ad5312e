"""Worker threads inside one direction (``engine/workers.py``) give the same floats as
one thread: the fused tree levels' row blocks, the column transforms, the top
composition's row passes and powers."""

from __future__ import annotations

import numpy as np
import pytest

import sampledprv as sp
import sampledprv.analytic.build as build
from sampledprv.engine import fft, workers
from sampledprv.engine.compose import compose_lattices
from sampledprv.engine.four_step_regrid import compose_fold_invert, split_for
from sampledprv.engine.lattice import LatticePMF


def _law(n: int, seed: int = 0) -> np.ndarray:
    x = np.random.default_rng(seed).random(n) ** 4
    return x / x.sum()


@pytest.mark.parametrize("threads", [2, 3, 8])
def test_a_fused_level_is_the_same_on_several_threads(threads):
    x = _law(300_001)
    split = split_for(2_000_000 // 4, 4)
    assert split is not None
    one = compose_fold_invert(x, 64, 4, 2_000_000 // 4, split)
    with workers.using_threads(threads):
        many = compose_fold_invert(x, 64, 4, 2_000_000 // 4, split)
    assert np.array_equal(one[0], many[0]) and one[1:] == many[1:]


@pytest.mark.parametrize("threads", [2, 5])
def test_four_step_transforms_are_the_same_on_several_threads(threads):
    x = _law(1_700_003, seed=1)
    n = fft.next_fast_len(2 * x.size)
    split = fft.layout_split(n)
    assert split is not None
    one = fft.rfft_layout(x, n, split)
    with workers.using_threads(threads):
        many = fft.rfft_layout(x, n, split)
        assert np.array_equal(one, many)
        back_many = fft.irfft_layout(many.copy(), n, split)
    assert np.array_equal(fft.irfft_layout(one.copy(), n, split), back_many)


def test_a_top_composition_is_the_same_on_several_threads():
    law = LatticePMF(_law(40_001, seed=2), offset=-20_000, h=1e-4)
    one = compose_lattices([(law, 30), (law, 7)], tail_mass=1e-15)
    with workers.using_threads(4):
        many = compose_lattices([(law, 30), (law, 7)], tail_mass=1e-15)
    assert np.array_equal(one.probs, many.probs)
    assert (one.offset, one.numeric_error) == (many.offset, many.numeric_error)


@pytest.mark.parametrize("threads", [2, 3])
def test_a_discretization_is_the_same_on_several_threads(threads, monkeypatch):
    """The continuous part's blocks on worker threads (small blocks, so that a group of
    blocks, the survival-function side and the block boundaries' turning flags all
    occur): the same masses, offsets and certified terms as one thread."""
    import sampledprv.engine.discretize as disc
    from sampledprv.mechanisms.relations import privacy_loss

    monkeypatch.setattr(disc, "_BLOCK", 1000)
    law = privacy_loss(sp.PoissonSubsampled(sp.Gaussian(0.8), q=0.05), "remove")
    monkeypatch.setattr(disc, "_MEMO_POINTS", 0)             # no memo: two computations
    one = disc.discretize(law, 1e-4, 1e-12)
    with workers.using_threads(threads):
        many = disc.discretize(law, 1e-4, 1e-12)
    assert one is not many and one.pmf.probs.size > 4 * 1000
    assert np.array_equal(one.pmf.probs, many.pmf.probs)
    assert (one.pmf.shift, one.mean_error, one.second_moment, one.mass_error) == \
        (many.pmf.shift, many.mean_error, many.second_moment, many.mass_error)


@pytest.mark.parametrize("screened", [False, True])
def test_an_accountant_is_the_same_with_more_cores(monkeypatch, screened):
    """Both directions built together (3 threads each of 6 cores), or the dominant
    direction at full accuracy beside the other's screening curve (3 threads each while
    both work, all 6 for the one left: a CoreShare): the same interval as on one core."""
    from sampledprv.analytic import accountant as acc_mod
    monkeypatch.setattr(acc_mod, "_SCREEN_COUNT", 16384)
    def run():
        acc = sp.Accountant(eps_error=0.02, delta_error=1e-10)
        acc.compose(sp.PoissonSubsampled(sp.Gaussian(0.8), q=4e-3), count=2 * 10**6)
        if not screened:
            acc._build()
        iv = acc.epsilon(delta=1e-5)
        return iv.lower, iv.estimate, iv.upper, iv.details["delta_error_upper"]
    base = run()
    monkeypatch.setattr(workers, "available_cores", lambda: 6)
    seen = []
    original = build.CurveBuilder.build_direction

    def spy(self, ctx, direction):
        seen.append(workers.level_threads())
        return original(self, ctx, direction)
    monkeypatch.setattr(build.CurveBuilder, "build_direction", spy)
    assert run() == base
    if screened:
        assert len(seen) == 2 and set(seen) <= {3, 6}
    else:
        assert seen == [3, 3]


def test_thread_counts_and_chunks():
    assert workers.level_threads() == 1
    with workers.using_threads(0):
        assert workers.level_threads() == 1
    with workers.using_threads(10**6):
        assert workers.level_threads() == workers.MAX_THREADS
    with workers.using_threads(4):
        chunks = workers.chunks(1000)
        assert len(chunks) == 4 and chunks[0][0] == 0 and chunks[-1][1] == 1000
        assert all(a[1] == b[0] for a, b in zip(chunks, chunks[1:]))
        assert workers.chunks(100) == [(0, 100)]          # too narrow to share
        assert workers.map_ordered(lambda i: i * i, range(7)) == [i * i for i in range(7)]
    assert workers.level_threads() == 1
