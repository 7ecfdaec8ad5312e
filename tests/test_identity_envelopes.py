"""The two directions' envelopes joined by the change of measure
(sampled/certification/identity_envelopes.py): the join's curve lies above the exact
curve and the meet's below, on laws with known curves; coverage over 300 seeds at
alpha = 0.05 on pairs with exact answers; built-in specs are untouched, user pairs are
joined by default."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import special, stats

import sampledprv as sp
from sampledprv.engine import LatticePMF, compose_lattices
from sampledprv.engine.curve import PrivacyCurve
from sampledprv.mechanisms.relations import privacy_loss
from sampledprv.sampled.certification.identity_envelopes import join_upper, meet_lower

ALPHA = 0.05


def curve(pmf: LatticePMF, eps: np.ndarray) -> np.ndarray:
    """H(e^eps) = p_inf + sum_{l > eps} p (1 - e^{eps - l}) of a lattice law."""
    v, p = pmf.values, pmf.probs
    return np.array([pmf.p_inf + float(np.sum(p[v > e] * -np.expm1(e - v[v > e])))
                     for e in eps])


def banded(cdf, lo: float, hi: float, h: float, shift: float, band: float):
    """A stochastically larger (U) and a smaller (D) lattice law of ``cdf`` on
    ``shift + j h``: survival ``S`` raised / lowered by ``band * sqrt(S (1 - S))`` (the
    shape of the Clopper-Pearson envelopes), then rounded up / down to the lattice."""
    j0 = int(math.floor((lo - shift) / h))
    t = shift + h * np.arange(j0, j0 + int((hi - lo) / h) + 3)
    surv = 1.0 - cdf(np.nextafter(t, -np.inf))                  # P[L >= t_j]
    su = np.minimum(1.0, surv + band * np.sqrt(surv * (1.0 - surv)))
    up = np.empty(t.size)
    up[0], up[1:] = 1.0 - su[0], su[:-1] - su[1:]               # rounded up
    U = LatticePMF(np.clip(up, 0, None), j0, h, shift=shift, p_inf=float(su[-1]))
    s_gt = 1.0 - cdf(t)
    sd = np.maximum(0.0, s_gt - band * np.sqrt(s_gt * (1.0 - s_gt)))   # P[L > t_j] lowered
    low = np.empty(t.size)
    low[:-1], low[-1] = sd[:-1] - sd[1:], sd[-1]                # rounded down
    return U, LatticePMF(np.clip(low, 0, None), j0, h, shift=shift, p_inf=0.0)


def test_join_and_meet_bracket_a_gaussian_curve_and_fix_the_mean():
    mu, band = 0.1, 5e-3
    cdf = stats.norm(mu * mu / 2, mu).cdf            # both directions: N(mu^2/2, mu^2)
    U, D = banded(cdf, -0.8, 0.8, 0.0001, 0.00004, band)
    J, M = join_upper(U, U), meet_lower(D, D)
    eps = np.linspace(-0.6, 0.6, 241)
    exact = special.ndtr(-eps / mu + mu / 2) - np.exp(eps) * special.ndtr(-eps / mu - mu / 2)
    hj, hm, hu, hd = curve(J, eps), curve(M, eps), curve(U, eps), curve(D, eps)
    assert np.all(hj >= exact - 1e-12) and np.all(hm <= exact + 1e-12)
    assert np.all(hj <= hu + 1e-12) and np.all(hm >= hd - 1e-12)    # never worse
    # valid pair: P-mass 1, Q-mass at most 1
    assert abs(J.probs.sum() + J.p_inf - 1.0) < 1e-12
    assert float(np.sum(J.probs * np.exp(-J.values))) <= 1.0 + 1e-12
    # the band moved U's mass up at every threshold (its mean by about band * range);
    # the join spreads it both ways with about the true mean (the mesh's rounding left)
    mean = mu * mu / 2

    def m(p):
        return float(np.sum(p.values * p.probs) / p.probs.sum())
    assert m(U) - mean > 5e-4 and abs(m(J) - mean) < 0.15 * (m(U) - mean)
    # one step gains little (each eps has its own worst case); 400 composed steps gain
    # a lot: exact <= composed J <= composed U, the error cut at least by half
    k, e = 400, 4.0
    mk = mu * math.sqrt(k)
    ex = special.ndtr(-e / mk + mk / 2) - math.exp(e) * special.ndtr(-e / mk - mk / 2)

    def composed(p):
        c = compose_lattices([(p, k)], tail_mass=1e-16)
        err = c.spill_upper + c.spill_lower + c.numeric_error
        return PrivacyCurve(c.values, c.probs, c.p_inf).delta(e), err
    (cu, eu), (cj, ej), (cd, _), (cm, _) = (composed(p) for p in (U, J, D, M))
    assert cd <= cm <= ex <= cj + ej and cj <= cu + eu
    assert cj - ex < 0.5 * (cu - ex) and ex - cm < 0.5 * (ex - cd)


@pytest.mark.parametrize("band", [1e-3, 0.0])
@pytest.mark.parametrize("add_shift", [-0.0014, -0.0012])
def test_join_and_meet_of_an_asymmetric_pair_on_two_lattices(band, add_shift):
    """Poisson-subsampled Gaussian (q = 0.3, mu = 1): the two directions' laws differ
    and live on lattices with different shifts (the mirrored atoms are rounded; with
    no band and a mirrored lattice just above / below this one, a rounding the wrong
    way shows)."""
    mech = sp.PoissonSubsampled(sp.Gaussian(1.0), 0.3)
    exact = sp.Accountant(eps_error=1e-5, delta_error=1e-12).compose(mech)
    laws = {d: privacy_loss(mech, d) for d in ("remove", "add")}
    env = {"remove": banded(laws["remove"].cdf, -1.5, 6.0, 0.004, 0.0013, band),
           "add": banded(laws["add"].cdf, -6.0, 1.5, 0.004, add_shift, band)}
    eps = np.linspace(-1.0, 2.5, 141)
    for d, o in (("remove", "add"), ("add", "remove")):
        (U, D), (Uo, Do) = env[d], env[o]
        J, M = join_upper(U, Uo), meet_lower(D, Do)
        # exact bracket; below eps = 0 from the other direction: 1 - g + g H_Q(1/g)
        ref = np.array([(lambda r: (r.lower, r.upper))(exact.delta(float(e), direction=d))
                        if e >= 0 else (lambda r, g: (1 - g + g * r.lower, 1 - g + g * r.upper))(
                            exact.delta(float(-e), direction=o), math.exp(e)) for e in eps])
        assert np.all(curve(J, eps) >= ref[:, 0] - 1e-12), d
        assert np.all(curve(M, eps) <= ref[:, 1] + 1e-12), d
        assert np.all(curve(J, eps) <= curve(U, eps) + 1e-12)
        assert np.all(curve(M, eps) >= curve(D, eps) - 1e-12)


def gauss_pair(mu: float, symmetric: bool = False) -> sp.LogDensityPair:
    """N(1, s^2) against N(0, s^2), s = 1/mu, as a user writes it (no Renyi bound)."""
    s = 1.0 / mu
    return sp.LogDensityPair(
        logp=lambda w: -0.5 * ((w - 1.0) / s) ** 2, logq=lambda w: -0.5 * (w / s) ** 2,
        sample_p=lambda r, n: 1.0 + s * r.standard_normal(n),
        sample_q=lambda r, n: s * r.standard_normal(n), name=f"gauss{mu:g}",
        symmetric=symmetric)


def subsampled_pair(q: float) -> sp.LogDensityPair:
    """The Poisson-subsampled unit Gaussian, P = (1-q) N(0,1) + q N(1,1), Q = N(0,1)."""
    c = -0.5 * math.log(2 * math.pi)
    return sp.LogDensityPair(
        logp=lambda w: c + np.logaddexp(math.log1p(-q) - 0.5 * w ** 2,
                                        math.log(q) - 0.5 * (w - 1.0) ** 2),
        logq=lambda w: c - 0.5 * w ** 2,
        sample_p=lambda r, n: r.standard_normal(n) + (r.random(n) < q),
        sample_q=lambda r, n: r.standard_normal(n), name=f"subsampled{q:g}")


def _coverage(pair, mech, k, eps, seeds=300, n=2000, bins=256):
    exact = sp.Accountant(eps_error=1e-5, delta_error=1e-12).compose(mech, k)
    truth = {d: exact.delta(eps, direction=d) for d in ("remove", "add")}
    miss = {"interval": 0, "joined": 0, "envelopes": 0}
    width = {"joined": 0.0, "envelopes": 0.0}
    for seed in range(seeds):
        acc = sp.SampledAccountant(n, alpha=ALPHA, seed=seed, bins=bins, progress=False,
                                   join_directions=True).compose(pair, k)
        for d, t in truth.items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                iv = acc.delta(eps, direction=d)
            rep = iv.details["identity_join"]
            for name, (lo, up) in (("interval", (iv.lower, iv.upper)),
                                   ("joined", rep["joined"]),
                                   ("envelopes", rep["envelopes"])):
                miss[name] += up < t.lower or lo > t.upper
            width["joined"] += rep["joined"][1] - rep["joined"][0]
            width["envelopes"] += rep["envelopes"][1] - rep["envelopes"][0]
    return miss, width


@pytest.mark.parametrize("case", ["gaussian", "subsampled"])
def test_coverage_of_the_joined_interval(case):
    """300 seeds, alpha = 0.05, both directions: the joined bracket (and the interval,
    the better end of both) misses the exact delta no more often than Binomial(600,
    alpha) allows (one-sided test at level 0.001), and it is narrower on average
    (measured: 0.73 and 0.83 of the envelopes' mean width)."""
    if case == "gaussian":
        pair, mech, k, eps, ratio = gauss_pair(0.5), sp.Gaussian(2.0), 4, 1.0, 0.8
    else:
        pair, mech, k, eps, ratio = (subsampled_pair(0.3),
                                     sp.PoissonSubsampled(sp.Gaussian(1.0), 0.3), 3, 0.5,
                                     0.9)
    miss, width = _coverage(pair, mech, k, eps)
    for name, m in miss.items():
        assert stats.binomtest(m, 600, ALPHA, alternative="greater").pvalue > 1e-3, \
            (name, miss)
    assert width["joined"] < ratio * width["envelopes"], width


def test_built_in_specs_are_untouched_and_user_pairs_joined_by_default():
    kw = dict(alpha=1e-3, seed=3, bins=256, progress=False)
    a = sp.SampledAccountant(5000, join_directions=False, **kw).compose(
        sp.Gaussian(2.0), 3).epsilon(1e-2)
    b = sp.SampledAccountant(5000, **kw).compose(sp.Gaussian(2.0), 3).epsilon(1e-2)
    assert (a.lower, a.estimate, a.upper) == (b.lower, b.estimate, b.upper)
    assert "identity_join" not in b.details and a.method == b.method
    c = sp.SampledAccountant(5000, join_directions=False, **kw).compose(
        gauss_pair(0.5), 3).epsilon(1e-2)
    d = sp.SampledAccountant(5000, **kw).compose(gauss_pair(0.5), 3).epsilon(1e-2)
    assert "identity_join" not in c.details and "change of measure" not in c.method
    assert d.details["identity_join"]["envelopes"] == (c.lower, c.upper)
    assert d.upper <= c.upper and d.lower >= c.lower and d.width < c.width
    assert "change of measure" in d.method


def test_mixed_composition_joins_only_the_user_pair():
    """A built-in spec next to a user pair keeps its envelopes; the bracket still
    holds (exact: two Gaussians of mu 0.5 and a Gaussian of sigma 2 = mu 0.5)."""
    acc = sp.SampledAccountant(20_000, alpha=1e-3, seed=5, bins=256, progress=False,
                               join_directions=True)
    acc.compose(gauss_pair(0.5), 2).compose(sp.Gaussian(2.0), 2)
    iv = acc.delta(1.0)
    exact = sp.Accountant(eps_error=1e-5).compose(sp.Gaussian(2.0), 4).delta(1.0)
    assert iv.lower <= exact.estimate <= iv.upper
    rep = iv.details["identity_join"]
    assert rep["joined"][1] - rep["joined"][0] < rep["envelopes"][1] - rep["envelopes"][0]


def test_a_symmetric_pair_is_joined_with_itself():
    """One histogram for both directions (the user's declaration): the join mirrors it."""
    acc = sp.SampledAccountant(20_000, alpha=1e-3, seed=6, bins=256, progress=False,
                               join_directions=True).compose(gauss_pair(0.5, True), 4)
    iv = acc.delta(1.0)
    exact = sp.Accountant(eps_error=1e-5).compose(sp.Gaussian(2.0), 4).delta(1.0)
    assert iv.details["directions"] == ("remove",)
    assert iv.lower <= exact.estimate <= iv.upper
    rep = iv.details["identity_join"]
    assert rep["upper"] and rep["lower"]
    assert rep["joined"][1] - rep["joined"][0] < rep["envelopes"][1] - rep["envelopes"][0]


def test_a_join_that_cannot_be_built_keeps_the_envelopes_and_says_so(monkeypatch):
    import sampledprv.sampled.certification.identity_envelopes as ie
    monkeypatch.setattr(ie, "MAX_JOIN_POINTS", 8)
    kw = dict(alpha=1e-3, seed=3, bins=256, progress=False)
    c = sp.SampledAccountant(5000, **kw).compose(gauss_pair(0.5), 3).epsilon(1e-2)
    d = sp.SampledAccountant(5000, join_directions=True, **kw).compose(
        gauss_pair(0.5), 3).epsilon(1e-2)
    assert (d.lower, d.upper) == (c.lower, c.upper) and "change of measure" not in d.method
    notes = d.details["identity_join_notes"]
    assert any("upper envelope kept (joint lattice too large" in n for n in notes)
    assert any("lower envelope kept (joint lattice too large" in n for n in notes)
