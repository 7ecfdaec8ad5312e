"""Renyi divergence bounds, subsampling amplification, conversion and composition."""

import math

import numpy as np
import pytest
from scipy import integrate, stats

import sampledprv as sp
from sampledprv.rdp import (
    RdpAccountant, delta_from_rdp, epsilon_from_rdp, gg_renyi_bounds, renyi_divergence,
    subsampled_general_bound,
)

ORDERS = [1.5, 2.0, 3.0, 8.0, 32.0, 128.0]


def _renyi_numeric(p, q, a, lo=-60.0, hi=60.0, points=()):
    """D_a(P||Q) by adaptive quadrature of the log-densities (reference only)."""
    val, _ = integrate.quad(lambda x: math.exp(a * p(x) + (1 - a) * q(x)), lo, hi,
                            points=points, limit=400, epsabs=0, epsrel=1e-12)
    return math.log(val) / (a - 1)


@pytest.mark.parametrize("a", ORDERS)
def test_gaussian_exact(a):
    spec = sp.Gaussian(sigma=1.7, sensitivity=0.6)
    exact = a * spec.mu ** 2 / 2
    for d in ("remove", "add"):
        got = renyi_divergence(spec, a, d)
        assert exact <= got <= exact * (1 + 1e-9)


@pytest.mark.parametrize("a", [1.5, 2.0, 5.0, 20.0])
def test_laplace_closed_form_matches_quadrature(a):
    b, sens = 1.3, 0.9
    p = stats.laplace(0, b).logpdf
    q = stats.laplace(sens, b).logpdf
    ref = _renyi_numeric(p, q, a, points=(0.0, sens))
    got = renyi_divergence(sp.Laplace(scale=b, sensitivity=sens), a, "remove")
    assert ref <= got <= ref + 1e-8


@pytest.mark.parametrize("a", [1.5, 2.0, 7.0, 64.0])
def test_gg_brackets_gaussian_and_laplace(a):
    # beta = 2: GG(2, s) is N(0, s^2/2), mu = sqrt(2) Delta / s
    s, delta = 1.4, 0.8
    lo, hi = gg_renyi_bounds(2.0, delta / s, a)
    exact = a * (math.sqrt(2) * delta / s) ** 2 / 2
    assert lo <= exact <= hi and hi - lo < 1e-3 * max(1.0, exact)
    assert renyi_divergence(sp.GeneralizedGaussian(2.0, s, delta), a, "add") == hi
    # beta = 1: Laplace with b = s
    lo, hi = gg_renyi_bounds(1.0, delta / s, a)
    lap = renyi_divergence(sp.Laplace(scale=s, sensitivity=delta), a, "remove")
    assert lo <= lap <= hi + 1e-10 and hi - lo < 1e-3


@pytest.mark.parametrize("beta,shift,a", [(1.5, 0.7, 2.0), (1.5, 0.7, 9.0), (3.0, 0.5, 4.0),
                                          (1.25, 1.5, 3.5), (2.5, 0.3, 16.0)])
def test_gg_bracket_contains_quadrature(beta, shift, a):
    p = stats.gennorm(beta).logpdf
    q = stats.gennorm(beta, loc=shift).logpdf
    ref = _renyi_numeric(p, q, a, lo=-200, hi=200, points=(0.0, shift))
    lo, hi = gg_renyi_bounds(beta, shift, a)
    assert lo <= ref <= hi
    assert hi - lo <= 2e-3 / (a - 1) + 1e-9


def test_gg_divergence_grows_with_shift_and_order():
    vals = [gg_renyi_bounds(1.5, d, 4.0)[1] for d in (0.1, 0.3, 1.0)]
    assert vals == sorted(vals)
    vals = [gg_renyi_bounds(1.5, 0.5, a)[1] for a in (2.0, 4.0, 16.0)]
    assert vals == sorted(vals)


@pytest.mark.parametrize("eps", [0.1, 1.0, 3.0])
def test_randomized_response_and_pure_dp(eps):
    p = math.exp(eps) / (1 + math.exp(eps))
    for a in (2.0, 6.5):
        exact = math.log(p ** a * (1 - p) ** (1 - a) + (1 - p) ** a * p ** (1 - a)) / (a - 1)
        rr = renyi_divergence(sp.RandomizedResponse(p), a, "remove")
        pure = renyi_divergence(sp.PureDP(eps), a, "add")
        assert exact <= rr <= exact + 1e-9 and exact <= pure <= exact + 1e-9
        # any eps-DP mechanism is dominated by RR: Laplace with eps = Delta/b
        assert renyi_divergence(sp.Laplace(1.0, eps), a, "remove") <= pure
    assert renyi_divergence(sp.RandomizedResponse(1.0), 2.0, "remove") == math.inf


@pytest.mark.parametrize("q,sigma", [(0.01, 1.0), (0.1, 0.8), (0.3, 2.0), (1.0, 1.5)])
def test_subsampled_gaussian_matches_dp_accounting(q, sigma):
    from dp_accounting.rdp.rdp_privacy_accountant import (
        _compute_rdp_poisson_subsampled_gaussian as reference)
    orders = [2, 3, 5, 10, 32, 64, 256]
    ref = reference(q, sigma, orders)
    spec = sp.PoissonSubsampled(sp.Gaussian(sigma), q) if q < 1 else sp.Gaussian(sigma)
    for a, r in zip(orders, ref):
        for d in ("remove", "add"):
            got = renyi_divergence(spec, a, d)
            assert r * (1 - 1e-12) <= got <= r * (1 + 1e-6) + 1e-12


def _mixture_divergences(p0, q0, q, a, points):
    mix = lambda x: np.logaddexp(math.log1p(-q) + q0(x), math.log(q) + p0(x))  # noqa: E731
    return (_renyi_numeric(mix, q0, a, points=points),
            _renyi_numeric(q0, mix, a, points=points))


@pytest.mark.parametrize("a", [2, 3, 6])
def test_subsampled_laplace_both_directions_bound_quadrature(a):
    b, q = 0.8, 0.2
    p0, q0 = stats.laplace(1.0, b).logpdf, stats.laplace(0.0, b).logpdf
    remove, add = _mixture_divergences(p0, q0, q, a, points=(0.0, 1.0))
    spec = sp.PoissonSubsampled(sp.Laplace(scale=b), q)
    assert remove <= renyi_divergence(spec, a, "remove")
    assert add <= renyi_divergence(spec, a, "add")
    # the remove bound is the exact binomial expansion
    assert renyi_divergence(spec, a, "remove") <= remove + 1e-7


def test_subsampled_gg_bounds_quadrature_and_fractional_orders():
    beta, s, q = 1.5, 1.2, 0.1
    spec = sp.PoissonSubsampled(sp.GeneralizedGaussian(beta, s), q)
    p0, q0 = stats.gennorm(beta, loc=1.0, scale=s).logpdf, stats.gennorm(beta, scale=s).logpdf
    for a in (2, 19):   # 19 lies between anchors: chord of (a-1) D_a
        remove, add = _mixture_divergences(p0, q0, q, a, points=(0.0, 1.0))
        assert remove <= renyi_divergence(spec, a, "remove") <= remove * 1.03 + 1e-6
        assert add <= renyi_divergence(spec, a, "add")
    # non-integer orders: the chord of (a-1) D_a between 3 and 4, above the quadrature
    # value, below the order-4 bound
    remove, add = _mixture_divergences(p0, q0, q, 3.5, points=(0.0, 1.0))
    for d, ref in (("remove", remove), ("add", add)):
        got = renyi_divergence(spec, 3.5, d)
        assert ref <= got <= renyi_divergence(spec, 4, d)
        k3, k4 = 2 * renyi_divergence(spec, 3, d), 3 * renyi_divergence(spec, 4, d)
        assert got == pytest.approx((k3 + k4) / 2 / 2.5, rel=1e-9)


def test_general_bound_dominates_binomial():
    base = lambda k: 0.3 * k  # noqa: E731  (a Gaussian-like curve)
    from sampledprv.rdp import subsampled_remove_bound
    for a in (2, 5, 40):
        assert subsampled_remove_bound(a, 0.05, base) <= subsampled_general_bound(a, 0.05, base)


def test_conversion_matches_dp_accounting_and_is_consistent():
    from dp_accounting import dp_event, rdp
    orders = [float(a) for a in range(2, 65)]
    acc = rdp.RdpAccountant(orders=orders)
    event = dp_event.PoissonSampledDpEvent(0.02, dp_event.GaussianDpEvent(1.1))
    acc.compose(event, 500)
    mine = RdpAccountant(orders=orders).compose(sp.PoissonSubsampled(sp.Gaussian(1.1), 0.02),
                                                500)
    for delta in (1e-3, 1e-5, 1e-8):
        e = mine.epsilon(delta)
        assert acc.get_epsilon(delta) * (1 - 1e-9) <= e <= acc.get_epsilon(delta) * (1 + 1e-6)
        assert delta * (1 - 1e-3) <= mine.delta(e) <= delta * (1 + 1e-4)
    # a single Gaussian: RDP epsilon is an upper bound on the exact one
    g = sp.Gaussian(sigma=3.0)
    exact = sp.Accountant(eps_error=1e-3).compose(g).epsilon(1e-6)
    assert RdpAccountant().compose(g).epsilon(1e-6) >= exact.upper
    assert epsilon_from_rdp([2.0], [0.0], 0.5) == 0.0
    assert delta_from_rdp([2.0], [math.inf], 1.0) == 1.0


def test_acceptance_rdp_route_on_subsampled_gaussian():
    from dp_accounting import dp_event, rdp
    q, sigma, steps, delta = 0.01, 1.0, 2000, 1e-5
    spec = sp.PoissonSubsampled(sp.Gaussian(sigma), q)
    pld = sp.Accountant(eps_error=0.01).compose(spec, steps).epsilon(delta)
    ours = RdpAccountant().compose(spec, steps).epsilon(delta)
    ref = rdp.RdpAccountant()
    ref.compose(dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(sigma)), steps)
    assert ours >= pld.upper
    assert abs(ours - ref.get_epsilon(delta)) <= 0.15 * ref.get_epsilon(delta)


def test_composition_adds_orderwise():
    g, lap = sp.Gaussian(2.0), sp.Laplace(3.0)
    acc = RdpAccountant(orders=[2.0, 4.0]).compose(g, 3).compose(lap)
    want = [3 * renyi_divergence(g, a, "remove") + renyi_divergence(lap, a, "remove")
            for a in (2.0, 4.0)]
    assert np.allclose(acc.rdp["remove"], want) and np.allclose(acc.rdp["add"], want)


@pytest.mark.parametrize("call,match", [
    (lambda: renyi_divergence(sp.Gaussian(1.0), 1.0, "remove"), "order"),
    (lambda: renyi_divergence(sp.Gaussian(1.0), math.inf, "remove"), "order"),
    (lambda: renyi_divergence(sp.Gaussian(1.0), 2.0, "both"), "direction"),
    (lambda: renyi_divergence(sp.ApproxDP(1.0, 1e-6), 2.0, "remove"), "delta"),
    (lambda: renyi_divergence(sp.GeneralizedGaussian(3.0, 1.0, dimension=4), 2.0, "add"),
     "dimension"),
    (lambda: renyi_divergence("gauss", 2.0, "add"), "spec"),
    (lambda: RdpAccountant(orders=[0.5]), "orders"),
    (lambda: epsilon_from_rdp([2.0], [1.0], 0.0), "delta"),
    (lambda: epsilon_from_rdp([2.0, 3.0], [1.0], 0.1), "same"),
])
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_fractional_order_inequality_and_subsampled_bound_dominate_exact_gaussian():
    """Orders in (1, 2): (1+x)^a <= 1 + a x + |x|^a on x >= -1, and the subsampled bound
    lies above the exact Renyi divergence of the Poisson-subsampled Gaussian (both
    directions, by quadrature), and below the order-2 bound once the base divergence is
    large (where it matters)."""
    from scipy import integrate, stats

    from sampledprv.rdp.subsampled import subsampled_fractional_bound
    x = np.concatenate([np.linspace(-1.0, 3.0, 4001), np.geomspace(3.0, 1e6, 200)])
    for a in (1.01, 1.3, 1.7, 1.99):
        assert np.all((1 + x) ** a <= 1 + a * x + np.abs(x) ** a + 1e-12 * (1 + np.abs(x) ** a))
    for mu in (0.5, 2.0, 5.0):
        for q in (0.01, 0.2):
            def log_mix(t):
                return np.logaddexp(math.log1p(-q) + stats.norm.logpdf(t),
                                    math.log(q) + stats.norm.logpdf(t, mu))
            for a in (1.1, 1.5, 1.9):
                rem = integrate.quad(lambda t: math.exp(
                    (1 - a) * stats.norm.logpdf(t) + a * log_mix(t)),
                    -40, 40 + mu, points=[0, mu], limit=400)[0]
                add = integrate.quad(lambda t: math.exp(
                    a * stats.norm.logpdf(t) + (1 - a) * log_mix(t)),
                    -40, 40 + mu, points=[0, mu], limit=400)[0]
                exact = max(math.log(rem), math.log(add)) / (a - 1)
                spec = sp.PoissonSubsampled(sp.Gaussian(1.0 / mu), q)
                ours = max(renyi_divergence(spec, a, d) for d in ("remove", "add"))
                assert exact <= ours <= subsampled_fractional_bound(a, q, a * mu * mu / 2) \
                    * (1 + 1e-9)
    # large base divergence: order 2 barely amplifies, the fractional order does
    big = sp.PoissonSubsampled(sp.Gaussian(1.0 / 5.0), 0.01)
    assert renyi_divergence(big, 1.2, "remove") < 0.2 * renyi_divergence(big, 2.0, "remove")


def test_quadrature_specs_take_fractional_orders_from_integer_chords():
    """A Generalized Gaussian (each order a quadrature) is evaluated at the integers
    only; fractional orders are chords, above the exact divergence."""
    from sampledprv.rdp import RdpAccountant
    from sampledprv.rdp.divergence import renyi_divergence as rd
    spec = sp.GeneralizedGaussian(1.5, 2.0)
    acc = RdpAccountant(orders=(1.5, 2.0, 2.5, 3.0, 11.25)).compose(spec, 1)
    got = acc.rdp["remove"]
    assert got[1] == rd(spec, 2.0, "remove") and got[3] == rd(spec, 3.0, "remove")
    assert rd(spec, 1.5, "remove") <= got[0] == pytest.approx(rd(spec, 2.0, "remove"), rel=1e-9)
    for i, a in ((2, 2.5), (4, 11.25)):
        assert rd(spec, a, "remove") <= got[i] <= 1.05 * rd(spec, a, "remove")
