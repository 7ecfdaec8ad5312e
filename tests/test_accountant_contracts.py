"""Every accountant inherits the abstract accountant test (tests/accountant_contract.py).

The analytic accountant (rebuilt curves) and the sampled accountant inherit it in
tests/test_accountant.py and tests/test_sampled_contract.py; here: the analytic
accountant in online mode (a planned horizon), the vector Generalized Gaussian
accountant (its PLD route for 1-D specs, its Renyi route for a GG vector) and the
shuffle accountant.  The last test finds every accountant class of the package by
discovery, so a new one without a contract test class fails it.
"""

from __future__ import annotations

import sampledprv as sp
from accountant_contract import AccountantContract, AccountantProperties


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


class TestShuffleAccountantContract(AccountantProperties):
    """Shuffled batches with one step per epoch: the record is in every epoch's only
    batch, so under zero-out both ends are those of the Gaussian mechanism (the attained
    pair and the deterministic-batch bound coincide)."""
    mechanisms = (sp.Shuffled(2.0, steps=1), sp.Shuffled(1.0, steps=8))

    def make_accountant(self):
        return sp.ShuffleAccountant(eps_error=0.01, delta_error=1e-12)

    def gaussian(self, sigma):
        return sp.Shuffled(sigma, steps=1)

    def other(self):
        return sp.Shuffled(5.0, steps=4)


def _accountant_classes() -> set:
    """Every concrete :class:`~sampledprv.core.contract.PrivacyAccountant` defined in the
    package, found by importing each of its modules (the ``torch`` subpackage too when
    torch is installed) and walking the subclasses."""
    import importlib
    import inspect
    import pkgutil

    import sampledprv
    from sampledprv.core.contract import PrivacyAccountant
    for info in pkgutil.walk_packages(sampledprv.__path__, "sampledprv."):
        if info.name.startswith("sampledprv.torch"):
            try:
                import torch  # noqa: F401
            except ImportError:
                continue
        importlib.import_module(info.name)
    found, todo = set(), [PrivacyAccountant]
    while todo:
        for sub in todo.pop().__subclasses__():
            todo.append(sub)
            if sub.__module__.startswith("sampledprv.") and not inspect.isabstract(sub):
                found.add(sub)
    return found


def _contract_classes() -> set:
    """Every loaded test class inheriting AccountantProperties with a concrete
    ``make_accountant``."""
    todo, found = [AccountantProperties], set()
    while todo:
        for sub in todo.pop().__subclasses__():
            todo.append(sub)
            if sub.make_accountant is not AccountantContract.make_accountant:
                found.add(sub)
    return found


def test_every_accountant_has_a_contract_test():
    """Each concrete PrivacyAccountant of the package (found by discovery, not listed) is
    covered by a test class inheriting AccountantProperties (the analytic one in
    test_accountant.py, the sampled one in test_sampled_contract.py, the others here)."""
    import test_accountant  # noqa: F401 - defines TestAccountantContract
    import test_sampled_contract  # noqa: F401 - defines TestSampledAccountantContract
    accountants = _accountant_classes()
    assert {sp.Accountant, sp.SampledAccountant, sp.VectorGGAccountant,
            sp.ShuffleAccountant} <= accountants       # the discovery finds what it should
    covered = {type(cls().make_accountant()) for cls in _contract_classes()}
    missing = {c.__qualname__ for c in accountants - covered}
    assert not missing, f"accountants without a contract test class: {sorted(missing)}"
