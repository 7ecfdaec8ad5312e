"""The mean-preserving shift of the discretization (``engine/discretize.py``).

``mu`` estimates ``E[Y - R | window]`` (``R`` the nearest lattice point) by Simpson's
rule on half buckets.  The coupling behind every analytic interval needs it to be the
true conditional mean (design notes, "Coupling bound"); ``k`` times its error would
shift the composed loss.  These tests hold it against a reference computed with 64
sub-buckets per bucket, for every family with a continuous privacy-loss law, and
against the bound that holds for any density of bounded variation: with
``s(y) = y - h round(y / h)`` and ``S`` its antiderivative vanishing at the bucket edges
(``|S| <= h^2 / 8``), integration by parts gives
``|int_window s dF| = |int_window S df| <= (h^2 / 8) TV(f)``.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest

import sampledprv as sp
from sampledprv.engine.discretize import discretize
from sampledprv.engine.moments import cell_moments, turning_candidates
from sampledprv.mechanisms.relations import privacy_loss
from sampledprv.core.law import LossDistribution

_SUB = 64          # sub-buckets per bucket of the reference
_CHUNK = 1000      # buckets per block of reference CDF evaluations


def _bucket_reference(law, h: float, i0: int, m: int, sub: int = _SUB
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per bucket ``i0 .. i0 + m - 1``: the mass, the first moment about the bucket's
    centre (the sum of ``sub`` sub-buckets' Simpson moments plus their masses times
    their offsets: its error is ``sub^-4`` of the bucket rule's on smooth laws) and the
    average densities of the half sub-buckets, in order."""
    masses, moments, densities = [], [], []
    for j0 in range(0, m, _CHUNK):
        j1 = min(m, j0 + _CHUNK)
        hs = h / sub
        lo = (i0 + j0 - 0.5) * h
        edges = lo + 0.5 * hs * np.arange(2 * sub * (j1 - j0) + 1)
        cdf, sf = law.cdf_cont(edges), law.sf_cont(edges)
        lower_tail = cdf[1:] < 0.5 * law.cont_mass
        halves = np.clip(np.where(lower_tail, np.diff(cdf), -np.diff(sf)), 0.0, None)
        lo_half, up_half = halves[0::2], halves[1::2]
        p = lo_half + up_half
        offset_in_bucket = hs * (np.arange(p.size) % sub + 0.5) - 0.5 * h
        mom = (hs / 3.0) * (up_half - lo_half) + p * offset_in_bucket
        masses.append(p.reshape(-1, sub).sum(1))
        moments.append(mom.reshape(-1, sub).sum(1))
        densities.append(halves / (0.5 * hs))
    return np.concatenate(masses), np.concatenate(moments), np.concatenate(densities)


def _reference(law, h: float, i0: int, m: int) -> tuple[float, float]:
    """``(E[Y - R | window], TV estimate of the density / mass)``: the density's
    variation is estimated from the half sub-bucket averages, a lower estimate of the true
    variation (the density is zero outside the window's support here)."""
    mass, moment, density = _bucket_reference(law, h, i0, m)
    padded = np.concatenate([[0.0], density, [0.0]])
    return moment.sum() / mass.sum(), float(np.abs(np.diff(padded)).sum()) / mass.sum()


@functools.lru_cache(maxsize=None)
def _spec_reference(mech, direction: str, h: float, i0: int, m: int):
    """``(per-bucket masses, per-bucket moments, (E[Y - R | window], TV estimate))`` of
    :func:`_bucket_reference` and :func:`_reference` for ``privacy_loss(mech,
    direction)``: the 64-sub-bucket reference (most of these tests' time on the GG laws)
    is computed once for the two tests of a case, which discretize identically."""
    law = privacy_loss(mech, direction)
    mass, moment, density = _bucket_reference(law, h, i0, m)
    padded = np.concatenate([[0.0], density, [0.0]])
    tv = float(np.abs(np.diff(padded)).sum()) / mass.sum()
    return mass, moment, (moment.sum() / mass.sum(), tv)


def _cases():
    gg = sp.GeneralizedGaussian
    mechanisms = {
        "gaussian": sp.Gaussian(1.0),
        "gg-beta1.5": gg(beta=1.5, scale=2.0),
        "gg-beta3": gg(beta=3.0, scale=2.0),
        "subsampled-gaussian": sp.PoissonSubsampled(sp.Gaussian(0.8), q=0.05),
        "subsampled-gg": sp.PoissonSubsampled(gg(beta=1.5, scale=2.0), q=0.05),
    }
    for name, mech in mechanisms.items():
        for direction in ("remove", "add"):
            for h in (1e-2, 2e-3):
                yield pytest.param(mech, direction, h, id=f"{name}-{direction}-{h:g}")
    # a law narrower than the mesh the accountant picks for it (k = 100 at
    # eps_error 0.01): Simpson's shift is off by 6% of h there (design notes)
    narrow = sp.PoissonSubsampled(sp.Gaussian(2.0), q=1e-4)
    yield pytest.param(narrow, "remove", 2.9e-4, id="narrow-subsampled-gaussian")


@pytest.mark.parametrize("mech,direction,h", list(_cases()))
def test_certified_shift_error_covers_the_conditional_mean(mech, direction, h):
    """``mean_error`` bounds ``|mu - E[Y - R | window]|`` (the reference), and is far
    below the a-priori bounded-variation bound ``(h^2/8) TV(f)``, which the reference
    itself satisfies."""
    law = privacy_loss(mech, direction)
    assert law.cont_mass > 0 and law.atom_values.size == 0
    d = discretize(law, h, 1e-12)
    ref, tv = _spec_reference(mech, direction, h, d.pmf.offset, d.pmf.probs.size)[2]
    bv_bound = h * h / 8.0 * tv
    assert abs(ref) <= 1.05 * bv_bound + 1e-15
    assert abs(d.pmf.shift - ref) <= d.mean_error, (d.pmf.shift, ref, d.mean_error)
    assert d.mean_error <= 0.2 * bv_bound + 1e-15, (d.mean_error, bv_bound)


@pytest.mark.parametrize("mech,direction,h", list(_cases()))
def test_bucket_moments_lie_in_the_monotone_density_bracket(mech, direction, h):
    """Per bucket, with half-bucket masses ``m_-, m_+`` and ``D = m_+ - m_-``: where the
    density is monotone on the bucket, the CDF is convex or concave there, so the
    midpoint and two-panel trapezoid rules bracket its integral and the bucket's first
    moment lies between ``(h/4) D`` and ``(h/2) D``; Simpson's ``(h/3) D`` is then within
    ``(h/6)|D|`` of it.  Only buckets holding a turning point of the density may leave
    the bracket (at most two here), and those are turning candidates
    (engine/moments.py); summed over the window Simpson is far inside the bracket (a
    quarter of it here; replacing ``h/3`` by ``h/4``, the bracket's end, would give a
    half)."""
    law = privacy_loss(mech, direction)
    d = discretize(law, h, 1e-12)
    m, i0 = d.pmf.probs.size, d.pmf.offset
    _, simpson, half_density = _bucket_reference(law, h, i0, m, sub=1)
    bracket = 0.5 * np.abs(simpson)                       # (h/6)|D| = |(h/3) D| / 2
    _, moments, _ = _spec_reference(mech, direction, h, i0, m)
    err = np.abs(simpson - moments)
    outside = err > bracket * (1 + 1e-9) + 1e-17
    assert outside.sum() <= 2, np.nonzero(outside)
    assert turning_candidates(half_density)[outside].all()
    if m > 20:                          # not the narrow law (11 buckets)
        assert err.sum() <= 0.25 * bracket.sum(), (err.sum(), bracket.sum())


def test_turning_candidates_of_a_unimodal_sequence():
    """Cells next to the peak and the two end cells; none in the monotone runs."""
    dens = np.concatenate([np.arange(1.0, 21.0), np.arange(19.0, -1.0, -1.0)])  # 40 halves
    cand = turning_candidates(dens)
    assert cand.shape == (20,)
    assert set(np.flatnonzero(cand)) == {0, 1, 8, 9, 10, 18, 19}


def test_tail_cell_moments_cover_wide_cells():
    """Cells much wider than the tail's decay (a Gaussian's far tail on a coarse mesh,
    as the core/tail split makes them): the sub-cell moments are within their bounds of
    a 1024-sub-cell reference, and the bounds shrink with the number of sub-cells."""
    law = privacy_loss(sp.Gaussian(30.0), "remove")        # loss N(mu, 2 mu), tiny mu
    mean, sd = 1 / 1800.0, math.sqrt(2 / 1800.0)
    lo = mean + 5 * sd + 0.01 * np.arange(40)
    hi = lo + 0.01
    ref_mass, ref_moment, _, _ = cell_moments(law, lo, hi, 1024, upper=True, turning="run")
    bounds = []
    for sub in (4, 16, 64):
        mass, moment, bound, _ = cell_moments(law, lo, hi, sub, upper=True, turning="run")
        assert np.allclose(mass, ref_mass, rtol=1e-12, atol=1e-300)
        assert np.all(np.abs(moment - ref_moment) <= bound), sub
        bounds.append(bound.sum())
    assert bounds[2] < bounds[1] / 8 < bounds[0] / 64


def test_accountant_reports_the_epsilon_shift():
    """The shifts' mean errors reach the interval: ``details["epsilon_shift"]`` is
    positive for a continuous law, and the interval is ``2 (eps_error + shift)`` wide
    up to the delta error terms."""
    iv = sp.Accountant(eps_error=0.01, delta_error=1e-10).compose(
        sp.PoissonSubsampled(sp.Gaussian(0.8), q=4e-3), 1000).epsilon(1e-5)
    shift = iv.details["epsilon_shift"]
    assert set(shift) == {"remove", "add"} and all(0 < s < 1e-3 for s in shift.values())
    assert iv.width <= 2 * (0.01 + max(shift.values())) + 1e-6


def test_shift_of_laws_with_atoms_places_the_atoms_exactly():
    """GG with beta = 1 has two atoms (the loss is constant beyond the two centres) and
    a continuous part between them whose density jumps at its ends: its shift is the
    atoms' exact offsets plus the continuous part's Simpson moments."""
    law = privacy_loss(sp.GeneralizedGaussian(beta=1.0, scale=2.0), "remove")
    assert law.atom_values.size == 2 and law.cont_mass > 0
    h = 1e-2
    d = discretize(law, h, 1e-12)
    ref_cont, tv = _reference(law, h, d.pmf.offset, d.pmf.probs.size)
    j = np.floor(law.atom_values / h + 0.5)
    atom_moment = float((law.atom_masses * (law.atom_values - j * h)).sum())
    mass = law.cont_mass + float(law.atom_masses.sum())
    ref = (ref_cont * law.cont_mass + atom_moment) / mass
    # the density's jumps make Simpson's error O(h^2) here, still within a tenth of
    # the bounded-variation bound of the continuous part
    assert abs(d.pmf.shift - ref) <= 0.1 * h * h / 8.0 * tv * law.cont_mass / mass


def _staircase_law(h: float, alpha: float, steps: int) -> LossDistribution:
    """A piecewise-constant increasing density on ``[-h/2, (steps - 1/2) h]`` that jumps
    at ``alpha`` of every bucket (``alpha = 0.9``: near its upper edge): every bucket's
    Simpson moment misses by ``0.7`` of its bracket ``(h/6)|D|``, all with one sign."""
    jumps = (np.arange(steps) - 0.5 + alpha) * h
    knots = np.concatenate([[-0.5 * h], jumps[:-1], [(steps - 0.5) * h]])
    levels = 1.0 + np.arange(steps)
    cum = np.concatenate([[0.0], np.cumsum(levels * np.diff(knots))])
    cum /= cum[-1]

    def cdf(y):
        return np.interp(np.asarray(y, dtype=np.float64), knots, cum)

    def sf(y):
        return np.interp(np.asarray(y, dtype=np.float64), knots, 1.0 - cum)

    return LossDistribution(cdf_cont=cdf, sf_cont=sf, cont_mass=1.0,
                            support=(knots[0], knots[-1]))


def test_bracket_is_sharp_on_staircase_cells():
    """On monotone cells with a jump at 0.9 of each, Simpson misses every moment by 0.7
    of its bracket ``(w/6)|D|``: a bound a third smaller would fail."""
    h = 0.01
    law = _staircase_law(h, 0.9, 100)
    lo = (np.arange(100) - 0.5) * h
    _, ref_moment, _ = _bucket_reference(law, h, 0, 100, sub=200)
    mass, moment, bound, _ = cell_moments(law, lo, lo + h, 1, upper=False, turning="none")
    err = np.abs(moment - ref_moment)[1:-1]           # the end cells hold the support's ends
    assert np.all(err <= bound[1:-1])
    assert np.all(err >= 0.65 * bound[1:-1]), (err / bound[1:-1]).min()


@pytest.mark.parametrize("refined", [False, True])
def test_certified_shift_error_covers_a_staircase(monkeypatch, refined):
    """A density with a jump in every bucket (monotone pieces no longer than a bucket,
    all Simpson errors of one sign): ``mean_error`` still covers the shift's error, with
    the sub-bucket refinement on and off."""
    import sampledprv.engine.discretize as disc

    if not refined:
        monkeypatch.setattr(disc, "_STEEP", 0)
        monkeypatch.setattr(disc, "_STEEP_SHARE", 10**12)
        monkeypatch.setattr(disc, "_REFINED", 0)
    h = 0.01
    law = _staircase_law(h, 0.9, 100)
    d = discretize(law, h, 0.0, window=(0, 99))
    _, moments, _ = _bucket_reference(law, h, 0, 100, sub=200)
    ref = moments.sum() / d.pmf.probs.sum()
    assert abs(d.pmf.shift - ref) <= d.mean_error
    assert abs(d.pmf.shift - ref) > 1e-3 * d.mean_error       # not vacuous


def test_narrow_law_estimate_follows_the_certified_shift():
    """The law narrower than its mesh (sigma 2, q 1e-4, k = 100, eps_error 0.01): with
    Simpson's shift the estimate was 0.00184 against 0.00096 at eps_error 1e-4 (the
    shift moved the composed loss by 1.7e-3); the refined shift brings it within 2e-4,
    and both intervals contain the fine estimate."""
    mech = sp.PoissonSubsampled(sp.Gaussian(2.0), q=1e-4)
    coarse = sp.Accountant(eps_error=0.01, delta_error=1e-12).compose(mech, 100).epsilon(1e-5)
    fine = sp.Accountant(eps_error=1e-4, delta_error=1e-12).compose(mech, 100).epsilon(1e-5)
    assert fine.width < 3e-4
    assert coarse.lower <= fine.estimate <= coarse.upper
    assert abs(coarse.estimate - fine.estimate) < 2e-4, (coarse, fine)
    assert fine.lower <= coarse.upper and coarse.lower <= fine.upper


@pytest.mark.parametrize("mech", [sp.PoissonSubsampled(sp.Gaussian(0.8), 4e-3),
                                  sp.PoissonSubsampled(sp.GeneralizedGaussian(1.5, 1.2), 0.01),
                                  sp.Laplace(2.0)],
                         ids=["subsampled-gaussian", "subsampled-gg", "laplace"])
def test_lattices_for_predictions_skip_only_the_shift_bound(mech):
    """``shift_bound=False`` (the grid planner's coarse lattices): the same masses, the
    shift within ``h/2`` of the refined one, its bound the trivial ``h``; the planner's
    predicted composed length is the one the refined lattice gives."""
    from sampledprv.engine.grid_plan import _COARSE_POINTS, check_composition, window
    law = privacy_loss(mech, "remove")
    a, b = window(law, 1e-12)
    h = (b - a) / _COARSE_POINTS
    full = discretize(law, h, 1e-12)
    bare = discretize(law, h, 1e-12, shift_bound=False)
    assert np.array_equal(full.pmf.probs, bare.pmf.probs)
    assert full.pmf.offset == bare.pmf.offset and full.outside_mass == bare.outside_mass
    assert abs(full.pmf.shift - bare.pmf.shift) <= 0.5 * h
    assert bare.mean_error == h and full.mean_error < h
    assert bare.second_moment == full.second_moment
    predicted = check_composition([(law, 1000)], h / 8, 1e-12, 1e-15, 2**30)
    lattice = discretize(law, max(h / 8, (b - a) / _COARSE_POINTS), 1e-12).pmf.trimmed()
    from sampledprv.engine.compose import _chernoff_window
    lo, hi, _ = _chernoff_window([(lattice, 1000)], math.log(1e-15))
    assert predicted == int(math.ceil((hi - lo + 2.0 * h) / (h / 8))) + 1
