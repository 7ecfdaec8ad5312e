"""The sampled accountant honours the same contract as the analytic one."""

from __future__ import annotations

import sampledprv as sp
from accountant_contract import AccountantContract


class TestSampledAccountantContract(AccountantContract):
    def make_accountant(self):
        # a small n keeps this fast; the contract allows an infinite upper bound, and the
        # bracket check holds with probability >= 1 - alpha
        return sp.SampledAccountant(n_samples=200_000, alpha=1e-6, seed=1, progress=False)
