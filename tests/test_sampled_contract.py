"""The sampled accountant honours the same contract as the analytic one."""

from __future__ import annotations

import sampledprv as sp
from accountant_contract import AccountantProperties


class TestSampledAccountantContract(AccountantProperties):
    def make_accountant(self):
        # a small n keeps this fast; the contract allows an infinite upper bound, and the
        # bracket check holds with probability >= 1 - alpha
        return sp.SampledAccountant(n_samples=200_000, alpha=1e-6, seed=1, progress=False)


def test_sampled_accountant_refuses_multidimensional_gg_beta_not_2():
    import pytest
    acc = sp.SampledAccountant(n_samples=10_000, alpha=1e-3, seed=0, progress=False)
    with pytest.raises(ValueError, match="dimension"):
        acc.compose(sp.GeneralizedGaussian(3.0, 2.0, dimension=5), 2).epsilon(delta=0.1)
