"""The sampled accountant's settings are one frozen, validated value (issue 32, 4.1).

The accountant, its inner accountants (the two ends of a bracketed composition, the
dominating compositions) and its pickle all go through :class:`SampledSettings`; nothing
is sampled here.
"""

from __future__ import annotations

import copy
import dataclasses
import pickle
from concurrent.futures import ThreadPoolExecutor

import pytest

import sampledprv as sp
from sampledprv.sampled.certification.fixed_size_ends import ends
from sampledprv.sampled.certification.settings import SampledSettings


def test_settings_are_frozen_and_normalised():
    s = SampledSettings({"remove": 2000, "add": 2000}, alpha=1e-3, bins=64, max_grid=1024,
                        seed_params=None, neighbouring="substitute", shard_size=500)
    assert s.n_samples == 2000 and s.sizes == {"remove": 2000, "add": 2000}
    assert s.seed_params == {} and s.neighbouring is sp.NeighbouringRelation.SUBSTITUTE
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.alpha = 0.5                                           # type: ignore[misc]
    assert s.replace(alpha=0.25).alpha == 0.25 and s.alpha == 1e-3
    assert s.under("upper") is s                     # no checkpoint: nothing to move


@pytest.mark.parametrize("kwargs,name", [
    (dict(alpha=0.0), "alpha"), (dict(alpha=1.5), "alpha"),
    (dict(certify="bootstrap"), "certify"), (dict(bins=8), "bins"),
    (dict(bins="many"), "bins"), (dict(max_grid=32), "max_grid"),
    (dict(bins=4096, max_grid=1024), "bins"), (dict(backend="jax"), "backend"),
    (dict(device="cuda"), "device"), (dict(shard_size=0), "shard_size"),
    (dict(threads_per_task=-1), "threads_per_task"), (dict(seed_params=[1, 2]), "seed_params"),
    (dict(progress="yes"), "progress"), (dict(neighbouring="swap"), "neighbouring"),
])
def test_a_bad_setting_names_itself(kwargs, name):
    with pytest.raises(ValueError, match=name):
        SampledSettings(1000, **kwargs)
    with pytest.raises(ValueError, match=name):
        sp.SampledAccountant(1000, **kwargs)
    with pytest.raises(ValueError, match="n_samples"):
        SampledSettings(0)


def test_the_accountant_reads_its_settings():
    acc = sp.SampledAccountant((3000, 1000), 1e-4, seed=7, bins=128, max_grid=4096,
                               shard_size=1000, tail_bounds=False)
    s = acc._settings
    assert isinstance(s, SampledSettings)
    assert (acc.n_samples, acc.alpha, acc.bins, acc.max_grid, acc.shard_size,
            acc.tail_bounds) == ({"remove": 3000, "add": 1000}, 1e-4, 128, 4096, 1000, False)
    again = sp.SampledAccountant.from_settings(s)
    assert again._settings == s and again.settings() == acc.settings()


def test_inner_accountants_inherit_every_setting(tmp_path):
    acc = sp.SampledAccountant(2000, 1e-3, seed=5, bins=64, max_grid=2048, shard_size=500,
                               neighbouring="substitute", checkpoint=tmp_path / "ck",
                               tail_bounds=False)
    acc.compose(sp.FixedSizeSubsampled(sp.Gaussian(1.0), 10, 100), 3)
    upper, lower = ends(acc)
    for i, (inner, name) in enumerate(((upper, "upper"), (lower, "lower"))):
        want = acc._settings.replace(alpha=acc.alpha / 2, seed=5 + i,
                                     neighbouring="add_remove",
                                     checkpoint=str(tmp_path / "ck" / name))
        assert inner._settings == want, name


def test_pickle_drops_the_executor_and_a_copy_shares_it():
    with ThreadPoolExecutor(1) as pool:
        acc = sp.SampledAccountant(1000, 1e-3, bins=64, executor=pool)
        acc.compose(sp.Gaussian(1.0), 2)
        back = pickle.loads(pickle.dumps(acc))
        assert back.executor is None and back._settings.executor is None
        assert back._settings == acc._settings.replace(executor=None)
        assert acc.executor is pool                     # the original keeps it
        twin = copy.deepcopy(acc)
        assert twin.executor is pool and twin._bank.executor is pool
        assert twin._settings == acc._settings and twin._settings is not acc._settings
