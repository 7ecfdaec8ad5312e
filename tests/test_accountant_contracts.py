"""Every accountant inherits the abstract accountant test (tests/accountant_contract.py).

The analytic accountant (rebuilt curves) and the sampled accountant inherit it in
tests/test_accountant.py and tests/test_sampled_contract.py; here: the analytic
accountant in online mode (a planned horizon) and the vector Generalized Gaussian
accountant (its PLD route for 1-D specs, its Renyi route for a GG vector).
"""

from __future__ import annotations

import sampledprv as sp
from accountant_contract import AccountantProperties


class TestOnlineAccountantContract(AccountantProperties):
    def make_accountant(self):
        return sp.Accountant(eps_error=0.01, delta_error=1e-12, horizon=64)


class TestVectorGGAccountantContract(AccountantProperties):
    mechanisms = (sp.Gaussian(2.0), sp.GeneralizedGaussianVector(3.0, 2.0, 4, 1.0))
    # the Renyi route builds a PLD lower bound per spread and query: fewer points, coarser
    deltas = (1e-6, 1e-2)
    epsilons = (0.5, 2.5)

    def make_accountant(self):
        return sp.VectorGGAccountant(eps_error=0.05, delta_error=1e-10)


def test_every_accountant_has_a_contract_test():
    """Each concrete PrivacyAccountant of the package is covered by a subclass of
    AccountantProperties (the sampled one in test_sampled_contract.py)."""
    import test_accountant
    import test_sampled_contract
    covered = {type(cls().make_accountant()) for cls in (
        test_accountant.TestAccountantContract, test_sampled_contract.TestSampledAccountantContract,
        TestOnlineAccountantContract, TestVectorGGAccountantContract)}
    assert covered == {sp.Accountant, sp.SampledAccountant, sp.VectorGGAccountant}
