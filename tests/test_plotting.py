"""sampledprv.plotting: lazy matplotlib, curve data, envelopes, figures."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from scipy import stats

import sampledprv as sp
from sampledprv import plotting
from sampledprv.sampled import EmpiricalPRV, LossHistogram

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def test_import_does_not_import_matplotlib():
    code = ("import sys, sampledprv, sampledprv.plotting as p\n"
            "acc = sampledprv.Accountant().compose(sampledprv.Gaussian(2.0), 3)\n"
            "c = p.privacy_curve(acc, [0.0, 1.0])\n"
            "assert 'matplotlib' not in sys.modules, 'matplotlib imported eagerly'\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr


@pytest.fixture(scope="module")
def dpsgd():
    return sp.Accountant().compose(sp.PoissonSubsampled(sp.Gaussian(1.0), 0.01), 1000)


def test_privacy_curve_data(dpsgd):
    eps = np.linspace(0, 3, 13)
    c = plotting.privacy_curve(dpsgd, eps)
    assert c.epsilons.shape == c.lower.shape == c.estimate.shape == c.upper.shape == (13,)
    assert np.all(c.lower <= c.estimate) and np.all(c.estimate <= c.upper)
    assert np.all(np.diff(c.upper) < 0)
    assert c.certification == "deterministic" and c.confidence == 1.0
    iv = dpsgd.delta(epsilon=1.5)
    assert c.upper[6] == pytest.approx(iv.upper) and c.lower[6] == pytest.approx(iv.lower)


@pytest.mark.parametrize("bad", [[], [-1.0], [float("nan")], [[0.1, 0.2]]])
def test_privacy_curve_rejects_bad_grid(dpsgd, bad):
    with pytest.raises(ValueError):
        plotting.privacy_curve(dpsgd, bad)


def test_plot_privacy_curve(dpsgd, tmp_path):
    ax = plotting.plot_privacy_curve(dpsgd, np.linspace(0, 4, 21), delta=1e-5, title="t",
                                     label="DP-SGD")
    assert ax.get_yscale() == "log" and ax.get_xlabel() == "epsilon"
    assert ax.collections, "the certified band is drawn as a filled area"
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "DP-SGD" in labels and any("deterministic" in t for t in labels)
    f = tmp_path / "c.png"
    ax.figure.savefig(f)
    assert f.read_bytes()[:8] == PNG
    with pytest.raises(ValueError, match="epsilons"):
        plotting.plot_privacy_curve(dpsgd)


def test_plot_two_curves_on_one_axes(dpsgd):
    other = sp.Accountant().compose(sp.PoissonSubsampled(sp.Gaussian(1.5), 0.01), 1000)
    eps = np.linspace(0, 3, 11)
    ax = plotting.plot_privacy_curve(plotting.privacy_curve(dpsgd, eps), label="sigma=1")
    plotting.plot_privacy_curve(plotting.privacy_curve(other, eps), ax=ax, label="sigma=1.5",
                                logy=False)
    assert len(ax.collections) == 2


def _gaussian_hist(n: int, mu: float, seed: int) -> LossHistogram:
    """Histogram of n draws of the Gaussian PRV N(mu^2/2, mu^2) on [-6, 8) (1400 bins)."""
    y = np.random.default_rng(seed).normal(mu * mu / 2, mu, n)
    lo, h, bins = -6.0, 0.01, 1400
    counts = np.histogram(y, bins=bins, range=(lo, lo + bins * h))[0].astype(np.int64)
    below = int(np.sum(y < lo))
    above = n - below - int(counts.sum())
    return LossHistogram(counts, below, above, 0, 0, n, lo, h)


def test_loss_tail_envelopes_bracket_truth():
    mu, n, alpha = 1.0, 200_000, 1e-6
    hist = _gaussian_hist(n, mu, seed=5)
    t = plotting.loss_tail_envelopes(hist, alpha)
    assert t.edges.shape == t.upper.shape == t.lower.shape == t.empirical.shape == (1401,)
    assert np.all(t.lower <= t.empirical + 1e-15) and np.all(t.empirical <= t.upper + 1e-15)
    assert np.all(np.diff(t.upper) <= 1e-15) and np.all(np.diff(t.lower) <= 1e-15)
    assert t.p_inf_upper > 0 and t.upper[-1] >= t.p_inf_upper
    assert t.p_inf_upper == pytest.approx(np.log((2 * 1400 + 3) / alpha) / n, rel=0.05)
    truth = stats.norm(mu * mu / 2, mu).sf(t.edges)
    assert np.all(t.lower <= truth) and np.all(truth <= t.upper)


def test_plot_loss_histogram_from_empirical(tmp_path):
    hist = _gaussian_hist(100_000, 1.0, seed=1)
    emp = EmpiricalPRV(hist, None, name="gauss")
    axes = plotting.plot_loss_histogram(emp, reference=sp.Gaussian(1.0), alpha=1e-6,
                                        title="Gaussian mu=1")
    assert len(axes) == 2
    a0, a1 = axes
    assert a1.get_yscale() == "log" and a1.get_ylabel() == "P[Y >= t]"
    texts = [x.get_text() for x in a1.get_legend().get_texts()]
    assert any("exact tail" in x for x in texts) and any("envelopes" in x for x in texts)
    assert any("exact density" in x.get_text() for x in a0.get_legend().get_texts())
    f = tmp_path / "h.png"
    a0.figure.savefig(f)
    assert f.read_bytes()[:8] == PNG
    # a bare LossHistogram works too, without a reference
    plotting.plot_loss_histogram(hist)


def test_plot_loss_histogram_from_sampled_accountant():
    mech = sp.PoissonSubsampled(sp.Laplace(1.0), 0.2)
    acc = sp.SampledAccountant(n_samples=50_000, alpha=1e-4, seed=0, progress=False)
    acc.compose(mech, 3)
    axes = plotting.plot_loss_histogram(acc, direction="add")
    assert "add" in axes[0].get_xlabel()
    acc.compose(sp.Gaussian(3.0), 2)
    with pytest.raises(ValueError, match="mechanism="):
        plotting.plot_loss_histogram(acc)
    plotting.plot_loss_histogram(acc, mechanism=sp.Gaussian(3.0))


def test_plot_loss_histogram_rejects_other_sources():
    with pytest.raises(ValueError, match="SampledAccountant"):
        plotting.plot_loss_histogram(object())


def test_tail_weight_plot_is_reexported():
    assert plotting.plot_tail_weights is sp.plot_tail_weights
