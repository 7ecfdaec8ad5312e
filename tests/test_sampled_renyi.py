"""Renyi tail bounds and loss ranges in the sampled accountant.

The closed forms used here: for the Gaussian pair (N(0, 1), N(mu, 1)) both Renyi
divergences are ``order * mu^2 / 2``; for the Laplace pair with scale ``b`` and
sensitivity 1 (Mironov 2017, Proposition 6)
``D = log(order/(2 order - 1) e^{(order-1)/b} + (order-1)/(2 order - 1) e^{-order/b})/(order-1)``.
"""

import json
import math
import warnings

import numpy as np
import pytest
from scipy import integrate, stats

import sampledprv as sp
from sampledprv.analytic.accountant import Accountant
from sampledprv.mechanisms.relations import privacy_loss
from sampledprv.sampled import LogDensityPair, PrivacyLossSampler, SampledAccountant
from sampledprv.sampled.certification.envelopes import envelope
from sampledprv.sampled.histograms.kernels import loss_histogram
from sampledprv.sampled.certification.planner import plan_samples
from sampledprv.sampled.certification.tail_inputs import RenyiTable
from sampledprv.sampled.certification.tail_sources import DEFAULT_ORDERS, tail_bound
from sampledprv.sampled.certification.tails import TailBound

ALPHA = 0.05


def gauss_renyi(mu):
    return lambda order, direction: order * mu * mu / 2.0


def laplace_renyi(b):
    def f(order, direction):
        a = order
        return math.log(a / (2 * a - 1) * math.exp((a - 1) / b)
                        + (a - 1) / (2 * a - 1) * math.exp(-a / b)) / (a - 1)
    return f


def gauss_pair(mu, **kw):
    return LogDensityPair(lambda w: -0.5 * w ** 2, lambda w: -0.5 * (w - mu) ** 2,
                          sample_p=lambda r, s: r.standard_normal(s),
                          sample_q=lambda r, s: mu + r.standard_normal(s), **kw)


def gauss_loss_sampler(mu, **kw):
    return PrivacyLossSampler(lambda r, s: mu * mu / 2 + mu * r.standard_normal(s),
                              lambda r, s: mu * mu / 2 + mu * r.standard_normal(s), **kw)


def laplace_pair(b, **kw):
    return LogDensityPair(lambda w: -np.abs(w) / b, lambda w: -np.abs(w - 1.0) / b,
                          sample_p=lambda r, s: r.laplace(0.0, b, s),
                          sample_q=lambda r, s: r.laplace(1.0, b, s), **kw)


def gg_draw(r, size, beta, scale):
    g = r.gamma(1.0 / beta, 1.0, size)
    return scale * g ** (1.0 / beta) * np.where(r.random(size) < 0.5, -1.0, 1.0)


def gg_renyi_table(beta, scale, orders=(1.5, 2, 3, 4, 6, 8, 12, 16, 24, 32)):
    """D_order(GG(0) || GG(1)) by quadrature, plus a 1e-7 margin (an upper bound)."""
    def logdens(x, c):
        return -np.abs((x - c) / scale) ** beta
    z = integrate.quad(lambda x: math.exp(logdens(x, 0.0)), -np.inf, np.inf)[0]
    out = {}
    for a in orders:
        f = lambda x: math.exp(a * logdens(x, 0.0) + (1 - a) * logdens(x, 1.0))  # noqa: E731
        val = integrate.quad(f, -np.inf, np.inf, points=None, limit=400, epsabs=0,
                             epsrel=1e-12)[0] / z
        out[a] = math.log(val) / (a - 1) + 1e-7
    return out


def gg_pair(beta, scale, **kw):
    return LogDensityPair(lambda w: -np.abs(w / scale) ** beta,
                          lambda w: -np.abs((w - 1.0) / scale) ** beta,
                          sample_p=lambda r, s: gg_draw(r, s, beta, scale),
                          sample_q=lambda r, s: 1.0 + gg_draw(r, s, beta, scale), **kw)


# --------------------------------------------------------------------------------------
# the tail bound itself
# --------------------------------------------------------------------------------------

def test_chernoff_bound_dominates_gaussian_tail():
    mu = 0.3
    tb = tail_bound(gauss_pair(mu, renyi=gauss_renyi(mu)), "remove")
    law = privacy_loss(sp.Gaussian(1.0 / mu), "remove")
    t = np.linspace(-1.0, 4.0, 501)
    exact = law.sf(np.nextafter(t, -np.inf))          # P[Y >= t]
    bound = tb.sf(t)
    assert np.all(bound >= exact - 1e-15)
    assert np.all(bound <= 1.0)
    # near-optimal: the best Chernoff exponent of N(m, v) is (t - m)^2 / (2 v); the
    # order grid costs at most a few percent of it
    m, var = mu * mu / 2, mu * mu
    far = t > 1.0
    opt = -((t[far] - m) ** 2) / (2 * var)
    assert np.all(np.log(bound[far]) <= 0.97 * opt)
    r = tb.reach(1e-20)
    assert tb.sf(np.array([r]))[0] <= 1e-20 * (1 + 1e-9)


def test_directions_of_the_mgf_identity():
    """E[exp((a-1) Y_remove)] = exp((a-1) D_a(P||Q)); add: D_a(Q||P) (checked by
    quadrature on an asymmetric pair: P = N(0, 1), Q = N(0, 1.5^2))."""
    s1, s2 = 1.0, 1.5

    def d_renyi(a, sa, sb):  # D_a(N(0, sa^2) || N(0, sb^2))
        var = a * sb ** 2 + (1 - a) * sa ** 2
        return math.log(sb / sa) + math.log(sb ** 2 / var) / (2 * (a - 1)) if var > 0 \
            else math.inf
    p, q = stats.norm(0, s1), stats.norm(0, s2)
    for a in (1.2, 1.3, 2.0, 3.0):
        # E_P[(p/q)^(a-1)] for the remove loss log p/q under P; E_Q[(q/p)^(a-1)] for add
        m_remove = integrate.quad(lambda w: math.exp(p.logpdf(w) + (a - 1) * (
            p.logpdf(w) - q.logpdf(w))), -np.inf, np.inf)[0]
        assert math.isclose(math.log(m_remove), (a - 1) * d_renyi(a, s1, s2), rel_tol=1e-7)
        if math.isfinite(d_renyi(a, s2, s1)):     # D_a(Q||P) is infinite from a = 1.8
            m_add = integrate.quad(lambda w: math.exp(q.logpdf(w) + (a - 1) * (
                q.logpdf(w) - p.logpdf(w))), -np.inf, np.inf)[0]
            assert math.isclose(math.log(m_add), (a - 1) * d_renyi(a, s2, s1), rel_tol=1e-7)
            assert d_renyi(a, s2, s1) != pytest.approx(d_renyi(a, s1, s2), rel=1e-3)


def _variance_pair(s1, s2, renyi):
    return LogDensityPair(lambda w: -0.5 * (w / s1) ** 2 - math.log(s1),
                          lambda w: -0.5 * (w / s2) ** 2 - math.log(s2),
                          sample_p=lambda r, n: s1 * r.standard_normal(n),
                          sample_q=lambda r, n: s2 * r.standard_normal(n), renyi=renyi)


def _d_var(a, sa, sb):
    var = a * sb ** 2 + (1 - a) * sa ** 2
    return math.log(sb / sa) + math.log(sb ** 2 / var) / (2 * (a - 1)) if var > 0 else math.inf


def test_direction_convention_in_the_accountant():
    """remove uses D(P||Q), add uses D(Q||P): the right assignment certifies, the
    swapped one is caught in the direction where it is too small."""
    s1, s2 = 1.0, 2.0
    right = lambda a, d: _d_var(a, s1, s2) if d == "remove" else _d_var(a, s2, s1)  # noqa
    swapped = lambda a, d: _d_var(a, s2, s1) if d == "remove" else _d_var(a, s1, s2)  # noqa
    # D_a(P||Q) is finite for every order here, D_a(Q||P) only below a = 4/3
    assert math.isinf(_d_var(2.0, s2, s1)) and math.isfinite(_d_var(2.0, s1, s2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        acc = SampledAccountant(200_000, alpha=1e-6, seed=4, bins=2048, progress=False)
        iv = acc.compose(_variance_pair(s1, s2, right), 3).delta(1.0)
    assert math.isfinite(iv.upper) and "Renyi bound supplied" in iv.method
    acc2 = SampledAccountant(200_000, alpha=1e-6, seed=5, bins=2048, progress=False)
    with pytest.raises(ValueError, match=r"(remove|add) direction.*order"):
        acc2.compose(_variance_pair(s1, s2, swapped), 3).delta(1.0)


def test_tables_and_validation():
    t = RenyiTable.from_mapping({"2": 0.5, 4: "1.0", 8.0: math.inf})
    assert t(2, "add") == 0.5 and t(4.0, "remove") == 1.0 and math.isinf(t(3, "remove"))
    per = RenyiTable.from_mapping({"remove": {2: 0.5}, "add": {2: 0.7}})
    assert per(2, "remove") == 0.5 and per(2, "add") == 0.7
    pair = gauss_pair(0.5, renyi={2: 0.25, 8: 1.0}, loss_range=None)
    assert isinstance(pair.renyi, RenyiTable)
    hash(pair)                                            # tables are stored hashable
    tb = tail_bound(pair, "add")
    assert list(tb.orders) == [2.0, 8.0] and "supplied" in tb.source
    for bad, msg in (({1.0: 0.1}, "order"), ({2: -1.0}, ">= 0"), ({"x": 1.0}, "not a number"),
                     ({"remove": {2: 1}, 3: 1}, "mixes"), ("table", "renyi must be")):
        with pytest.raises(ValueError, match=msg):
            gauss_pair(0.5, renyi=bad)
    for bad in ((1.0, 0.0), (0.0,), "ab", (float("nan"), 1.0)):
        with pytest.raises(ValueError, match="loss_range"):
            laplace_pair(1.0, loss_range=bad)
    with pytest.raises(ValueError, match="must be >= 0"):
        tail_bound(gauss_pair(0.5, renyi=lambda a, d: -1.0), "remove")
    assert tail_bound(gauss_pair(0.5), "remove") is None
    assert len(DEFAULT_ORDERS) > 50 and DEFAULT_ORDERS.min() > 1


# --------------------------------------------------------------------------------------
# the acceptance figures
# --------------------------------------------------------------------------------------

def test_gaussian_pair_k100_n1e7_finite_and_tight():
    mu = 0.1
    acc = SampledAccountant(10 ** 7, alpha=1e-9, seed=1, progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")     # no sample-floor warning with a Renyi bound
        iv = acc.compose(gauss_pair(mu, renyi=gauss_renyi(mu)), 100).epsilon(1e-5)
    exact = Accountant(eps_error=1e-4).compose(sp.Gaussian(1.0), 1).epsilon(1e-5)
    assert abs(exact.estimate - 4.3772) < 1e-3
    assert iv.lower <= exact.lower and exact.upper <= iv.upper, (iv, exact)
    assert iv.width <= 0.12, iv
    assert "Renyi" in iv.method and "conditional" in iv.method
    # without the tail bound the same samples certify nothing finite
    acc_plain = SampledAccountant(10 ** 7, alpha=1e-9, seed=1, progress=False,
                                  tail_bounds=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = acc_plain.compose(gauss_pair(mu, renyi=gauss_renyi(mu)), 100).epsilon(1e-5)
    assert math.isinf(plain.upper) and abs(plain.lower - iv.lower) < 1e-12


def test_builtin_gaussian_uses_its_exact_renyi_divergence():
    acc = SampledAccountant(10 ** 7, alpha=1e-9, seed=2, progress=False)
    iv = acc.compose(sp.Gaussian(10.0), 100).epsilon(1e-5)
    assert iv.lower <= 4.3772 <= iv.upper and iv.width <= 0.12, iv
    assert "built-in" in iv.method


# --------------------------------------------------------------------------------------
# premises checked against the samples
# --------------------------------------------------------------------------------------

def test_too_small_renyi_claim_is_caught():
    mu = 0.1
    half = lambda a, d: 0.5 * a * mu * mu / 2   # noqa: E731
    acc = SampledAccountant(10 ** 5, alpha=1e-9, seed=3, bins=4096, progress=False)
    with pytest.raises(ValueError, match=r"order \d+.*too small by at least [0-9.]+ nats"):
        acc.compose(gauss_pair(mu, renyi=half), 100).epsilon(1e-5)
    # the true claim passes on the same samples' seed
    acc = SampledAccountant(10 ** 5, alpha=1e-9, seed=3, bins=4096, progress=False)
    assert math.isfinite(acc.compose(gauss_pair(mu, renyi=gauss_renyi(mu)), 100)
                         .epsilon(1e-5).upper)


def test_infinite_loss_contradicts_any_finite_renyi_claim():
    def rem(r, s):
        y = 0.5 + r.standard_normal(s)
        y[r.random(s) < 0.01] = np.inf
        return y
    mech = PrivacyLossSampler(rem, renyi={2: 10.0})
    acc = SampledAccountant(10 ** 4, alpha=1e-6, seed=0, bins=256, progress=False)
    with pytest.raises(ValueError, match=r"\+inf"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            acc.compose(mech, 2).epsilon(1e-3)


def test_sample_outside_loss_range_is_caught():
    b = 2.0
    # numpy path: the message names the range and the sample
    with pytest.raises(ValueError, match=r"privacy loss -?0\.5.*loss_range \[-0\.25, 0\.25\]"):
        SampledAccountant(5000, alpha=1e-3, progress=False).compose(
            laplace_pair(b, loss_range=(-0.25, 0.25)), 3).epsilon(1e-3)
    mech = PrivacyLossSampler(lambda r, s: np.full(s, 0.3), loss_range=(-0.25, 0.25))
    with pytest.raises(ValueError, match=r"0\.3.*outside the declared loss_range \[-0\.25, 0\.25\]"):
        SampledAccountant(5000, alpha=1e-3, progress=False).compose(mech).epsilon(1e-3)
    # a range given to compose is checked in the accountant's sampling path
    def lap_loss(r, s):                                   # Laplace(b = 1): loss in [-1, 1]
        x = r.laplace(0.0, 1.0, s)
        return np.abs(x - 1.0) - np.abs(x)
    pls = PrivacyLossSampler(lap_loss)
    with pytest.raises(ValueError, match=r"outside the declared loss_range \[-0.5, 0.5\]"):
        SampledAccountant(5000, alpha=1e-3, progress=False).compose(
            pls, 2, loss_range=(-0.5, 0.5)).epsilon(1e-3)
    iv = SampledAccountant(5000, alpha=1e-3, progress=False).compose(
        pls, 2, loss_range=(-1.0, 1.0)).epsilon(1e-3)
    assert iv.upper <= 2.0 + 1e-9


def test_histogram_range_check_names_the_bin():
    from sampledprv.sampled.histograms.histogram import LossHistogram
    tb = TailBound(np.zeros(0), np.zeros(0), -1.0, 1.0)
    counts = np.zeros(32, dtype=np.int64)
    counts[30] = 1                                         # bin [1.75, 1.875)
    hist = LossHistogram(counts, 0, 0, 0, 0, 1, -2.0, 0.125)
    with pytest.raises(ValueError, match=r"in \[1\.75, 1\.875\).*\[-1, 1\]"):
        tb.check_histogram(hist, "m", "remove")
    counts[30] = 0
    counts[23] = 5                                         # [0.875, 1): inside
    tb.check_histogram(LossHistogram(counts, 0, 0, 0, 0, 5, -2.0, 0.125), "m", "remove")
    with pytest.raises(ValueError, match=r"\+inf"):
        tb.check_histogram(LossHistogram(counts, 0, 0, 1, 0, 6, -2.0, 0.125), "m", "add")


def test_laplace_loss_range_removes_the_floor():
    b = 2.0
    n = 3000
    exact = Accountant(eps_error=1e-4).compose(sp.Laplace(b), 10).epsilon(1e-3)
    acc = SampledAccountant(n, alpha=1e-3, seed=7, bins=512, progress=False)
    iv = acc.compose(laplace_pair(b, loss_range=(-1 / b, 1 / b)), 10).epsilon(1e-3)
    assert math.isfinite(iv.upper) and iv.upper <= 10 / b + 1e-9
    assert iv.lower <= exact.upper and exact.lower <= iv.upper
    assert "loss range" in iv.method
    plain = SampledAccountant(n, alpha=1e-3, seed=7, bins=512, progress=False,
                              tail_bounds=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert math.isinf(plain.compose(laplace_pair(b, loss_range=(-1 / b, 1 / b)), 10)
                          .epsilon(1e-3).upper)


def test_compose_attaches_tails_to_any_mechanism_and_plan_knows():
    mu = 0.5
    mech = gauss_loss_sampler(mu)
    plan = plan_samples(mech, 50, 1e-5)
    assert plan.tail_bound is None and plan.n_min > 10 ** 6
    plan = plan_samples(mech, 50, 1e-5, renyi=gauss_renyi(mu))
    assert plan.n_min == 1 and "Renyi" in plan.tail_bound and "no sample floor" in str(plan)
    acc = SampledAccountant(20_000, alpha=1e-6, seed=0, bins=1024, progress=False)
    acc.compose(mech, 10, renyi={2: 2 * mu * mu / 2, 8: 8 * mu * mu / 2})
    acc.compose(mech, 10)                                  # same tails for later counts
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        iv = acc.epsilon(1e-5)
    ex = Accountant(eps_error=1e-4).compose(sp.Gaussian(1 / mu), 20).epsilon(1e-5)
    assert math.isfinite(iv.upper) and iv.lower <= ex.upper and ex.lower <= iv.upper
    with pytest.raises(ValueError, match="different renyi"):
        acc.compose(mech, 1, renyi={2: 1.0})


# --------------------------------------------------------------------------------------
# coverage
# --------------------------------------------------------------------------------------

def _binomial_ok(misses: int, trials: int) -> float:
    return stats.binomtest(misses, trials, ALPHA, alternative="greater").pvalue


def _event_misses(mech, exact_spec, seeds, n, bins=64, directions=("remove", "add")):
    """Per seed: is {Y_low <=st Y <=st Y_up} violated at some threshold (the extension
    beyond the window included)?  The event every certified interval rests on."""
    setup = {}
    for d in directions:
        law = privacy_loss(exact_spec, d)
        lo, hi = law.lower_point(1e-4), law.upper_point(1e-4)
        h = (hi - lo) / (bins - 3)
        lo -= 0.37 * h              # no edge within rounding of an atom (Laplace: +-1/b)
        grid = lo + h * np.arange(5 * bins + 2)              # window and 4 * bins beyond
        setup[d] = (lo, h, law.sf(np.nextafter(grid, -np.inf)), tail_bound(mech, d))
    misses = alarms = 0
    for s in range(seeds):
        bad = False
        for i, d in enumerate(directions):
            lo, h, sf, tb = setup[d]
            hist = loss_histogram(mech, direction=d, n=n, lo=lo, h=h, bins=bins,
                                  seed=[s, i], progress=False)
            tb.check_histogram(hist, repr(mech), d)
            env = envelope(hist, ALPHA / len(directions), tail=tb, floor=1e-12)
            try:
                tb.check_samples(env.lower, d, ALPHA)
            except ValueError:
                alarms += 1
            up, low = env.upper, env.lower
            p_up = np.cumsum(up.probs[::-1])[::-1] + up.p_inf        # P[Y_up >= v_j]
            p_low = np.cumsum(low.probs[::-1])[::-1] + low.p_inf
            # Y_up >= v_j covers Y >= v_{j-1}; Y_low >= v_j is below Y >= v_j
            ex_up, ex_low = sf[:up.probs.size], sf[:low.probs.size]
            bad |= not (np.all(p_up[1:] >= ex_up[:-1] - 1e-12) and p_up[0] >= 1 - 1e-12
                        and np.all(p_low <= ex_low + 1e-12))
        misses += bad
    return misses, alarms


@pytest.mark.parametrize("case", ["gaussian", "laplace-range", "custom-gg"])
def test_envelope_event_coverage_with_tails(case):
    """300 seeds at alpha 0.05, n = 400: the envelopes with Chernoff/range tails
    contain the exact law as often as promised (and the premise check stays quiet)."""
    if case == "gaussian":
        mech, spec = gauss_pair(1.0, renyi=gauss_renyi(1.0)), sp.Gaussian(1.0)
    elif case == "laplace-range":
        mech, spec = laplace_pair(1.0, loss_range=(-1.0, 1.0)), sp.Laplace(1.0)
    else:
        mech = gg_pair(1.5, 2.0, renyi=gg_renyi_table(1.5, 2.0))
        spec = sp.GeneralizedGaussian(1.5, 2.0)
    misses, alarms = _event_misses(mech, spec, 300, 400)
    assert _binomial_ok(misses, 300) > 1e-3, misses
    assert _binomial_ok(alarms, 300) > 1e-3, alarms


def test_event_check_detects_a_false_premise():
    """Negative control: with half the true divergence the same check misses often."""
    mu = 1.0
    wrong = gauss_pair(mu, renyi=lambda a, d: 0.5 * a * mu * mu / 2)
    misses, alarms = _event_misses(wrong, sp.Gaussian(1.0), 20, 400)
    assert misses >= 15 and alarms >= 15, (misses, alarms)


def _coverage(mech, spec, k, n, seeds, delta, bins=64):
    truth = Accountant(eps_error=1e-4).compose(spec, k).epsilon(delta)
    misses = finite = 0
    for s in range(seeds):
        acc = SampledAccountant(n, alpha=ALPHA, seed=1000 + s, bins=bins, progress=False)
        iv = acc.compose(mech, k).epsilon(delta)
        finite += math.isfinite(iv.upper)
        misses += iv.upper < truth.lower or iv.lower > truth.upper
    return misses, finite


def test_end_to_end_coverage_gaussian_below_the_floor():
    """150 seeds, n = 2000 (the sample floor for this query is about 40,000): every
    interval is finite and misses stay within Binomial(150, 0.05).  The 300-seed runs
    of four mechanisms are in ``benchmarks/bench_renyi_tails.py --coverage``."""
    mu = 1.0
    mech = gauss_loss_sampler(mu, renyi=gauss_renyi(mu))
    assert sp.min_samples(5, 1e-3, alpha=ALPHA, bins=64) > 20 * 2000
    misses, finite = _coverage(mech, sp.Gaussian(1 / mu), 5, 2000, 150, 1e-3)
    assert finite == 150
    assert _binomial_ok(misses, 150) > 1e-3, misses


# --------------------------------------------------------------------------------------
# command line: renyi tables in configuration files
# --------------------------------------------------------------------------------------

CONFIG = """
accountant = "{acc}"
n_samples = 100000
alpha = 1e-6
delta = 1e-5

[[mechanism]]
spec = "gaussian sigma=4"
count = 20
renyi = {table}
"""


def _cli(capsys, *argv):
    from sampledprv.cli import main
    code = main(list(argv))
    out = capsys.readouterr()
    return code, (json.loads(out.out) if "--json" in argv and code == 0 else out.out), out.err


def test_cli_config_accepts_a_renyi_table(tmp_path, capsys):
    table = '{ "2" = 0.0625, "8" = 0.25, "32" = 1.0 }'       # sigma = 4: order / 32
    cfg = tmp_path / "r.toml"
    cfg.write_text(CONFIG.format(acc="sampled", table=table))
    code, out, err = _cli(capsys, "epsilon", "--config", str(cfg), "--json")
    assert code == 0, err
    r = out["results"][0] if "results" in out else out
    text = json.dumps(out)
    assert "Renyi bound supplied" in text
    ex = Accountant(eps_error=1e-4).compose(sp.Gaussian(4.0), 20).epsilon(1e-5)
    lo, up = r["lower"], r["upper"]
    assert math.isfinite(up) and lo <= ex.upper and ex.lower <= up
    code, out, err = _cli(capsys, "plan", "--config", str(cfg), "--json")
    assert code == 0 and out["n_min"] == 1 and out["tail_bounds"][0]
    # a claim that the samples contradict is an error, not a certificate
    cfg.write_text(CONFIG.format(acc="sampled", table='{ "8" = 0.05 }'))
    code, _, err = _cli(capsys, "epsilon", "--config", str(cfg))
    assert code != 0 and "order 8" in err
    # bad tables and the analytic accountant are refused with a message
    cfg.write_text(CONFIG.format(acc="sampled", table='{ "1" = 0.1 }'))
    code, _, err = _cli(capsys, "epsilon", "--config", str(cfg))
    assert code == 2 and "order" in err and "mechanism #1" in err
    cfg.write_text(CONFIG.format(acc="analytic", table=table).replace(
        "n_samples = 100000\nalpha = 1e-6\n", ""))
    code, _, err = _cli(capsys, "epsilon", "--config", str(cfg))
    assert code == 2 and "renyi" in err and "sampled" in err
