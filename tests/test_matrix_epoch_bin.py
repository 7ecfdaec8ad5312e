"""Matrix mechanism with the bin redrawn every epoch (EpochBin): the run is the
composition of its epochs when C is block-diagonal by epoch."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import sampledprv as sp
from sampledprv.batch.matrix_mechanism import MatrixMechanism
from sampledprv.rdp.divergence import renyi_divergence


def _block(b, c_col):
    B = np.zeros((b, b))
    for l, c in enumerate(c_col):
        B += c * np.eye(b, k=-l)
    return B


B1 = _block(4, (1.0, 0.5))
B2 = _block(4, (1.0, 0.3, 0.2))
RUN = MatrixMechanism(1.5, 12, sp.EpochBin(4),
                      matrix=np.block([[B1, np.zeros((4, 8))],
                                       [np.zeros((4, 4)), B2, np.zeros((4, 4))],
                                       [np.zeros((4, 8)), B1]]))
ONE1 = MatrixMechanism(1.5, 4, sp.FixedBin(4), matrix=B1)
ONE2 = MatrixMechanism(1.5, 4, sp.FixedBin(4), matrix=B2)


def test_refusals_name_the_fix():
    with pytest.raises(ValueError, match=r"block-diagonal by epoch.*matrix="):
        MatrixMechanism(1.0, 12, sp.EpochBin(4), c_col=(1.0, 0.5))
    with pytest.raises(ValueError, match=r"whole epochs.*steps=12 or 16"):
        MatrixMechanism(1.0, 13, sp.EpochBin(4), c_col=(1.0,))
    with pytest.raises(ValueError, match="bins"):
        sp.EpochBin(0)
    # one epoch: any band stays inside it
    assert MatrixMechanism(1.0, 4, sp.EpochBin(4), c_col=(1.0, 0.5)).composition_parts()


def test_parts_and_renyi_are_the_epochs_composition():
    parts = dict(RUN.composition_parts())
    assert parts == {ONE1: 2, ONE2: 1}
    assert MatrixMechanism(1.5, 4, sp.FixedBin(4), matrix=B1).composition_parts() is None
    for a in (2.0, 3.0, 4.5, 9.0):
        for d in ("remove", "add"):
            want = 2 * ONE1.renyi(a, d) + ONE2.renyi(a, d)
            assert RUN.renyi(a, d) == pytest.approx(want, rel=1e-9)   # rounded up
            assert RUN.renyi(a, d) >= want


def test_pointwise_loss_is_the_sum_over_epochs():
    rng = np.random.default_rng(0)
    for _ in range(20):
        y = rng.normal(0.4, 1.5, 12)
        want = ONE1.privacy_loss_at(y[:4]) + ONE2.privacy_loss_at(y[4:8]) + \
            ONE1.privacy_loss_at(y[8:])
        assert RUN.privacy_loss_at(y) == pytest.approx(want, abs=1e-12)


@pytest.mark.parametrize("direction", ["remove", "add"])
def test_whole_run_sampler_equals_the_epochs_in_law(direction):
    x = RUN.numpy_loss_sampler(direction)(np.random.default_rng(1), 60_000)
    y = sum(s.numpy_loss_sampler(direction)(np.random.default_rng(10 + k), 60_000)
            for k, s in enumerate((ONE1, ONE2, ONE1)))
    assert stats.ks_2samp(x, y).pvalue > 1e-3
    # a different run (one epoch fewer) is told apart: the test can fail
    z = sum(s.numpy_loss_sampler(direction)(np.random.default_rng(20 + k), 60_000)
            for k, s in enumerate((ONE1, ONE2)))
    assert stats.ks_2samp(x, z).pvalue < 1e-6


def test_dp_sgd_epoch_bin_is_balls_and_bins_per_epoch():
    """c_col = [1]: E epochs of BallsAndBins(sigma, b), Renyi bounds alike (both exact)."""
    run = MatrixMechanism(1.0, 12, sp.EpochBin(4), c_col=(1.0,))
    bb = sp.BallsAndBins(1.0, 4)
    for a in (2, 3, 5):
        for d in ("remove", "add"):
            assert run.renyi(a, d) == pytest.approx(3 * renyi_divergence(bb, a, d), rel=1e-8)


def test_accountant_composes_the_epochs():
    def acc():
        return sp.SampledAccountant(20_000, alpha=1e-3, seed=1, progress=False)
    a = acc().compose(RUN)
    assert a.composition == ((ONE1, 2), (ONE2, 1))
    b = acc().compose(ONE1, 2).compose(ONE2)
    assert a.epsilon(1e-5).upper == b.epsilon(1e-5).upper
    two = acc().compose(MatrixMechanism(1.5, 8, sp.EpochBin(4), matrix=np.kron(np.eye(2), B1)),
                        count=3)
    assert two.composition == ((ONE1, 6),)
    lo, hi = two.composition[0][0].tilted_law(3, 6).log_scale
    assert lo == pytest.approx(6 * ONE1.tilted_law(3).log_scale[0], rel=1e-12)
    with pytest.raises(ValueError, match="composition_parts"):
        acc().compose(RUN, renyi={2.0: 1.0})


def test_product_tilted_law_of_distinct_epochs():
    law = RUN.tilted_law(3)
    parts = [ONE1.tilted_law(3, 2), ONE2.tilted_law(3)]
    assert law.log_scale[0] == pytest.approx(sum(p.log_scale[0] for p in parts), rel=1e-12)
    assert law.tv == pytest.approx(sum(p.tv for p in parts))
    # the identity Z_a E_{P_a}[e^{-(a-1)L} 1{L > t}] = P(L > t) against plain draws
    L, W = law.draw(np.random.default_rng(2), 200_000)
    plain = RUN.numpy_loss_sampler("remove")(np.random.default_rng(3), 400_000)
    est = math.exp(0.5 * sum(law.log_scale)) * np.exp(W) * (L > 2.0)
    p_hat = float(np.mean(plain > 2.0))
    se = math.hypot(float(np.std(est)) / math.sqrt(L.size),
                    math.sqrt(p_hat * (1 - p_hat) / plain.size))
    assert abs(float(np.mean(est)) - p_hat) < 5 * se


def test_command_line_kind():
    from sampledprv.cli.mechanism_strings import format_mechanism, parse_mechanism
    s = "bandmf c_col=1 sigma=1 steps=12 epoch_bins=4"
    spec = parse_mechanism(s).build()
    assert spec == MatrixMechanism(1.0, 12, sp.EpochBin(4), c_col=(1.0,))
    assert format_mechanism(spec) == s
    with pytest.raises(ValueError, match="p= goes with"):
        parse_mechanism("bandmf c_col=1 sigma=1 steps=12 epoch_bins=4 p=0.5").build()
    with pytest.raises(ValueError, match="block-diagonal"):
        parse_mechanism("bandmf c_col=1,0.5 sigma=1 steps=12 epoch_bins=4").build()
