"""The vector GG spec: Renyi upper bound over the l_beta ball vs concrete-vector lower bounds."""

import math

import numpy as np
import pytest

import sampledprv as sp
from sampledprv.gg.vector import VectorGGAccountant, spreads
from sampledprv.rdp import RdpAccountant, register_divergence
from sampledprv.gg.vector import VECTOR_ORDERS
from sampledprv.rdp.gg_vector import vector_gg_renyi

DELTA = 1e-5
ORDERS = (2.0, 4.0, 8.0, 16.0, 32.0)   # few orders keep CI fast; the bounds stay valid


def test_beta2_answers_with_the_exact_pld_interval():
    vec = sp.GeneralizedGaussianVector(2.0, 2.0, 1000)
    got = VectorGGAccountant().compose(sp.PoissonSubsampled(vec, 0.05), 30).epsilon(DELTA)
    want = sp.Accountant().compose(
        sp.PoissonSubsampled(sp.GeneralizedGaussian(2.0, 2.0), 0.05), 30).epsilon(DELTA)
    assert (got.lower, got.upper) == (want.lower, want.upper)
    assert "PLD" not in got.method or "Renyi" not in got.method


class _QuadratureGG(sp.GeneralizedGaussianVector):
    """The vector spec with the Renyi bound forced through the quadrature route (also at
    beta = 2, where the library uses the closed form)."""


register_divergence(_QuadratureGG, lambda s, a, d: vector_gg_renyi(
    s.beta, s.clip_norm / s.scale, s.effective_dimension, a))


def test_rdp_route_on_subsampled_gaussian_against_pld_and_dp_accounting():
    from dp_accounting import dp_event, rdp
    sigma, q, steps = 1.0, 0.02, 300
    orders = tuple(float(a) for a in list(range(2, 17)) + [20, 25, 32])
    spec = sp.PoissonSubsampled(_QuadratureGG(2.0, math.sqrt(2) * sigma, 1000), q)
    ours = RdpAccountant(orders).compose(spec, steps).epsilon(DELTA)
    pld = sp.Accountant().compose(sp.PoissonSubsampled(sp.Gaussian(sigma), q), steps)
    ref = rdp.RdpAccountant()
    ref.compose(dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(sigma)), steps)
    assert ours >= pld.epsilon(DELTA).upper
    assert abs(ours - ref.get_epsilon(DELTA)) <= 0.15 * ref.get_epsilon(DELTA)


def test_quadrature_route_brackets_gaussian_renyi_at_every_dimension():
    for d in (1, 64, 10 ** 6):
        for a in (2.0, 9.0):
            got = vector_gg_renyi(2.0, 0.5, d, a)
            assert a * 0.25 <= got <= a * 0.25 * 1.08


@pytest.mark.parametrize("beta", [1.0, 1.25, 1.5, 1.75, 2.5, 3.0])
def test_upper_dominates_every_concrete_vector(beta):
    scale = 3.0
    for d in (1, 4, 64, 4096):
        vec = sp.GeneralizedGaussianVector(beta, scale, d)
        iv = VectorGGAccountant(0.05, orders=ORDERS).compose(vec).epsilon(DELTA)
        assert iv.lower <= iv.estimate <= iv.upper
        if d == 1:   # the 1-D mechanism is the whole ball: exact PLD interval
            exact = sp.Accountant(0.05).compose(vec.one_hot()).epsilon(DELTA)
            assert (iv.lower, iv.upper) == (exact.lower, exact.upper)
            continue
        lows = iv.details["lower_by_spread"]
        assert set(lows) == set(spreads(d)) and iv.upper >= max(lows.values())
        # independently: the spread accounting of gg_dimension
        if d == 4:
            e = sp.spread_epsilons(beta, scale, delta=DELTA, spreads=[d])[d]
            assert iv.upper >= e.lower


@pytest.mark.parametrize("beta", [1.0, 1.25, 1.5, 1.75, 2.5, 3.0])
def test_subsampled_upper_dominates_every_spread_vector(beta):
    """Under Poisson subsampling the lower end is the best of the spread vectors'
    certified lower bounds (gg_vector_lower); the Renyi upper end must dominate all."""
    q, steps = 0.1, 5
    # the one-hot vector's interval does not depend on d: built once
    one_hot = sp.Accountant(0.2).compose(
        sp.PoissonSubsampled(sp.GeneralizedGaussian(beta, 3.0), q), steps).epsilon(DELTA)
    for d in (1, 4, 64, 4096):
        spec = sp.PoissonSubsampled(sp.GeneralizedGaussianVector(beta, 3.0, d), q)
        iv = VectorGGAccountant(0.2, orders=(2.0, 3.0, 4.0, 8.0)).compose(
            spec, steps).epsilon(DELTA)
        assert iv.lower <= iv.estimate <= iv.upper
        if d == 1:
            assert (iv.lower, iv.upper) == (one_hot.lower, one_hot.upper)
            continue
        lows = iv.details["lower_by_spread"]
        assert set(lows) == set(spreads(d)) and lows[1] == one_hot.lower
        assert iv.upper >= max(lows.values()) == iv.lower
        if beta > 2 and d == 4096:   # spreading leaks more than the one-hot vector
            assert lows[d] > one_hot.upper


def test_upper_grows_with_dimension_for_beta_above_two():
    ups = [VectorGGAccountant(orders=ORDERS).compose(
        sp.GeneralizedGaussianVector(3.0, 3.0, d)).epsilon(DELTA).upper for d in (2, 64, 4096)]
    assert ups == sorted(ups) and ups[-1] > 2 * ups[0]


def _sphere_vector_losses(beta, scale, w, q=None):
    """Samplers of the privacy loss of the concrete shift ``w`` (remove, add); with ``q``
    the Poisson-subsampled pair ((1-q) Q0 + q P0, Q0) and its loss log(1 - q + q e^S)."""
    d = w.size

    def gg(rng, size):       # |X/s|^beta ~ Gamma(1/beta), random sign
        g = rng.gamma(1.0 / beta, size=(size, d)) ** (1.0 / beta)
        return scale * g * rng.choice([-1.0, 1.0], size=(size, d))

    def big_s(x):            # log p0/q0, p0 centred at 0, q0 at w
        return np.sum((np.abs(x - w) ** beta - np.abs(x) ** beta) / scale ** beta, axis=1)

    if q is None:            # symmetric: the add direction has the same law
        return (lambda rng, n: big_s(gg(rng, n))), None

    def g(s):
        return np.logaddexp(np.log1p(-q), np.log(q) + s)

    def remove(rng, n):
        x = gg(rng, n)
        x[rng.random(n) >= q] += w
        return g(big_s(x))
    return remove, (lambda rng, n: -g(big_s(gg(rng, n) + w)))


@pytest.mark.filterwarnings("ignore::sampledprv.core.advice.AdvisedWarning")   # only .lower is read
@pytest.mark.parametrize("beta", [1.0, 1.25, 1.5, 1.75, 2.5, 3.0])
def test_upper_dominates_sampled_lower_on_random_sphere_vectors(beta):
    """Random directions on the l_beta sphere, d = 4 and 64, with and without Poisson
    subsampling: the sampled accountant's lower bound (probability 1 - 1e-6 each) on
    the concrete vector never exceeds the certified upper bound over the ball."""
    scale, q, steps, delta = 1.5, 0.2, 3, 1e-3
    rng = np.random.default_rng(int(beta * 100))
    for d in (4, 64):
        w = np.abs(rng.standard_normal(d)) * rng.choice([-1.0, 1.0], size=d)
        w /= np.sum(np.abs(w) ** beta) ** (1 / beta)          # on the l_beta sphere
        vec = sp.GeneralizedGaussianVector(beta, scale, d)
        for sub in (None, q):
            spec, count = (vec, 1) if sub is None else (sp.PoissonSubsampled(vec, sub), steps)
            iv = VectorGGAccountant(0.1, orders=ORDERS, spreads=(1,)).compose(
                spec, count).epsilon(delta)
            remove, add = _sphere_vector_losses(beta, scale, w, sub)
            acc = sp.SampledAccountant(n_samples=20_000, alpha=1e-6, seed=d,
                                       tail_bounds=False)
            low = acc.compose(sp.PrivacyLossSampler(remove, add), count).epsilon(delta)
            assert 0 < low.lower <= iv.upper


@pytest.mark.parametrize("kwargs,match", [
    (dict(beta=1.5, scale=1.0, dimension=0), "dimension"),
    (dict(beta=0.5, scale=1.0, dimension=4), "beta"),
    (dict(beta=1.5, scale=1.0, dimension=4, clip_norm=0.0), "clip_norm"),
    (dict(beta=1.5, scale=-1.0, dimension=4), "scale"),
    (dict(beta=3.0, scale=1.0), "dimension is required"),
])
def test_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        sp.GeneralizedGaussianVector(**kwargs)


def test_beta_below_two_without_dimension_and_accountant_errors():
    vec = sp.GeneralizedGaussianVector(1.5, 2.0)
    assert vec.effective_dimension == 1e12
    with pytest.raises(ValueError, match="VectorGGAccountant"):
        sp.Accountant().compose(vec)
    with pytest.raises(ValueError, match="nothing composed"):
        VectorGGAccountant().epsilon(DELTA)
    with pytest.raises(ValueError, match="delta"):
        VectorGGAccountant().compose(vec).epsilon(0.0)


def test_per_direction_queries_and_contract():
    from sampledprv.core.contract import PrivacyAccountant
    acc = VectorGGAccountant(0.05, orders=ORDERS).compose(
        sp.GeneralizedGaussianVector(1.5, 3.0, 16))
    assert isinstance(acc, PrivacyAccountant) and acc.supports(sp.Gaussian(1.0))
    both = acc.epsilon(DELTA)
    for d in ("remove", "add"):
        one = acc.epsilon(DELTA, direction=d)
        assert one.upper <= both.upper and one.lower <= both.lower + 1e-12
    with pytest.raises(ValueError, match="direction"):
        acc.epsilon(DELTA, direction="both")


def test_cli_gg_vector_kind_end_to_end(capsys):
    import json

    from sampledprv.cli import main, parse_mechanism
    argv = ["epsilon", "-m", "subsampled-gg-vector beta=1.5 scale=3 dimension=16 q=0.1",
            "--count", "3", "--delta", "1e-5", "--eps-error", "0.1", "--json"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    res = out["results"][0]
    spec = sp.PoissonSubsampled(sp.GeneralizedGaussianVector(1.5, 3.0, 16), 0.1)
    want = VectorGGAccountant(0.1).compose(spec, 3).epsilon(1e-5)
    assert out["accountant"]["type"] == "vector-gg"
    assert (res["lower"], res["upper"]) == (want.lower, want.upper)
    assert parse_mechanism("ggv beta=2 sigma=1 clip_norm=0.5").build() == \
        sp.GeneralizedGaussianVector(2.0, math.sqrt(2), None, 0.5)
    # beta > 2 needs the dimension; the error says why
    assert main(["epsilon", "-m", "gg-vector beta=3 scale=1", "--delta", "1e-5"]) != 0
    assert "dimension is required" in capsys.readouterr().err
    # the vector spec has no single loss law: the sampled accountant refuses it by name
    with pytest.raises(ValueError, match="VectorGGAccountant"):
        sp.SampledAccountant(1000).compose(sp.GeneralizedGaussianVector(1.5, 3.0, 16))


def test_fractional_orders_keep_subsampling_useful_for_large_step_divergences():
    """beta = 3, d = 1000: the per-step order-2 divergence is ~15 nats, so Poisson
    subsampling barely helps at orders >= 2; the orders in (1, 2) still amplify."""
    from sampledprv.gg.vector import FRACTIONAL_ORDERS
    step = sp.PoissonSubsampled(sp.GeneralizedGaussianVector(3.0, math.sqrt(2), 1000), 0.01)
    ints = tuple(a for a in VECTOR_ORDERS if a not in FRACTIONAL_ORDERS)
    full = VectorGGAccountant(spreads=(1,)).compose(step, 200).epsilon(DELTA)
    whole = VectorGGAccountant(orders=ints, spreads=(1,)).compose(step, 200).epsilon(DELTA)
    assert full.lower == whole.lower <= full.upper < 0.2 * whole.upper


def test_quadrature_overflow_is_refused_with_the_fix():
    """Tiny noise at a high order makes a quadrature cell overflow (inf - inf): a
    ValueError that names the order and what to change, not numpy's message about
    negative repeat counts."""
    from sampledprv.rdp.gg_excess import gg_excess_bounds_many
    from sampledprv.rdp.gg_vector import shift_grid
    with pytest.raises(ValueError, match="use lower Renyi orders"):
        gg_excess_bounds_many(4.0, 6.3406 * shift_grid(319.57), 192.0)


def _integrate_every_shift_every_round(a, b, ds, tss, u_ends, refs, rtol, cap_per_shift):
    """The Renyi quadrature's refinement as it was before finished shifts left the node
    array: every shift's cells computed in every round (the reference of the test below)."""
    from sampledprv.rdp import gg_excess as gx  # noqa: PLC0415 - private helpers

    nodes, seg = gx._initial_nodes(ds, tss, u_ends)
    n = len(ds)
    s_lo = s_up = np.zeros(n)
    for _round in range(14):
        same = seg[:-1] == seg[1:]
        cseg = seg[:-1]
        cell_up, cell_lo = gx._cells_kernel(nodes, seg, ds, refs, a, b)
        s_up = np.bincount(cseg, weights=cell_up, minlength=n) * (1.0 + 1e-12)
        s_lo = np.bincount(cseg, weights=cell_lo, minlength=n) * (1.0 - 1e-12)
        done = (s_lo > 0) & (s_up - s_lo <= rtol * s_lo)
        if done.all():
            break
        gap = np.where(done[cseg], 0.0, cell_up - cell_lo)
        root = np.sqrt(np.maximum(gap, 0.0))
        rsum = np.bincount(cseg, weights=root, minlength=n)
        k = np.ceil(root * (rsum / (0.5 * rtol * np.maximum(s_lo, 1e-300)))[cseg])
        k = np.where(same, np.clip(k, 1, 4096), 1).astype(np.int64)
        cap = cap_per_shift * n
        if int(k.sum()) > cap:
            k = np.maximum(1, (k * (cap / k.sum())).astype(np.int64))
        if int(k.sum()) == k.size:
            break
        nodes, seg = gx._split_cells(nodes, seg, k)
    return s_lo, s_up


@pytest.mark.parametrize("beta,order,cap_per_shift", [
    (1.5, 2.0, 400_000), (3.0, 8.0, 400_000), (3.0, 8.0, 1_000), (4.0, 33.0, 1_000),
    (4.0, 33.0, 2_000)])
def test_quadrature_drops_finished_shifts_bit_for_bit(monkeypatch, beta, order, cap_per_shift):
    """Shifts whose bracket met rtol leave the node array: the sums are those of
    refining every shift in every round, bit for bit, with the node cap far off and
    binding (the cap still counts the nodes that left)."""
    from sampledprv.rdp import gg_excess as gx  # noqa: PLC0415 - private helpers

    monkeypatch.setattr(gx, "_NODES_PER_SHIFT", cap_per_shift)
    rng = np.random.default_rng(7)
    ds = np.sort(10 ** rng.uniform(-4, 0.5, 24))
    setups = [gx._setup(order, beta, float(d)) for d in ds]
    tss, refs, u_ends, _ = (np.array(x) for x in zip(*setups))
    for rtol in (1e-2, 1e-3):
        got = gx._integrate(order, beta, ds, tss, u_ends, refs, rtol)
        want = _integrate_every_shift_every_round(order, beta, ds, tss, u_ends, refs, rtol,
                                                  cap_per_shift)
        assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
