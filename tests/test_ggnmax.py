"""GGNMax: numpy and torch private argmax, and its accounting (GG paper, Theorem 2)."""

import numpy as np
import pytest
import scipy.stats as st

import sampledprv as sp


@pytest.mark.parametrize("beta", [1.0, 1.5, 2.0, 3.0, 4.0])
def test_numpy_noise_is_gennorm(beta):
    x = sp.generalized_gaussian_noise(30_000, beta, 2.0, rng=123)
    assert st.kstest(x, st.gennorm(beta, scale=2.0).cdf).pvalue > 1e-3


def test_shapes_and_types():
    assert isinstance(sp.ggnmax([0, 50, 1], 2.0, 1.0, rng=0), int)
    assert sp.ggnmax([0, 50, 1], 2.0, 1.0, rng=0) == 1
    out = sp.ggnmax(np.array([[0, 0, 100], [100, 0, 0]]), 1.5, 1.0, rng=1)
    assert out.shape == (2,) and list(out) == [2, 0]
    with pytest.raises(ValueError, match="shape"):
        sp.ggnmax(np.zeros((2, 2, 2)), 2.0, 1.0)
    with pytest.raises(ValueError, match="beta"):
        sp.ggnmax([1, 2], 0.5, 1.0)
    with pytest.raises(ValueError, match="scale"):
        sp.ggnmax([1, 2], 2.0, 0.0)


def test_reproducible_and_noisy():
    votes = np.tile([10.0, 9.0, 0.0], (2000, 1))
    a = sp.ggnmax(votes, 2.0, 3.0, rng=5)
    assert np.array_equal(a, sp.ggnmax(votes, 2.0, 3.0, rng=5))
    # P(argmax = 0) for two close leaders: between 1/2 and 1
    frac = np.mean(a == 0)
    assert 0.5 < frac < 0.8


def test_uniform_on_ties():
    counts = np.bincount(sp.ggnmax(np.zeros((30_000, 4)), 3.0, 1.0, rng=2), minlength=4)
    assert st.chisquare(counts).pvalue > 1e-3


def test_matches_exact_two_class_probability():
    # P(argmax = 0) = P(Z1 - Z0 < gap); for beta=1 the difference of Laplaces has a closed form.
    gap, b = 1.0, 2.0
    hits = np.mean(sp.ggnmax(np.tile([gap, 0.0], (200_000, 1)), 1.0, b, rng=3) == 0)
    z = gap / b
    exact = 1 - 0.5 * np.exp(-z) * (1 + z / 2)
    assert hits == pytest.approx(exact, abs=4e-3)


def test_accounted_as_one_dimensional_gg():
    a = sp.Accountant().compose(sp.GGNMax(1.5, 2.0), count=20).epsilon(delta=1e-5)
    b = sp.Accountant().compose(sp.GeneralizedGaussian(1.5, 2.0), count=20).epsilon(delta=1e-5)
    assert (a.lower, a.estimate, a.upper) == pytest.approx((b.lower, b.estimate, b.upper))


def test_torch_ggnmax():
    torch = pytest.importorskip("torch")
    from sampledprv.torch import ggnmax as tggnmax
    votes = torch.tensor([[0.0, 0.0, 100.0], [100.0, 0.0, 0.0]])
    assert tggnmax(votes, 1.5, 1.0).tolist() == [2, 0]
    assert tggnmax(torch.tensor([0, 50, 1]), 2.0, 1.0).item() == 1
    g = lambda: torch.Generator().manual_seed(4)  # noqa: E731
    many = torch.zeros(20_000, 5)
    a, b = tggnmax(many, 3.0, 1.0, generator=g()), tggnmax(many, 3.0, 1.0, generator=g())
    assert torch.equal(a, b)
    assert st.chisquare(np.bincount(a.numpy(), minlength=5)).pvalue > 1e-3
    close = torch.tensor([10.0, 9.0, 0.0]).repeat(5000, 1)
    frac_t = (tggnmax(close, 2.0, 3.0, generator=g()) == 0).float().mean().item()
    frac_n = np.mean(sp.ggnmax(close.numpy(), 2.0, 3.0, rng=0) == 0)
    assert frac_t == pytest.approx(frac_n, abs=0.04)
    with pytest.raises(ValueError, match="shape"):
        tggnmax(torch.zeros(2, 2, 2), 2.0, 1.0)


def test_import_sampledprv_does_not_import_torch():
    import subprocess
    import sys
    code = "import sys, sampledprv; assert 'torch' not in sys.modules; sampledprv.ggnmax([1, 2], 2.0, 1.0)"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_vote_change_neighbours_need_two_fold_accounting():
    """Two classes, a teacher moves its vote: the argmax release's delta(0) (its TV
    distance, maximised over the vote gap) exceeds the 1-D GGNMax bound and is covered by
    two composed 1-D GG mechanisms."""
    s = 2.0
    gaps = np.linspace(-5, 7, 2001)
    tv = (st.norm.cdf(gaps / s) - st.norm.cdf((gaps - 2) / s)).max()  # beta=2: Z_a - Z_b ~ N(0, s^2)
    one = sp.Accountant().compose(sp.GGNMax(2.0, s)).delta(epsilon=0.0)
    two = sp.Accountant().compose(sp.GeneralizedGaussian(2.0, s), count=2).delta(epsilon=0.0)
    assert tv > one.upper + 0.05
    assert two.lower - 1e-3 <= tv <= two.upper
