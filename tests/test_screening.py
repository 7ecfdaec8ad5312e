"""Screening the dominated direction (analytic/accountant.py, ``Accountant._screened``).

A query over both directions of a long composition first reads every direction from a
screening curve (``_SCREEN_FACTOR`` times ``eps_error``) and builds at full accuracy only
the directions that can move the maximum.  The interval must be the one the full build
gives (lower, estimate and upper), the screened direction must really be dominated, and
every other path (one direction, the rest of the queries, copies) must see full curves.
"""

from __future__ import annotations

import copy
import pickle

import pytest

import sampledprv as sp
from sampledprv.analytic import accountant as acc_mod

DPSGD = sp.PoissonSubsampled(sp.Gaussian(0.8), q=4e-3)
K = 20000


@pytest.fixture(autouse=True)
def _screen_short_compositions(monkeypatch):
    """Screen from the multi-level path's 16,384 steps on (the default starts at 2^21,
    where it pays on two cores), so that these tests stay short."""
    monkeypatch.setattr(acc_mod, "_SCREEN_COUNT", 16384)


def _accountant(mech=DPSGD, k=K):
    return sp.Accountant(eps_error=0.01, delta_error=1e-10).compose(mech, k)


def _full(mech=DPSGD, k=K):
    acc = _accountant(mech, k)
    acc._build()                     # both directions at full accuracy: no screening
    return acc


def _ends(iv):
    return iv.lower, iv.estimate, iv.upper


@pytest.mark.parametrize("delta", [1e-5, 1e-8])
def test_epsilon_equals_the_full_build_and_screens_the_add_direction(delta):
    screened = _accountant().epsilon(delta)
    full = _full().epsilon(delta)
    assert _ends(screened) == _ends(full)
    assert screened.details["screened"] == {"add": pytest.approx(0.3)}
    assert "screened" not in full.details
    # the screened direction is dominated: its full-accuracy upper end is below the
    # interval's lower end
    add = _full().epsilon(delta, direction="add")
    assert add.upper <= screened.lower


@pytest.mark.parametrize("eps", [1.0, 3.0])
def test_delta_equals_the_full_build(eps):
    screened = _accountant().delta(eps)
    full = _full().delta(eps)
    assert _ends(screened) == _ends(full)
    assert set(screened.details["screened"]) <= {"add"}


@pytest.mark.parametrize("mech,delta", [
    (sp.PoissonSubsampled(sp.Gaussian(5.0), q=0.01), 1e-3),   # overlapping directions
    (sp.PoissonSubsampled(sp.Gaussian(20.0), q=0.5), 1e-5),   # 0.03 apart
])
def test_close_directions_are_both_refined(mech, delta):
    """Where the screening curves do not separate the directions, both are built at full
    accuracy and the interval is the full build's."""
    iv = _accountant(mech).epsilon(delta)
    assert iv.details["screened"] == {}
    assert _ends(iv) == _ends(_full(mech).epsilon(delta))


def test_one_direction_builds_only_that_one():
    acc = _accountant()
    add = acc.epsilon(1e-5, direction="add")
    assert set(acc._fine) == {"add"} and acc._curves is None
    assert _ends(add) == _ends(_full().epsilon(1e-5, direction="add"))
    # the rest of the curves are built when a query needs them
    both = acc.epsilon(1e-5)
    assert _ends(both) == _ends(_full().epsilon(1e-5))


def test_later_queries_and_copies_see_full_curves():
    acc = _accountant()
    acc.epsilon(1e-5)
    text = acc.describe()                       # builds the missing direction
    assert "directions remove, add" in text
    assert acc._curves is not None and set(acc._curves) == {"remove", "add"}
    for other in (copy.deepcopy(acc), pickle.loads(pickle.dumps(acc))):
        assert _ends(other.epsilon(1e-5)) == _ends(_full().epsilon(1e-5))


def test_compose_clears_the_screening_curves():
    acc = _accountant()
    acc.epsilon(1e-5)
    acc.compose(DPSGD, 5000)
    assert _ends(acc.epsilon(1e-5)) == _ends(_full(DPSGD, K + 5000).epsilon(1e-5))


def test_short_and_symmetric_compositions_are_not_screened(monkeypatch):
    short = sp.Accountant(eps_error=0.01, delta_error=1e-10).compose(DPSGD, 1000)
    assert "screened" not in short.epsilon(1e-5).details
    monkeypatch.setattr(acc_mod, "_SCREEN_COUNT", 2**21)             # the default
    assert "screened" not in _accountant().epsilon(1e-5).details
    sym = sp.Accountant(eps_error=0.02, delta_error=1e-10, merge_gaussians=False)
    sym.compose(sp.Gaussian(100.0), K)
    assert "screened" not in sym.epsilon(1e-5).details
