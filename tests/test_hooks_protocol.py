"""The user-input hooks of the sampled accountant are spelled as typing.Protocol classes
(sampledprv.sampled.draws.hooks); the built-in input types satisfy them, and the
accountant still finds the hooks by name (any object with the methods works)."""

from __future__ import annotations

import numpy as np

import sampledprv as sp
from sampledprv.sampled.draws.hooks import (LOSS_SAMPLER, NUMPY_LOSS_SAMPLER, LossSamplerSource,
                                            LossSource, NumpyLossSamplerSource, find_hook)


class _OnlyNumpy:
    def numpy_loss_sampler(self, direction):
        return lambda rng, size: rng.standard_normal(size)


def test_builtin_inputs_satisfy_the_protocols():
    pair = sp.LogDensityPair(lambda x: -x * x / 2, lambda x: -(x - 1) ** 2 / 2,
                             lambda r, n: r.standard_normal(n),
                             lambda r, n: 1 + r.standard_normal(n))
    sampler = sp.PrivacyLossSampler(lambda r, n: 0.5 + r.standard_normal(n))
    for obj in (pair, sampler):
        assert isinstance(obj, LossSource)
        assert find_hook(obj, LOSS_SAMPLER) is not None
        assert find_hook(obj, NUMPY_LOSS_SAMPLER) is not None


def test_protocols_tell_the_hooks_apart():
    obj = _OnlyNumpy()
    assert isinstance(obj, NumpyLossSamplerSource)
    assert not isinstance(obj, LossSamplerSource) and not isinstance(obj, LossSource)
    assert not isinstance(object(), NumpyLossSamplerSource)
    # the name lookup is what the accountant uses: the same answer
    assert find_hook(obj, LOSS_SAMPLER) is None
    draw = find_hook(obj, NUMPY_LOSS_SAMPLER)("remove")
    assert draw(np.random.default_rng(0), 4).shape == (4,)
