"""Bennett's bound for the fine level's rounding errors (engine/concentration.py) and
the certified second moment it rests on (``Discretized.second_moment``,
``engine/discretize.second_moment_bound``).

* The second moment ``E[(Y - R)^2 | window]`` of nearest rounding is bounded from the
  half-bucket masses (design notes, "Bennett's bound for the fine level"): checked
  against a 64-sub-bucket reference, which brackets the truth (each sub-bucket's mass
  times the least and the largest ``u^2`` on it), for every family of the shift's tests,
  on staircase densities with a jump inside every bucket, and on a law with atoms.
* The tail bound is checked against the exact tail of a sum of uniform rounding errors
  (Irwin-Hall, 50 digits), against Bennett's closed form and Hoeffding's bound.
* The accountant plans with the Bennett weight where it may, falls back to Hoeffding's
  plan when the certified variance exceeds what it assumed, and its intervals contain
  the closed-form epsilon of a long Gaussian composition either way.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

import sampledprv as sp
from sampledprv.engine.concentration import phi_upper, rounding_tail_bound
from sampledprv.engine.discretize import discretize, second_moment_bound
from sampledprv.mechanisms.relations import privacy_loss

from test_discretize_mean import _cases, _staircase_law

_SUB = 64


def _second_moment_bracket(law, h: float, i0: int, m: int, sub: int = _SUB
                           ) -> tuple[float, float, float]:
    """``(lower, upper, mass)``: the window's ``sum_j int (y - c_j)^2 dF`` lies between
    ``lower`` and ``upper`` (each of ``sub`` sub-buckets per bucket charged the least and
    the largest ``u^2`` on it), up to the CDF's rounding."""
    lo_sum = hi_sum = mass = 0.0
    hs = h / sub
    # |u| at the sub-bucket edges: -h/2 + hs * (0..sub)
    edges_u = -0.5 * h + hs * np.arange(sub + 1)
    a, b = np.abs(edges_u[:-1]), np.abs(edges_u[1:])
    least = np.where(edges_u[:-1] * edges_u[1:] <= 0, 0.0, np.minimum(a, b) ** 2)
    most = np.maximum(a, b) ** 2
    for j0 in range(0, m, 1000):
        j1 = min(m, j0 + 1000)
        edges = (i0 + j0 - 0.5) * h + hs * np.arange(sub * (j1 - j0) + 1)
        cdf, sf = law.cdf_cont(edges), law.sf_cont(edges)
        lower_tail = cdf[1:] < 0.5 * law.cont_mass
        p = np.clip(np.where(lower_tail, np.diff(cdf), -np.diff(sf)), 0.0, None)
        p = p.reshape(-1, sub)
        lo_sum += float((p * least).sum())
        hi_sum += float((p * most).sum())
        mass += float(p.sum())
    return lo_sum, hi_sum, mass


@pytest.mark.parametrize("mech,direction,h", list(_cases()))
def test_second_moment_covers_the_reference(mech, direction, h):
    """``second_moment`` is at least the reference's lower end (it bounds the truth), and
    never above Hoeffding's ``h^2/4``."""
    law = privacy_loss(mech, direction)
    d = discretize(law, h, 1e-12)
    lo, hi, mass = _second_moment_bracket(law, h, d.pmf.offset, d.pmf.probs.size)
    assert d.second_moment * mass >= lo * (1 - 1e-9), (d.second_moment * mass, lo)
    assert d.rounding_variance <= 0.25 * h * h


@pytest.mark.parametrize("mech", [sp.Gaussian(1.0), sp.GeneralizedGaussian(beta=3.0, scale=2.0),
                                  sp.PoissonSubsampled(sp.Gaussian(0.8), q=0.05)],
                         ids=["gaussian", "gg-beta3", "subsampled-gaussian"])
def test_second_moment_excess_shrinks_with_the_mesh(mech):
    """The excess of ``12 v / h^2`` over 1 (the bound's ``|D|`` and turning terms) shrinks
    in proportion to ``h``, as the planner's slope predicts: five times finer, at most a
    third of it (at the reference's own excess, within 40 %)."""
    law = privacy_loss(mech, "remove")
    excess = []
    for h in (1e-2, 2e-3):
        d = discretize(law, h, 1e-12)
        _, hi, mass = _second_moment_bracket(law, h, d.pmf.offset, d.pmf.probs.size)
        excess.append(12 * d.second_moment / h ** 2 - 1)
        assert d.second_moment <= 2.5 * hi / mass
    assert excess[1] <= excess[0] / 3, excess


def test_second_moment_at_the_dp_sgd_fine_mesh_is_near_h2_over_12():
    """DP-SGD (sigma 0.8, q 4e-3) at the accountant's fine mesh for k = 1e6 (about
    3.2e-6): within 2 % of ``h^2/12`` in both directions, a third of Hoeffding's."""
    mech = sp.PoissonSubsampled(sp.Gaussian(0.8), q=4e-3)
    h = 3.2e-6
    for direction in ("remove", "add"):
        law = privacy_loss(mech, direction)
        lo, hi = law.lower_point(4e-6), law.upper_point(4e-6)
        d = discretize(law, h, 0.0, window=(int(lo / h), int(hi / h)))
        assert 12 * d.second_moment / h ** 2 <= 1.02


@pytest.mark.parametrize("alpha", [0.1, 0.5, 0.9, 0.99])
def test_second_moment_covers_staircases(alpha):
    """A density that jumps at ``alpha`` of every bucket (monotone, pieces shorter than a
    bucket): at ``alpha`` near 1 most of each bucket's extra mass sits near its upper edge,
    where the bound's ``(h^2/6)|D|`` term is spent (at ``alpha = 1/2`` the half masses tie
    and every bucket is a turning candidate, charged ``h^2/4``)."""
    h = 0.01
    law = _staircase_law(h, alpha, 100)
    d = discretize(law, h, 0.0, window=(0, 99))
    lo, hi, mass = _second_moment_bracket(law, h, 0, 100, sub=400)
    assert d.second_moment * mass >= lo * (1 - 1e-9)


def test_second_moment_bound_is_attained_by_its_extremal_density():
    """The per-bucket bound ``(h^2/12) m + (h^2/6)|D|`` is attained (in the limit) by the
    density that is flat at ``2 m_- / h`` and puts the rest ``D`` at the upper edge."""
    h, m_lo, d_mass = 1.0, 0.3, 0.2
    exact = m_lo * h * h / 12 + m_lo * h * h / 12 + d_mass * (h / 2) ** 2
    bound = second_moment_bound(h, 2 * m_lo + d_mass, d_mass, 0.0, 0.0)
    assert bound == pytest.approx(exact, rel=1e-12)


def test_second_moment_of_atoms_is_their_distance_to_the_lattice():
    """A law with atoms only: ``E[(Y - R)^2]`` is the atoms' squared distances to their
    lattice points (plus their value error), not ``h^2/4``."""
    law = privacy_loss(sp.Laplace(1.0), "remove")
    h = 0.3
    d = discretize(law, h, 1e-12)
    assert d.second_moment is not None and d.second_moment < 0.25 * h * h
    lo, hi, mass = _second_moment_bracket(law, h, d.pmf.offset, d.pmf.probs.size)
    u = law.atom_values - h * np.floor(law.atom_values / h + 0.5)
    atoms = float((law.atom_masses * u * u).sum())
    total = mass + float(law.atom_masses.sum())
    assert d.second_moment * total >= (lo + atoms) * (1 - 1e-9)


def _irwin_hall_sf(n: int, x: float) -> float:
    """``P(U_1 + ... + U_n > x)`` for uniforms on [0, 1], exactly (50 digits)."""
    with mpmath.workdps(50):
        x = mpmath.mpf(x)
        cdf = sum((-1) ** k * mpmath.binomial(n, k) * (x - k) ** n
                  for k in range(int(mpmath.floor(x)) + 1)) / mpmath.factorial(n)
        return float(1 - cdf)


@pytest.mark.parametrize("n", [10, 40])
def test_tail_bound_covers_the_exact_tail_of_uniform_errors(n):
    """Sums of ``n`` uniform rounding errors on ``[-h/2, h/2]`` (variance ``h^2/12``): the
    bound is above the exact tail and below Hoeffding's ``exp(-2 t^2 / (n h^2))``."""
    h = 0.5
    for z in (1.0, 2.0, 3.0, 4.0):
        t = z * h * math.sqrt(n / 12.0)
        exact = _irwin_hall_sf(n, n / 2 + t / h)
        bound = rounding_tail_bound(t, [(n, h * h / 12, h)], 0.0)
        assert exact <= bound <= math.exp(-2 * t * t / (n * h * h)), (z, exact, bound)


def test_tail_bound_is_bennetts_closed_form_and_never_above_hoeffding():
    """With one group and no other terms the bound is Bennett's
    ``exp(-(s/b^2) psi(b t / s))``, ``psi(u) = (1 + u) log(1 + u) - u`` (where Bennett's
    exponent is the smaller per lambda); with Hoeffding's variance ``h^2/4`` it is
    Hoeffding's; mixed with other terms it is never above Hoeffding's."""
    h, n, v = 1e-3, 10**6, 1e-6 / 12
    s = n * v
    for t in (0.5, 1.0, 2.0):
        u = h * t / s
        closed = math.exp(-(s / h ** 2) * ((1 + u) * math.log1p(u) - u))
        assert rounding_tail_bound(t, [(n, v, h)], 0.0) == pytest.approx(closed, rel=1e-6)
        hoeffding = math.exp(-2 * t * t / (n * h * h))
        assert rounding_tail_bound(t, [(n, h * h / 4, h)], 0.0) == pytest.approx(
            hoeffding, rel=1e-9)
    rng = np.random.default_rng(3)
    for _ in range(200):
        h = 10 ** rng.uniform(-7, -2)
        n = int(10 ** rng.uniform(1, 8))
        v = rng.uniform(0, 0.3) * h * h
        rest = rng.uniform(0, 3) * n * h * h
        t = rng.uniform(0.5, 6) * math.sqrt(n * h * h + rest) / 2
        b = rounding_tail_bound(t, [(n, v, h)], rest)
        assert b <= math.exp(-2 * t * t / (n * h * h + rest)) * (1 + 1e-9)


def test_phi_upper_bounds_phi():
    for x in np.concatenate([np.logspace(-12, 1, 200), [0.0]]):
        with mpmath.workdps(40):
            exact = mpmath.expm1(mpmath.mpf(x)) - mpmath.mpf(x)
        assert phi_upper(float(x)) >= exact
        assert phi_upper(float(x)) <= exact * (1 + 1e-9) + 1e-300


def test_tail_bound_refuses_bad_input():
    with pytest.raises(ValueError, match="t must be positive"):
        rounding_tail_bound(0.0, [(1, 0.1, 1.0)], 0.0)
    with pytest.raises(ValueError, match="must be >= 0"):
        rounding_tail_bound(1.0, [(1, -0.1, 1.0)], 0.0)


def _gaussian_epsilon(mu: float, delta: float) -> float:
    """Exact epsilon of the mu-GDP (Gaussian) curve at ``delta``."""
    from scipy.optimize import brentq
    from scipy.stats import norm

    def d(eps):
        return norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2) - delta
    return brentq(d, 0.0, 100.0)


def _long_gaussian(eps_error=0.01):
    sigma, k = 100.0, 20000
    acc = sp.Accountant(eps_error=eps_error, delta_error=1e-10, merge_gaussians=False)
    acc.compose(sp.Gaussian(sigma), count=k)
    return acc.epsilon(delta=1e-5), _gaussian_epsilon(math.sqrt(k) / sigma, 1e-5)


def test_long_composition_uses_bennett_and_contains_the_exact_epsilon():
    iv, exact = _long_gaussian()
    assert iv.lower <= exact <= iv.upper, (iv, exact)
    from sampledprv.analytic import build
    assert iv.details["fine_weight"] == build._BENNETT_FACTOR
    assert iv.details["rounding_bound"].startswith("Bennett")
    assert iv.details["hoeffding"] <= 0.5 * 1e-10


def test_a_plan_below_the_certified_variance_is_redone_with_hoeffding(monkeypatch):
    """A planning weight far below the certified variance (``h^2/120`` assumed) makes the
    certified term exceed its share: the build is planned again with weight 1."""
    from sampledprv.analytic import build
    monkeypatch.setattr(build, "_BENNETT_FACTOR", 0.1 / 3)
    iv, exact = _long_gaussian()
    assert iv.details["fine_weight"] == 1.0
    assert iv.details["hoeffding"] <= 0.5 * 1e-10
    assert iv.lower <= exact <= iv.upper


def test_the_slope_gate_keeps_hoeffdings_plan(monkeypatch):
    """Where the coarse laws predict a variance excess above ``_BENNETT_PREDICTED`` at the
    fine mesh, the tree is planned with Hoeffding's weight."""
    from sampledprv.analytic import build
    monkeypatch.setattr(build, "_BENNETT_PREDICTED", 1.0)
    iv, exact = _long_gaussian()
    assert iv.details["fine_weight"] == 1.0
    assert iv.lower <= exact <= iv.upper
