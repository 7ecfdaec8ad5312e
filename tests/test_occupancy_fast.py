"""The compiled, two-ended occupancy recursion."""

import itertools
import math

import numpy as np
import pytest

from sampledprv.rdp import allocation as ra
from sampledprv.rdp.occupancy import affordable, occupancy_log_moment


def _brute(log_m, T, k):
    a = log_m.size - 1
    subs = list(itertools.combinations(range(T), k))
    tot = 0.0
    for S in itertools.product(subs, repeat=a):
        c = np.bincount(np.concatenate(S), minlength=T)
        tot += math.exp(float(np.sum(log_m[c])))
    return math.log(tot / len(subs) ** a)


@pytest.mark.parametrize("T,k,a", [(3, 1, 3), (4, 2, 3), (5, 2, 4), (6, 3, 3), (7, 3, 3),
                                   (6, 6, 2), (7, 2, 4)])
def test_equals_brute_force_odd_and_even_columns(T, k, a):
    """Arbitrary weights M(c) (not Gaussian), odd and even T (the two halves differ by
    one column when T is odd): exact, raised by the stated margin only."""
    rng = np.random.default_rng(T * 100 + k * 10 + a)
    log_m = np.concatenate([[0.0], np.cumsum(rng.uniform(-0.2, 1.0, size=a))])
    brute = _brute(log_m, T, k)
    got = occupancy_log_moment(log_m, T, k)
    assert brute <= got <= brute + 1e-9 * max(1.0, abs(brute))


def test_order_eight_at_t100_k10_is_exact_and_consistent():
    """The target case: order 8 at T = 100, k = 10 is within the budget; the moment
    lies between the all-subsets-equal event and Hoeffding's comparison bound, and the
    log-moments (a - 1) D_a are convex in a (a property of every Renyi curve)."""
    from sampledprv.mechanisms import Gaussian
    g = Gaussian(0.5)
    T, k = 100, 10
    assert affordable(8, T, k)
    vals = [ra.remove_log_moment(a, T, k, g) for a in range(2, 9)]
    for a, v in zip(range(2, 9), vals):
        floor = -(a - 1) * math.log(math.comb(T, k)) + g.mu ** 2 * k * a * (a - 1) / 2
        assert v >= floor
    assert ra.remove_log_moment(8, T, k, g) < ra.log_multinomial_moment(
        np.array([0.5 * c * (c - 1) * g.mu ** 2 for c in range(81)]), T)
    logs = np.array([0.0] + vals)                     # (a - 1) D_a at a = 1..8
    assert np.all(np.diff(logs, 2) >= -1e-9)


def test_a_whole_rdp_curve_builds_each_table_once(monkeypatch):
    """An RDP curve asks orders 2..64 in turn; asking it twice must reuse every table
    (a cache of 8 entries rebuilt all 63 on every curve) and give the same moments."""
    from sampledprv.rdp import occupancy as occ
    built = []
    real = occ._build_table
    monkeypatch.setattr(occ, "_build_table", lambda a, k: built.append((a, k)) or real(a, k))
    monkeypatch.setattr(occ, "_TABLES", type(occ._TABLES)())
    log_m = lambda a: np.log1p(np.arange(a + 1.0)) * 0.3          # noqa: E731
    first = [occ.occupancy_log_moment(log_m(a), 8, 2) for a in range(2, 65)]
    assert len(built) == 63
    second = [occ.occupancy_log_moment(log_m(a), 8, 2) for a in range(2, 65)]
    assert len(built) == 63 and first == second
    assert sum(t[1].size for t in occ._TABLES.values()) <= occ.CACHE_ROWS
