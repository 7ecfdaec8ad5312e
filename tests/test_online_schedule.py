"""Online accounting when the noise changes during training (issue 24, item 3): a new
mechanism wider than the online grid re-plans the grid instead of switching online
updates off, and switching them off (a grid beyond the online limit) warns once."""

from __future__ import annotations

import warnings

import pytest

import sampledprv as sp
from sampledprv.core.advice import AdvisedWarning


def _step(k):
    # sigma 1.0, then 0.8 from step 50, then 0.6 from step 100: each new mechanism is
    # wider than the grid planned for the first one (this switched online updates off)
    return sp.PoissonSubsampled(sp.Gaussian(1.0 - 0.2 * (k // 50)), q=0.001)


def test_a_wider_mechanism_replans_instead_of_switching_off():
    acc = sp.Accountant(horizon=10_000)
    with warnings.catch_warnings():
        warnings.simplefilter("error", AdvisedWarning)      # no "online off" warning
        for k in range(101):
            acc.compose(_step(k))
            if k in (0, 49, 50, 51, 100):
                iv = acc.epsilon(1e-5)
    text = acc.describe()
    assert "online updates: on" in text, text
    assert "one component spans" in text and "rebuilt at 51 mechanisms" in text, text
    ref = sp.Accountant()
    for k in range(101):
        ref.compose(_step(k))
    r = ref.epsilon(1e-5)
    assert iv.lower <= r.upper and r.lower <= iv.upper          # both certified: overlap
    assert abs(iv.estimate - r.estimate) <= 0.01


def test_online_off_warns_once_with_the_reason():
    # the online grid is sized for the horizon (10,000 steps on a fine mesh), a rebuild
    # for the one step composed so far fits max_grid_size
    acc = sp.Accountant(horizon=10_000, max_grid_size=2**12)
    acc.compose(sp.PoissonSubsampled(sp.Gaussian(1.0), q=0.01))
    with pytest.warns(AdvisedWarning, match="online updates are off") as rec:
        acc.epsilon(1e-5)
    assert "online limit" in str(rec[0].message) and "eps_error" in str(rec[0].message)
    with warnings.catch_warnings():
        warnings.simplefilter("error", AdvisedWarning)
        acc.compose(sp.PoissonSubsampled(sp.Gaussian(1.0), q=0.01))
        acc.epsilon(1e-5)                                    # no second warning
    assert "online updates: off" in acc.describe()
