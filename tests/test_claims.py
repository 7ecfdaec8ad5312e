"""check_claim: certified lower bounds on the mechanism's Renyi divergences and delta,
against closed forms; the issue's permute-and-flip example; random true and false claims;
coverage of the sampled lower bound."""

from __future__ import annotations

import math

import numpy as np
import pytest

import sampledprv as sp
from sampledprv.claims.check import CONSISTENT, INCONCLUSIVE_SAMPLES, REFUTED, check_claim
from sampledprv.mechanisms.laws import loss_pair
from sampledprv.rdp import renyi_divergence
from sampledprv.rdp.lower import pair_renyi_lower, sampled_moment_lower

E2 = math.exp(-2.0)
PF = sp.FinitePair((0.5, 0.5), (1.0 - E2 / 2.0, E2 / 2.0))


def _finite_renyi(p, q, a):
    return math.log(sum(x ** a * y ** (1 - a) for x, y in zip(p, q))) / (a - 1)


def _laplace_renyi(eps, a):
    return math.log(a / (2 * a - 1) * math.exp((a - 1) * eps)
                    + (a - 1) / (2 * a - 1) * math.exp(-a * eps)) / (a - 1)


def _subsampled_gaussian_renyi(q, mu, a):
    """Integer order, remove direction: the binomial expansion (exact)."""
    return math.log(sum(math.comb(a, k) * (1 - q) ** (a - k) * q ** k
                        * math.exp(k * (k - 1) * mu * mu / 2) for k in range(a + 1))) / (a - 1)


def test_permute_and_flip_refutes_rho_half_at_orders_2_and_3():
    res = check_claim(PF, zcdp=0.5, epsilon=2.0)
    assert res.refuted and res.certification == "exact"
    for a in (2.0, 3.0):
        pt = res.point(order=a)
        exact = max(_finite_renyi(PF.p, PF.q, a), _finite_renyi(PF.q, PF.p, a))
        assert pt.verdict == REFUTED
        assert pt.lower <= exact <= pt.upper
        assert pt.upper - pt.lower < 1e-9
        assert pt.lower > 0.5 * a
    assert abs(res.point(order=2.0).estimate - 1.3769187395948) < 1e-9
    assert abs(res.point(order=3.0).estimate - 1.6560533439977) < 1e-9
    # pure 2-DP holds: delta(2) = 0, and every D_a <= 2
    assert res.point(epsilon=2.0).verdict == CONSISTENT
    pure = check_claim(PF, rdp=lambda a: 2.0, epsilon=2.0)
    assert not pure.refuted and pure.verdict == CONSISTENT


def test_pure_dp_violation_is_refuted():
    res = check_claim(PF, epsilon=1.9)
    assert res.refuted and res.point(epsilon=1.9).lower > 0


@pytest.mark.parametrize("spec, exact", [
    (sp.Gaussian(0.8), lambda a: a / 0.64 / 2),
    (sp.Laplace(1.5), lambda a: _laplace_renyi(1 / 1.5, a)),
    (sp.RandomizedResponse(0.8), lambda a: _finite_renyi((0.8, 0.2), (0.2, 0.8), a)),
    (sp.PoissonSubsampled(sp.Gaussian(1.2), 0.1),
     lambda a: _subsampled_gaussian_renyi(0.1, 1 / 1.2, int(a))),
])
@pytest.mark.parametrize("order", [2.0, 3.0, 8.0])
def test_exact_lower_bound_brackets_closed_forms(spec, exact, order):
    law_p, law_q = loss_pair(spec)
    lo = max(pair_renyi_lower(law_p, law_q, order),
             pair_renyi_lower(law_q.negated(), law_p.negated(), order))
    truth = exact(order)
    assert lo <= truth
    assert lo >= truth - 1e-5 * max(1.0, truth)


def _random_specs(rng, k):
    out = []
    for i in range(k):
        kind = i % 4
        if kind == 0:
            out.append(sp.Gaussian(float(rng.uniform(0.7, 2.0))))
        elif kind == 1:
            out.append(sp.Laplace(float(rng.uniform(0.5, 2.0))))
        elif kind == 2:
            out.append(sp.RandomizedResponse(float(rng.uniform(0.6, 0.9))))
        else:
            out.append(sp.PoissonSubsampled(sp.Gaussian(float(rng.uniform(0.7, 1.5))),
                                            float(rng.uniform(0.1, 0.5))))
    return out


ORDERS = (1.5, 2.0, 3.0)


def _curve(spec):
    return {a: max(renyi_divergence(spec, a, d) for d in ("remove", "add")) for a in ORDERS}


def test_random_true_claims_never_refuted_false_claims_refuted_exact():
    rng = np.random.default_rng(35)
    for spec in _random_specs(rng, 30):
        curve = _curve(spec)
        weak = {a: e * float(rng.uniform(1.0, 1.5)) for a, e in curve.items()}
        assert not check_claim(spec, rdp=curve).refuted, spec
        assert not check_claim(spec, rdp=weak).refuted, spec
        false = check_claim(spec, rdp={a: 0.7 * e for a, e in curve.items()})
        assert false.refuted, spec
        assert all(p.verdict == REFUTED for p in false.points), spec


@pytest.mark.slow
def test_random_true_and_false_claims_sampled_at_1e6():
    rng = np.random.default_rng(350)
    specs = _random_specs(rng, 30)
    for i, spec in enumerate(specs):
        curve = _curve(spec)
        true = check_claim(spec, rdp=curve, method="sampled", n_samples=10**6, seed=i,
                           alpha=0.01)
        assert not true.refuted, (spec, str(true))
        assert true.verdict in (CONSISTENT, INCONCLUSIVE_SAMPLES)
        false = check_claim(spec, rdp={a: 0.7 * e for a, e in curve.items()},
                            method="sampled", n_samples=10**6, seed=100 + i, alpha=0.01)
        assert false.refuted, (spec, str(false))
        assert false.certification == "sampled" and false.confidence == 0.99


def test_sampled_lower_bound_coverage_small_n():
    """The sampled lower bound on log E[e^{tY}] (Gaussian loss, mu = 1) holds in at least
    1 - beta of 300 seeds at n = 500 (beta = 0.1; a binomial slack of 3 sd)."""
    mu, beta, trials = 1.0, 0.1, 300
    fails = {2.0: 0, 4.0: 0}
    for s in range(trials):
        r = np.random.default_rng(s)
        y = mu * mu / 2 + mu * r.standard_normal(500)
        for a in fails:
            truth = (a - 1) * a * mu * mu / 2      # log E_P[e^{(a-1) l}]
            lo, _ = sampled_moment_lower(y, a - 1, beta, truth)
            fails[a] += lo > truth
    limit = trials * beta + 3 * math.sqrt(trials * beta * (1 - beta))
    assert all(f <= limit for f in fails.values()), fails


def test_sampled_pair_inputs_and_errors():
    mu = 1.0
    sampler = sp.PrivacyLossSampler(lambda r, n: mu * mu / 2 + mu * r.standard_normal(n))
    res = check_claim(sampler, zcdp=0.35, orders=(2.0, 3.0), n_samples=200_000)
    assert res.certification == "sampled" and res.refuted
    ok = check_claim(sampler, zcdp=0.5, orders=(2.0, 3.0), n_samples=200_000)
    assert not ok.refuted
    with pytest.raises(ValueError, match="no claim"):
        check_claim(PF)
    with pytest.raises(ValueError, match="orders"):
        check_claim(PF, zcdp=0.5, orders=(1.0,))
    with pytest.raises(ValueError, match="method='exact'"):
        check_claim(sampler, zcdp=0.5, method="exact")
    with pytest.raises(ValueError, match="delta"):
        check_claim(PF, epsilon=[1.0, 2.0, 3.0], delta=[0.1, 0.2])
    with pytest.raises(ValueError, match="alpha"):
        check_claim(PF, zcdp=0.5, alpha=0.0)
    with pytest.raises(ValueError, match="mechanism must be"):
        check_claim("gaussian sigma=1", zcdp=0.5)
    with pytest.raises(ValueError, match="rdp must be"):
        check_claim(PF, rdp=[1, 2])


def _gaussian_delta(mu, eps):
    from scipy import stats
    return stats.norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * stats.norm.cdf(-eps / mu - mu / 2)


def test_delta_claims_exact_and_sampled_against_the_closed_form():
    mu, eps = 1.0, 1.0
    truth = _gaussian_delta(mu, eps)                    # 0.12693...
    exact = check_claim(sp.Gaussian(1.0), epsilon=eps, delta=[0.9 * truth, 1.1 * truth])
    lo_pt, hi_pt = exact.points
    assert lo_pt.lower <= truth <= lo_pt.upper
    assert lo_pt.verdict == REFUTED and hi_pt.verdict == CONSISTENT
    from scipy import stats
    pair = sp.LogDensityPair(logp=lambda w: stats.norm.logpdf(w, 1.0),
                             logq=lambda w: stats.norm.logpdf(w, 0.0),
                             sample_p=lambda r, n: r.normal(1.0, 1.0, n),
                             sample_q=lambda r, n: r.normal(0.0, 1.0, n), name="gauss")
    res = check_claim(pair, epsilon=eps, delta=0.9 * truth, n_samples=100_000, alpha=0.01)
    assert res.mechanism == "gauss" and res.certification == "sampled"
    pt = res.points[0]
    assert pt.lower <= truth and pt.verdict == REFUTED
    ok = check_claim(pair, epsilon=eps, delta=1.2 * truth, n_samples=100_000, alpha=0.01)
    assert not ok.refuted


def test_batch_sampler_without_a_law_is_checked_from_samples():
    m = sp.RandomAllocation(1.0, 10)
    res = check_claim(m, zcdp=0.01, orders=(2.0,), n_samples=20_000, alpha=0.01)
    assert res.certification == "sampled" and res.refuted
    assert not check_claim(m, zcdp=0.3, orders=(2.0,), n_samples=20_000).refuted
    with pytest.raises(ValueError, match="method='sampled'"):
        check_claim(m, zcdp=0.3, method="exact")


def test_sampled_lower_bound_coverage_subsampled_gaussian():
    """Same for the subsampled Gaussian's remove loss (q = 0.2, mu = 1: a heavy right tail
    of (P/Q)^a), against the exact integer-order moment, 200 seeds at n = 2000."""
    from sampledprv.mechanisms.numpy_losses import spec_loss_sampler
    spec = sp.PoissonSubsampled(sp.Gaussian(1.0), 0.2)
    draw = spec_loss_sampler(spec, "remove")
    beta, trials = 0.1, 200
    fails = {2: 0, 3: 0}
    for s in range(trials):
        y = draw(np.random.default_rng(1000 + s), 2000)
        for a in fails:
            truth = (a - 1) * _subsampled_gaussian_renyi(0.2, 1.0, a)
            lo, _ = sampled_moment_lower(y, a - 1, beta, truth)
            fails[a] += lo > truth
    limit = trials * beta + 3 * math.sqrt(trials * beta * (1 - beta))
    assert all(f <= limit for f in fails.values()), fails
