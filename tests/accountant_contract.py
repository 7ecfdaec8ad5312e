"""Behaviour every accountant backend must have (inherit and set `make_accountant`).

Like dp_accounting's abstract accountant test: the analytic `Accountant` and the
sampled `SampledAccountant` both subclass `AccountantContract`, so the API contract
(chaining, Interval types, input validation, bracketing a Gaussian) is checked once
for all backends.
"""

from __future__ import annotations

import math

import pytest

import sampledprv as sp
from exact_curves import gaussian_delta, gaussian_eps


class AccountantContract:
    #: tolerance added to the bracket check (0 for deterministic backends)
    slack = 0.0

    def make_accountant(self):  # pragma: no cover - abstract
        raise NotImplementedError

    def test_compose_returns_self_and_chains(self):
        acc = self.make_accountant()
        assert acc.compose(sp.Gaussian(2.0), count=3) is acc
        assert acc.compose(sp.Gaussian(2.0), count=2).compose(sp.Laplace(5.0)) is acc

    def test_epsilon_and_delta_return_ordered_intervals(self):
        acc = self.make_accountant().compose(sp.Gaussian(2.0), count=4)
        for iv in (acc.epsilon(delta=1e-5), acc.delta(epsilon=1.0)):
            assert isinstance(iv, sp.Interval)
            assert iv.lower <= iv.estimate <= iv.upper
        d = acc.delta(epsilon=1.0)
        assert 0.0 <= d.lower and d.upper <= 1.0
        assert acc.epsilon(delta=1e-5).lower >= 0.0

    def test_gaussian_bracketed(self):
        acc = self.make_accountant().compose(sp.Gaussian(2.0), count=4)
        mu = math.sqrt(4) / 2.0
        e = acc.epsilon(delta=1e-5)
        truth = gaussian_eps(mu, 1e-5)
        assert e.lower - self.slack <= truth <= e.upper + self.slack
        d = acc.delta(epsilon=1.0)
        truth = gaussian_delta(mu, 1.0)
        assert d.lower - self.slack <= truth <= d.upper + self.slack

    def test_more_steps_never_less_privacy_loss(self):
        acc = self.make_accountant().compose(sp.Gaussian(2.0), count=2)
        before = acc.epsilon(delta=1e-5).estimate
        after = acc.compose(sp.Gaussian(2.0), count=6).epsilon(delta=1e-5).estimate
        assert after > before

    @pytest.mark.parametrize("bad", [0.0, -1e-5, 1.0, 2.0, float("nan")])
    def test_bad_delta_rejected(self, bad):
        acc = self.make_accountant().compose(sp.Gaussian(2.0))
        with pytest.raises(ValueError, match="delta"):
            acc.epsilon(delta=bad)

    @pytest.mark.parametrize("bad", [-1.0, float("nan"), float("inf")])
    def test_bad_epsilon_rejected(self, bad):
        acc = self.make_accountant().compose(sp.Gaussian(2.0))
        with pytest.raises(ValueError, match="epsilon"):
            acc.delta(epsilon=bad)

    @pytest.mark.parametrize("bad", [0, -3, 1.5])
    def test_bad_count_rejected(self, bad):
        with pytest.raises(ValueError, match="count"):
            self.make_accountant().compose(sp.Gaussian(2.0), count=bad)

    def test_query_before_compose_is_an_error(self):
        with pytest.raises(ValueError, match="compose"):
            self.make_accountant().epsilon(delta=1e-5)
