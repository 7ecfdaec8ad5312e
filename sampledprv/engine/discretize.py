r"""Mean-preserving discretization of an exact privacy-loss law (Gopi, Lee, Wutschitz).

Given a law :math:`Y`, a mesh ``h`` and a tail budget ``tau``, we pick a window
``[a, b]`` with ``P(Y < a), P(b < Y < inf) <= tau`` and round every finite point in
the window to the nearest lattice point :math:`R = h\,\mathrm{round}(Y/h)`.  Then
:math:`\tilde Y = R + \mu` with the constant

.. math:: \mu = E[\,Y - R \mid a \le Y \le b\,]

so that :math:`Z = Y - \tilde Y` has conditional mean zero and range ``h``
(``Y - R`` lies in ``[-h/2, h/2]``).  This is the coupling behind the Hoeffding
bound used by :mod:`sampledprv.analytic.accountant`.

Within-bucket means of the continuous part come from Simpson's rule on the CDF at
half-mesh points, :math:`\int_{c-h/2}^{c+h/2} (y - c)\,dF = \tfrac h3 (m_+ - m_-) + O(h^5 F^{(4)})`
where :math:`m_\pm` are the masses of the upper / lower half bucket, and ``mean_error``
bounds the resulting error of ``mu`` for a piecewise monotone density
(:mod:`sampledprv.engine.moments`); atoms are placed
exactly, and their masses (and the mass at :math:`+\infty`), which the laws compute as
products of rounded factors, carry a relative error of at most ``_ATOM_REL`` (plus the
law's ``mass_rel_error``) that is reported as ``rel_error``, a relative term.  Masses are
differences of the CDF in the lower half of the distribution
and of the survival function in the upper half, so tail buckets keep full relative
accuracy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.law import LossDistribution
from . import workers
from .compose import GridTooLargeError
from .lattice import LatticePMF
from .moments import cdf_error, cell_moments, interior_extrema, subdivisions, with_neighbours


@dataclass(frozen=True, eq=False)
class Discretized:
    """A discretized law: the lattice pmf (with shift ``mu``) and the mass outside."""

    pmf: LatticePMF
    outside_mass: float     # finite mass outside the window (the "bad" event)
    mass_error: float       # bound on sum_j |rounding error of probs[j]| (absolute part)
    #: relative error bound of the point masses (atoms, +inf): c copies pay (1 + r)^c
    rel_error: float = 0.0
    #: bound on the error of each atom's loss value: c copies shift the sum by c times it
    value_error: float = 0.0
    #: the part of ``mass_error`` that lies on the window (the bucket masses' rounding,
    #: not the law's own ``mass_defect``): it may be weighted by where the curve is read
    #: (engine/error_weights.py)
    window_error: float = 0.0
    #: bound on ``|mu - E[Y - R | window]|``, the error of the shift (engine/moments.py):
    #: ``c`` copies move the composed loss by at most ``c`` times it, which the
    #: accountant adds to its epsilon slack like ``value_error``
    mean_error: float = 0.0
    #: bound on ``E[(Y - R)^2 | window]``, the second moment of the nearest-rounding
    #: error (engine/concentration.py's Bennett term); ``None``: unknown, i.e. ``h^2/4``
    second_moment: float | None = None

    @property
    def rounding_variance(self) -> float:
        """Bound on the variance of one step's rounding error ``Y - R - mu`` given the
        window: :attr:`second_moment`, and never more than ``h^2/4`` (``|Y - R| <= h/2``)."""
        quarter = 0.25 * self.pmf.h ** 2
        sm = self.second_moment
        return quarter if sm is None else min(quarter, sm)


#: relative accuracy of a point mass (an atom or the mass at +inf) as the laws build it:
#: a few rounded products such as ``(1 - delta) * expit(eps)`` or ``q * delta``
_ATOM_REL = 8 * np.finfo(np.float64).eps


#: buckets per block of CDF evaluations: the continuous part is processed block by
#: block, so that discretizing needs memory for ``probs`` and ``offsets`` only (16 bytes
#: per lattice point) instead of a dozen full-length temporaries
_BLOCK = 2**17


#: discretizations of at most this many points are kept in the law's memo (the grid
#: predictions' 2,048-point lattices, the small laws that accountants of the same spec
#: discretize again); longer ones are rebuilt rather than held in memory
_MEMO_POINTS = 2**16

#: turning-candidate buckets whose moments are recomputed on sub-buckets (the largest)
_REFINED = 16
#: sub-buckets per refined turning candidate
_REFINE_SUB = 1024
#: other buckets recomputed on sub-buckets: those with the largest brackets
#: ``(h/6)|m_+ - m_-|`` (the steepest parts of the density hold most of their sum)
_STEEP = 4096
#: ... or one in ``_STEEP_SHARE`` of all buckets, if more (long windows at fine meshes)
_STEEP_SHARE = 64
#: least sub-buckets per refined steep bucket: its bracket shrinks about
#: ``_STEEP_SUB^2``-fold
_STEEP_SUB = 4


def _continuous_part(dist: LossDistribution, lo_edge: float, h: float, m: int,
                     probs: np.ndarray, offsets: np.ndarray, shift_bound: bool = True
                     ) -> tuple[float, float, float]:
    """Add the continuous part's bucket masses to ``probs`` and their within-bucket
    offsets (Simpson) to ``offsets``; return ``(E, B, S)``: the bound ``E`` on the masses'
    rounding error, the bound ``B`` on ``|sum_j (offset_j - true moment_j)|`` and the
    bound ``S`` on the continuous part's ``sum_j int_bucket (y - c_j)^2 dF(y)``
    (:func:`second_moment_bound`).

    Half-bucket masses are differences of the CDF below the continuous part's median
    and of the survival function above it (accurate in both tails).  Each mass is a
    difference ``F(b) - F(a)`` of values with errors ``e(a), e(b)``.  For any monotone
    ``g`` with values in [0, 1] -- and every composed privacy-curve integrand is such
    a function of one component's value -- summation by parts gives
    ``|sum_j g_j (e(b_j) - e(a_j))| <= 2 max |e|``, so the error that matters is twice
    the largest CDF error (few ulps of the largest value), not the sum over buckets;
    masses clipped at zero are added on top.

    ``B`` (engine/moments.py): ``(h/6)|m_+ - m_-|`` per bucket where the density is
    monotone, ``(h/3)`` of the mass of the buckets next to a local extremum of the
    half-bucket masses (where it may turn), and the round-off of both.  The
    ``_REFINED`` heaviest turning candidates (on ``_REFINE_SUB`` sub-buckets) and the
    fewest of the ``max(_STEEP, m / _STEEP_SHARE)`` other buckets with the largest
    brackets that hold 99.9% of their sum (on ``_STEEP_SUB`` to ``4 _STEEP_SUB``
    sub-buckets, as a budget allows) are
    recomputed on sub-buckets: their moments replace Simpson's and their sub-bucket
    bounds replace theirs.

    Blocks of ``_BLOCK`` buckets run on the direction's worker threads
    (:mod:`~sampledprv.engine.workers`), the sums over blocks taken in block order: the
    same floats whatever the thread count."""
    n_masses = 2 * m

    def edges(a: int, b: int) -> np.ndarray:            # edge values a .. b-1
        return lo_edge + 0.5 * h * np.arange(a, b)

    # split near the continuous part's median (bisection on the edge index): CDF
    # differences below it, survival-function differences above it
    lo, hi = 0, n_masses
    half = 0.5 * dist.cont_mass
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if float(dist.cdf_cont(edges(mid, mid + 1))[0]) < half:
            lo = mid
        else:
            hi = mid
    split = hi
    top_f = top_s = 0.0
    clipped = 0.0
    rounding = 0.0
    turning = np.zeros(m, dtype=bool)       # buckets next to an extremum of half masses
    prev = np.zeros(0)                      # the previous block's last two half masses
    abs_d = 0.0                             # sum_j |m_+ - m_-|

    def block(ia: int):
        """One block's half masses (CDF or survival-function differences), added to its
        own slice of ``probs`` and ``offsets``; its sums come back to be added in block
        order (the same floats whatever runs the blocks)."""
        ib = min(ia + 2 * _BLOCK, n_masses)
        masses = np.empty(ib - ia)
        f_stats = s_stats = None
        if ia < split:                                  # CDF differences
            c = min(ib, split)
            F = dist.cdf_cont(edges(ia, c + 1))
            masses[: c - ia] = np.diff(F)
            f_stats = (float(np.max(F)), float(F.sum()))
        if ib > split:                                  # survival-function differences
            c = max(ia, split)
            S = dist.sf_cont(edges(c, ib + 1))
            masses[c - ia:] = -np.diff(S)
            s_stats = (float(np.max(S)), float(S.sum()))
        negative = float(-masses[masses < 0].sum())
        np.clip(masses, 0.0, None, out=masses)
        lower_half, upper_half = masses[0::2], masses[1::2]
        ja, jb = ia // 2, ib // 2
        probs[ja:jb] += lower_half + upper_half
        d_half = upper_half - lower_half
        offsets[ja:jb] += (h / 3.0) * d_half
        return masses, f_stats, s_stats, negative, float(np.abs(d_half).sum())

    starts = list(range(0, n_masses, 2 * _BLOCK))      # half-bucket mass indices
    group = workers.level_threads()                     # blocks in flight at once
    for g in range(0, len(starts), group):
        for ia, (masses, f_stats, s_stats, negative, absd_part) in zip(
                starts[g:g + group], workers.map_ordered(block, starts[g:g + group])):
            if f_stats is not None:
                top_f = max(top_f, f_stats[0])
                rounding += f_stats[1]
            if s_stats is not None:
                top_s = max(top_s, s_stats[0])
                rounding += s_stats[1]
            clipped += negative
            abs_d += absd_part
            seq = np.concatenate([prev, masses])
            turning[(ia - prev.size + interior_extrema(seq)) // 2] = True
            prev = seq[-2:]
    turning[0] = turning[-1] = True
    ulps = cdf_error(dist)
    candidates = with_neighbours(turning)
    second = second_moment_bound(h, float(probs.sum()), abs_d,
                                 float(probs[candidates].sum()), ulps * rounding)
    if not shift_bound:             # a lattice for predictions: no bound (mean_error is h)
        return 2.0 * ulps * max(top_f, top_s) + clipped, np.inf, second
    bound = 2.0 * h * ulps * rounding + _moment_bound(
        dist, lo_edge, h, split, probs, offsets, candidates)
    return 2.0 * ulps * max(top_f, top_s) + clipped, bound, second


def second_moment_bound(h: float, mass: float, abs_d: float, turning_mass: float,
                        value_error: float) -> float:
    r"""Bound on :math:`\sum_j \int_{c_j - h/2}^{c_j + h/2} (y - c_j)^2\,dF(y)` over the
    buckets of a continuous part, from the half-bucket masses :math:`m_\pm`.

    On a bucket where the density ``f`` is monotone (say increasing; ``D = m_+ - m_- >= 0``),
    with ``u = y - c``: on the lower half ``u^2`` decreases while ``f`` increases, so
    (Chebyshev's integral inequality) :math:`\int_{-h/2}^0 u^2 f \le \tfrac{h^2}{12} m_-`;
    on the upper half ``f >= f(0) >= 2 m_- / h`` (the lower half's average), so
    ``f = 2 m_- / h + g`` with ``g >= 0`` of mass ``D``, and
    :math:`\int_0^{h/2} u^2 f \le \tfrac{h^2}{12} m_- + \tfrac{h^2}{4} D`. Together, and the
    same for a decreasing density,

    .. math:: \int u^2\,dF \le \tfrac{h^2}{12} (m_- + m_+) + \tfrac{h^2}{6} |m_+ - m_-|.

    A bucket that may hold a turning point (the turning candidates of
    :mod:`~sampledprv.engine.moments`) is bounded by :math:`\tfrac{h^2}{4}(m_- + m_+)`
    (``|u| <= h/2``), i.e. by the above plus at most :math:`\tfrac{h^2}{6}` of its mass.
    The coefficient of every half mass is at most :math:`h^2/4`, so the masses' rounding
    (``value_error``: the sum of the CDF values' errors; each half mass is a difference of
    two) adds at most :math:`\tfrac{h^2}{4} \cdot 2` of it.

    Parameters
    ----------
    h : float
        The mesh (loss units, nats).
    mass : float
        The buckets' computed mass :math:`\sum_j (m_- + m_+)`.
    abs_d : float
        :math:`\sum_j |m_+ - m_-|`.
    turning_mass : float
        The computed mass of the turning candidates.
    value_error : float
        Bound on the sum of the absolute errors of the CDF values the half masses are
        differences of.
    """
    return (h * h / 12.0) * mass + (h * h / 6.0) * (abs_d + turning_mass) \
        + 0.5 * h * h * value_error


def _moment_bound(dist: LossDistribution, lo_edge: float, h: float, split: int,
                  probs: np.ndarray, offsets: np.ndarray, candidates: np.ndarray) -> float:
    """The bound on ``|sum_j (offset_j - true moment_j)|`` apart from round-off, given
    Simpson's ``offsets`` and the turning ``candidates``; refines the heaviest
    candidates and the steepest other buckets on sub-buckets in place (see
    :func:`_continuous_part`).  ``split``: the first half-bucket index whose mass is a
    survival-function difference."""
    m = probs.size
    cand = np.flatnonzero(candidates)
    bound = 0.0
    crude = (h / 3.0) * probs[cand]
    if cand.size > _REFINED > 0:                        # a partition: cand may be long
        refine = cand[np.argpartition(crude, cand.size - _REFINED)[cand.size - _REFINED:]]
    else:
        refine = cand[:_REFINED]
    bound += float(crude.sum()) - float((h / 3.0) * probs[refine].sum())
    # the steepest buckets that are no turning candidates: |offsets| = (h/3)|D|
    steep_size = np.abs(offsets)
    steep_size[candidates] = 0.0
    n_steep = max(_STEEP, m // _STEEP_SHARE)
    if n_steep == 0:
        steep = np.zeros(0, dtype=np.int64)
    elif m > n_steep:
        steep = np.argpartition(steep_size, m - n_steep)[m - n_steep:]
    else:
        steep = np.arange(m)
    steep = steep[steep_size[steep] > 0]
    # keep the fewest (largest first) that hold all but 0.1% of the brackets' sum, so that
    # they can be cut finer within the same budget
    total_bracket = float(steep_size.sum())
    if steep.size:
        steep = steep[np.argsort(steep_size[steep])[::-1]]
        held = np.cumsum(steep_size[steep])
        steep = steep[:int(np.searchsorted(held, 0.999 * total_bracket)) + 1]
    bound += 0.5 * (total_bracket - float(steep_size[steep].sum()))
    del steep_size
    # sub-buckets for the steep buckets: within a budget of max(m / 4, 2^15) sub-buckets
    # (the discretization itself evaluates 2m + 1 edges), between 4 and 16 each
    steep_sub = subdivisions(max(m // 4, 2**15) // 2, steep.size, _STEEP_SUB, 4 * _STEEP_SUB)
    for js_all, sub, turning_mode in ((refine, _REFINE_SUB, "cell"),
                                      (steep, steep_sub, "none")):
        for upper in (False, True):
            js = js_all[(2 * js_all + 1 >= split) == upper]
            if js.size:
                lo_j = lo_edge + js * h
                _, moment, b, _ = cell_moments(dist, lo_j, lo_j + h, sub, upper=upper,
                                               turning=turning_mode)
                offsets[js] = moment
                bound += float(b.sum())
    return bound


def discretize(dist: LossDistribution, h: float, tau: float,
               max_size: int | None = None, *,
               window: tuple[int, int] | None = None,
               shift_bound: bool = True) -> Discretized:
    """Mean-preserving lattice version of ``dist`` on mesh ``h`` (see module docstring).

    The window (and so the number of lattice points) is found before anything is
    allocated; :class:`~sampledprv.engine.compose.GridTooLargeError` is raised when it
    has more than ``max_size`` points.  ``window=(i0, i1)`` imposes the lattice indices
    instead (``tau`` is then unused): the buckets ``[(i - 1/2) h, (i + 1/2) h]`` for
    ``i0 <= i <= i1``, everything else counted as outside.

    ``shift_bound=False`` skips the refinement of the within-bucket moments on
    sub-buckets (:func:`_moment_bound`), which for a coarse lattice costs many times the
    lattice itself: the shift ``mu`` is then Simpson's and its bound ``mean_error`` the
    trivial ``h``.  For lattices whose shape only is used (the grid planner's predicted
    lengths and spreads, which a common shift does not change)."""
    if window is None:
        a = dist.lower_point(tau)
        b = dist.upper_point(tau)
        i0 = int(np.floor(a / h + 0.5))
        i1 = max(int(np.floor(b / h + 0.5)), i0)
    else:
        i0, i1 = int(window[0]), int(window[1])
    m = i1 - i0 + 1
    if max_size is not None and m > max_size:
        raise GridTooLargeError(m, max_size)
    if m > _MEMO_POINTS:
        return _discretize(dist, h, i0, i1, shift_bound)
    # the tuning constants are part of the key (tests switch the refinements off)
    key = ("discretize", float(h), i0, i1, _BLOCK, _REFINED, _REFINE_SUB, _STEEP,
           _STEEP_SHARE, _STEEP_SUB, bool(shift_bound))
    if key not in dist.memo:
        out = _discretize(dist, h, i0, i1, shift_bound)
        out.pmf.probs.flags.writeable = False      # shared by every later caller
        dist.memo[key] = out
    return dist.memo[key]


def _discretize(dist: LossDistribution, h: float, i0: int, i1: int,
                shift_bound: bool = True) -> Discretized:
    """:func:`discretize` on the lattice indices ``i0..i1`` (the buckets
    ``[(i - 1/2) h, (i + 1/2) h]``)."""
    m = i1 - i0 + 1
    lo_edge = (i0 - 0.5) * h
    hi_edge = (i1 + 0.5) * h
    probs = np.zeros(m)
    offsets = np.zeros(m)
    outside = 0.0
    mass_error = 0.0
    moment_bound = 0.0
    second = 0.0            # bound on sum over the window of (Y - R)^2 times the mass
    if dist.cont_mass > 0:
        mass_error, moment_bound, second = _continuous_part(dist, lo_edge, h, m, probs,
                                                            offsets, shift_bound)
        outside += float(dist.cdf_cont(np.array([lo_edge]))[0])
        outside += float(dist.sf_cont(np.array([hi_edge]))[0])
    if dist.atom_values.size:
        # lattice indices as floats first: an atom far outside the window (a huge loss)
        # must not overflow the integer conversion
        jf = np.floor(dist.atom_values / h + 0.5)
        inside = (jf >= i0) & (jf <= i1)
        j = (jf[inside] - i0).astype(np.int64)
        np.add.at(probs, j, dist.atom_masses[inside])
        du = dist.atom_values[inside] - (j + i0) * h
        np.add.at(offsets, j, dist.atom_masses[inside] * du)
        # an atom's rounding error is its distance to the lattice point (its value is
        # within value_error of the truth, its mass within a relative few ulps)
        second += float((dist.atom_masses[inside]
                         * (np.abs(du) + float(dist.value_error)) ** 2).sum()) \
            * (1.0 + 2.0 * _ATOM_REL + float(dist.mass_rel_error))
        outside += float(dist.atom_masses[~inside].sum())
    # point masses are products of rounded factors: each carries a relative error of a
    # few ulps (_ATOM_REL on top of the law's own mass_rel_error), and so does the mass
    # at +inf; atoms sharing a bucket are summed (one more ulp per atom).  These are
    # relative errors: the composition pays (1 + rel)^count on its curve instead of
    # count times an absolute term (which limited delta to about count * 1e-14)
    rel_error = 0.0
    if dist.atom_values.size or dist.p_pos_inf > 0:
        shared = int(np.bincount(j).max()) if dist.atom_values.size and j.size else 1
        rel_error = float(dist.mass_rel_error + _ATOM_REL
                          + shared * np.finfo(np.float64).eps)
    # the law's own distance to the truth (a certified truncated tail)
    window_error = mass_error
    mass_error += float(dist.mass_defect)
    total = probs.sum()
    mu = float(offsets.sum() / total) if total > 0 else 0.0
    # clipping to [-h/2, h/2], where the true conditional mean lies, only moves mu
    # towards it
    mu = float(np.clip(mu, -0.5 * h, 0.5 * h))
    # the moments' error, and the computed window mass's: |mu| <= h/2 times its
    # relative error
    mean_error = 0.0
    if total > 0:
        mean_error = float((moment_bound + 0.5 * h * (window_error + rel_error * total))
                           / total)
        mean_error = min(mean_error, h)
    # E[(Y - R)^2 | window] <= second / (the window's true mass, at least the computed
    # one less its rounding)
    low_total = total * (1.0 - rel_error) - window_error
    second_moment = min(0.25 * h * h, second / low_total) if low_total > 0 else None
    pmf = LatticePMF(probs=probs, offset=i0, h=h, shift=mu, p_inf=dist.p_pos_inf)
    return Discretized(pmf=pmf, outside_mass=outside, mass_error=mass_error,
                       rel_error=rel_error, value_error=float(dist.value_error),
                       window_error=window_error, mean_error=mean_error,
                       second_moment=second_moment)


def relative_terms(d: Discretized, count: int, log_up: float, log_low: float,
                   shift: float) -> tuple[float, float, float]:
    r"""Add ``count`` copies of ``d``'s relative rounding to the running terms.

    With every point mass within a relative ``r`` of the truth and every atom value
    within ``e``, the exact curve of a composition satisfies
    :math:`\prod_i (1 - r_i)^{c_i}\,\delta_{\rm tab}(\varepsilon + s) \le \delta(\varepsilon)
    \le \prod_i (1 + r_i)^{c_i}\,\delta_{\rm tab}(\varepsilon - s)`, :math:`s = \sum_i c_i e_i`
    (expand each product of masses; the integrand :math:`(1 - e^{\varepsilon - y})_+`
    is increasing in ``y``).  The shift also takes ``count`` times ``d.mean_error``: the
    rounding errors ``Z = Y - R - mu`` have conditional means within ``mean_error`` of
    zero, so Hoeffding's bound holds for their sum minus at most that much per copy.
    Returns the updated ``(log upper factor, log lower factor, shift)``."""
    r = min(d.rel_error, 0.5)
    return (log_up + count * float(np.log1p(r)), log_low + count * float(np.log1p(-r)),
            shift + count * (d.value_error + d.mean_error))
