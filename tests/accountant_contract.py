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

    def gaussian(self, sigma: float):
        """A spec this accountant takes whose composition has the privacy curve of the
        Gaussian mechanism with noise ``sigma`` and sensitivity 1 (the bracket checks
        compare against that curve).  Accountants of one family only (the shuffle
        accountant) override it."""
        return sp.Gaussian(sigma)

    def other(self):
        """A second, different spec this accountant takes (chaining checks)."""
        return sp.Laplace(5.0)

    def test_compose_returns_self_and_chains(self):
        acc = self.make_accountant()
        assert acc.compose(self.gaussian(2.0), count=3) is acc
        assert acc.compose(self.gaussian(2.0), count=2).compose(self.other()) is acc

    def test_epsilon_and_delta_return_ordered_intervals(self):
        acc = self.make_accountant().compose(self.gaussian(2.0), count=4)
        for iv in (acc.epsilon(delta=1e-5), acc.delta(epsilon=1.0)):
            assert isinstance(iv, sp.Interval)
            assert iv.lower <= iv.estimate <= iv.upper
        d = acc.delta(epsilon=1.0)
        assert 0.0 <= d.lower and d.upper <= 1.0
        assert acc.epsilon(delta=1e-5).lower >= 0.0

    def test_gaussian_bracketed(self):
        acc = self.make_accountant().compose(self.gaussian(2.0), count=4)
        mu = math.sqrt(4) / 2.0
        e = acc.epsilon(delta=1e-5)
        truth = gaussian_eps(mu, 1e-5)
        assert e.lower - self.slack <= truth <= e.upper + self.slack
        d = acc.delta(epsilon=1.0)
        truth = gaussian_delta(mu, 1.0)
        assert d.lower - self.slack <= truth <= d.upper + self.slack

    def test_more_steps_never_less_privacy_loss(self):
        acc = self.make_accountant().compose(self.gaussian(2.0), count=2)
        before = acc.epsilon(delta=1e-5).estimate
        after = acc.compose(self.gaussian(2.0), count=6).epsilon(delta=1e-5).estimate
        assert after > before

    @pytest.mark.parametrize("bad", [0.0, -1e-5, 1.0, 2.0, float("nan")])
    def test_bad_delta_rejected(self, bad):
        acc = self.make_accountant().compose(self.gaussian(2.0))
        with pytest.raises(ValueError, match="delta"):
            acc.epsilon(delta=bad)

    @pytest.mark.parametrize("bad", [-1.0, float("nan"), float("inf")])
    def test_bad_epsilon_rejected(self, bad):
        acc = self.make_accountant().compose(self.gaussian(2.0))
        with pytest.raises(ValueError, match="epsilon"):
            acc.delta(epsilon=bad)

    @pytest.mark.parametrize("bad", [0, -3, 1.5])
    def test_bad_count_rejected(self, bad):
        with pytest.raises(ValueError, match="count"):
            self.make_accountant().compose(self.gaussian(2.0), count=bad)

    def test_query_before_compose_is_an_error(self):
        with pytest.raises(ValueError, match="compose"):
            self.make_accountant().epsilon(delta=1e-5)


# ---- properties every accountant has (issue 23: one contract for every accountant) -------
class AccountantProperties(AccountantContract):
    """The full contract: :class:`AccountantContract` plus the properties of the
    :class:`~sampledprv.core.contract.PrivacyAccountant` ABC.  Every accountant's test
    class inherits this one and sets ``make_accountant`` (and ``mechanisms``, the specs
    the generic properties are checked on)."""

    #: specs the generic properties are checked on (each composed ``count`` times)
    mechanisms: tuple = (sp.Gaussian(2.0),)
    count = 3
    deltas = (1e-6, 1e-4, 1e-2)
    epsilons = (0.25, 1.0, 2.5)
    #: relative tolerance of the monotonicity and consistency checks (floating point)
    rtol = 1e-9

    #: composed accountants shared by the query-only tests of one class (an accountant
    #: caches its answers, so each query is computed once per class)
    _shared: dict = {}

    def _composed(self, mech):
        key = (type(self).__qualname__, mech)
        if key not in AccountantProperties._shared:
            AccountantProperties._shared[key] = self.make_accountant().compose(mech,
                                                                               count=self.count)
        return AccountantProperties._shared[key]

    def test_is_a_privacy_accountant(self):
        from sampledprv.core.contract import PrivacyAccountant
        assert isinstance(self.make_accountant(), PrivacyAccountant)

    def test_composition_is_recorded_in_order_with_counts_summed(self):
        a, b = self.gaussian(2.0), self.gaussian(3.0)
        acc = self.make_accountant().compose(a, 3).compose(b).compose(a, count=2)
        assert acc.composition == ((a, 5), (b, 1))

    def test_intervals_are_ordered(self):
        for mech in self.mechanisms:
            acc = self._composed(mech)
            for direction in (None, "remove", "add"):
                for d in self.deltas:
                    iv = acc.epsilon(d, direction=direction)
                    assert 0.0 <= iv.lower <= iv.estimate <= iv.upper, (mech, direction, d, iv)
                for e in self.epsilons:
                    iv = acc.delta(e, direction=direction)
                    assert 0.0 <= iv.lower <= iv.estimate <= iv.upper <= 1.0, (mech, direction, e)

    def test_epsilon_and_delta_are_monotone(self):
        """``epsilon(delta)`` does not increase with ``delta`` and ``delta(epsilon)`` does
        not increase with ``epsilon``: every end of the intervals."""
        for mech in self.mechanisms:
            acc = self._composed(mech)
            for direction in (None, "remove", "add"):
                ivs = [acc.epsilon(d, direction=direction) for d in self.deltas]
                for a, b in zip(ivs, ivs[1:]):
                    for end in ("lower", "estimate", "upper"):
                        x, y = getattr(a, end), getattr(b, end)
                        assert y <= x * (1 + self.rtol) + 1e-15, (mech, direction, end, x, y)
                ivs = [acc.delta(e, direction=direction) for e in self.epsilons]
                for a, b in zip(ivs, ivs[1:]):
                    for end in ("lower", "estimate", "upper"):
                        x, y = getattr(a, end), getattr(b, end)
                        assert y <= x * (1 + self.rtol) + 1e-15, (mech, direction, end, x, y)

    def test_epsilon_and_delta_are_consistent(self):
        r"""The exact curve lies in both intervals, so at ``x = epsilon(delta).upper`` the
        exact delta is at most ``delta`` (hence ``delta(x).lower <= delta``), and below
        ``epsilon(delta).lower`` it is above ``delta`` (hence ``delta(x).upper >= delta``)."""
        for mech in self.mechanisms:
            acc = self._composed(mech)
            for direction in (None, "remove", "add"):
                for d in self.deltas:
                    e = acc.epsilon(d, direction=direction)
                    if math.isfinite(e.upper):
                        assert acc.delta(e.upper, direction=direction).lower \
                            <= d * (1 + self.rtol), (mech, direction, d, e)
                    if e.lower > 0.0:
                        assert acc.delta(e.lower, direction=direction).upper \
                            >= d * (1 - self.rtol), (mech, direction, d, e)

    def test_no_direction_is_the_maximum_over_directions(self):
        for mech in self.mechanisms:
            acc = self._composed(mech)
            for query, xs in ((acc.epsilon, self.deltas), (acc.delta, self.epsilons)):
                for x in xs:
                    both = query(x)
                    rem, add = query(x, direction="remove"), query(x, direction="add")
                    for end in ("lower", "upper"):
                        want = max(getattr(rem, end), getattr(add, end))
                        assert getattr(both, end) == pytest.approx(want, rel=1e-9, abs=1e-15), \
                            (mech, query.__name__, x, end)

    def test_supports_agrees_with_compose(self):
        candidates = [*self.mechanisms, sp.Gaussian(1.0), sp.Laplace(1.0),
                      sp.RandomizedResponse(p=0.75),
                      sp.PoissonSubsampled(sp.Gaussian(1.0), 0.1),
                      sp.GeneralizedGaussianVector(3.0, 2.0, 4, 1.0),
                      "gaussian", None, 1.5, object()]
        for mech in candidates:
            supported = self.make_accountant().supports(mech)
            try:
                self.make_accountant().compose(mech)
                composed = True
            except (TypeError, ValueError):
                composed = False
            assert supported is composed, (mech, supported, composed)

    def test_settings_are_json_ready(self):
        import json
        for acc in (self.make_accountant(),
                    self.make_accountant().compose(self.mechanisms[0], count=self.count)):
            settings = acc.settings()
            assert isinstance(settings, dict) and isinstance(settings.get("type"), str)
            assert json.loads(json.dumps(settings)) == settings

    def test_describe_is_text(self):
        acc = self.make_accountant().compose(self.mechanisms[0], count=self.count)
        acc.epsilon(self.deltas[0])
        text = acc.describe()
        assert isinstance(text, str) and text.strip()

    def test_bad_direction_rejected(self):
        acc = self.make_accountant().compose(self.mechanisms[0], count=self.count)
        for bad in ("up", 3):
            with pytest.raises(ValueError, match="direction"):
                acc.epsilon(self.deltas[0], direction=bad)
            with pytest.raises(ValueError, match="direction"):
                acc.delta(self.epsilons[0], direction=bad)

    def test_bad_mechanism_rejected(self):
        for bad in ("gaussian", None, 1.5):
            with pytest.raises((TypeError, ValueError)):
                self.make_accountant().compose(bad)
