"""Tail weights of equally private GG mechanisms (GG paper, App. B.5)."""

import numpy as np
import pytest
import scipy.stats as st

import sampledprv as sp


@pytest.mark.parametrize("beta", [1.0, 1.5, 2.0, 3.0, 4.0])
def test_tail_weight_matches_scipy(beta):
    t = np.array([0.0, 0.3, 1.0, 2.5, 6.0])
    np.testing.assert_allclose(sp.tail_weight(beta, 1.3, t),
                               2 * st.gennorm(beta, scale=1.3).sf(t), rtol=1e-10)
    assert sp.tail_weight(beta, 1.0, -1.0) == 1.0
    far = 45.0 ** (1 / beta)  # weight about 1e-20: 2*sf computed as 1 - cdf would be 0
    w = sp.tail_weight(beta, 1.0, far)
    assert w == pytest.approx(2 * st.gennorm(beta).sf(far), rel=1e-8) and 0 < w < 1e-18


def test_bad_input():
    with pytest.raises(ValueError, match="beta"):
        sp.tail_weight(0.9, 1.0, 1.0)
    with pytest.raises(ValueError, match="scale"):
        sp.tail_weight(2.0, -1.0, 1.0)
    with pytest.raises(ValueError, match="q"):
        sp.calibrated_tail_weights([2.0], [1.0], epsilon=1.0, delta=1e-5, q=0.0)


def test_calibrated_table_single_shot():
    table = sp.calibrated_tail_weights([1.0, 1.5, 2.0, 3.0], [1.0, 2.0, 4.0], epsilon=1.5, delta=1e-5)
    assert table.weights.shape == (4, 3)
    assert np.all(np.diff(table.weights, axis=1) < 0)  # decreasing in tau
    for iv in table.intervals:
        assert iv.upper <= 1.5 and iv.upper >= 0.99 * 1.5
    # one-shot: Laplace has the lightest tails at this guarantee (paper Figure 5, left)
    assert list(table.best_beta()) == [1.0, 1.0, 1.0]
    assert "P(|X|>2)" in table.format()


def test_plot(tmp_path):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    table = sp.calibrated_tail_weights([1.0, 2.0], [1.0, 2.0], epsilon=1.0, delta=1e-5)
    ax = sp.plot_tail_weights(table)
    ax.figure.savefig(tmp_path / "tails.png")
    assert (tmp_path / "tails.png").stat().st_size > 0
