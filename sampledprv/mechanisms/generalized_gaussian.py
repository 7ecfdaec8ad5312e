r"""Generalized Gaussian noise and noisy argmax (GG paper): specs, exact law, samplers, CLI.

Noise density :math:`\propto \exp(-|x/s|^\beta)` (``scipy.stats.gennorm(beta, scale=s)``).
Canonical pair :math:`P_0 = GG(\beta, s)` centred at 0, :math:`Q_0` centred at the
sensitivity :math:`\Delta`; the loss :math:`\ell(x) = (|x-\Delta|^\beta - |x|^\beta)/s^\beta`
is decreasing in :math:`x` for :math:`\beta \ge 1`, so its law is a tail of ``gennorm``
at the root of :math:`\ell(x) = y` (safeguarded Halley iteration), the same law in both
directions.  ``beta = 1`` and ``beta = 2`` use the Laplace and Gaussian closed forms.
Under substitution the :math:`\ell_\beta` sensitivity doubles (triangle inequality);
:class:`GGNMax` refuses substitution (moving a vote changes two counts).
"""

from __future__ import annotations

import functools
import math
import threading
from dataclasses import dataclass, replace
from typing import Any, Dict

from ..core import validation as v
from ..core.law import LossDistribution
from .base import Mechanism, NeighbouringRelation
from ..core.formatting import spec_number as _g
from .gaussian import _sens, gaussian_mu_pair
from ._gg_losses import gg_numpy_losses
from .laplace import laplace_eps_pair
from .registry import (CliKind, Family, Lazy, UnsupportedRelationError, register,
                       torch_from_kernel)

__all__ = ["GeneralizedGaussian", "GGNMax"]


@dataclass(frozen=True)
class GeneralizedGaussian(Mechanism):
    r"""Generalized Gaussian mechanism, noise density :math:`\propto \exp(-|x/s|^\beta)`.

    Exactly ``scipy.stats.gennorm(beta, scale=scale)`` per coordinate.  ``beta=1`` is
    Laplace with ``b = scale``; ``beta=2`` is :math:`N(0, s^2/2)`.

    Two other parameterizations are common, each with its constructor:

    * the GG paper (Rinberg et al., Definition 8) writes the density as
      :math:`\propto \exp(-|x|^\beta / \sigma)`, so :math:`\sigma = s^\beta`:
      :meth:`from_paper` (and the property :attr:`sigma_paper`);
    * a Gaussian-style noise multiplier :math:`\sigma` with ``beta=2`` exactly
      :math:`N(0, \sigma^2)`, so :math:`s = \sqrt 2 \sigma`: :meth:`from_noise_multiplier`.

    Parameters
    ----------
    beta : float
        Shape, ``beta >= 1`` (for ``beta < 1`` the loss is not monotone and the exact
        accountant does not apply).
    scale : float
        Scale ``s`` (> 0).
    sensitivity : float
        Sensitivity in the :math:`\ell_\beta` norm (> 0), the per-record (add/remove)
        bound; under substitution the accountants use ``2 * sensitivity``.
    dimension : int
        Number of noisy coordinates.  For ``beta = 2`` the privacy loss depends on the
        shift only through its L2 norm, so ``dimension`` does not matter.  For
        ``beta != 2`` it does: the GG paper's "dimension independence" (App. B.2) covers
        a sensitivity vector concentrated in one coordinate, but spreading the same
        :math:`\ell_\beta` norm over ``k`` coordinates leaks more (for ``beta > 2`` without
        bound as ``k`` grows; see :mod:`sampledprv.gg.dimension`).  The analytic
        accountant therefore refuses ``dimension > 1`` with ``beta != 2``; account such a
        release coordinate by coordinate (one 1-D spec per coordinate with its own
        sensitivity) or bound it with :func:`sampledprv.spread_lower_bound`.
    """

    beta: float
    scale: float
    sensitivity: float = 1.0
    dimension: int = 1
    symmetric = True

    def __post_init__(self) -> None:
        beta = check_beta(self.beta)
        object.__setattr__(self, "beta", beta)
        object.__setattr__(self, "scale", v.positive("scale", self.scale))
        object.__setattr__(self, "sensitivity", v.positive("sensitivity", self.sensitivity))
        object.__setattr__(self, "dimension", v.positive_int("dimension", self.dimension))
        ratio = self.sensitivity / self.scale
        # loss at the origin: (sensitivity/scale)^beta, compared in logs (no overflow)
        if math.log(ratio) * beta > math.log(v.MAX_LOSS):
            v.loss_limit(
                f"GeneralizedGaussian(beta={beta!r}, scale={self.scale!r}, "
                f"sensitivity={self.sensitivity!r})",
                "the privacy loss (sensitivity/scale)^beta",
                math.exp(math.log(ratio) * beta) if math.log(ratio) * beta < 709.0
                else math.inf,
                f"Use scale >= sensitivity / {v.MAX_LOSS:.0e}^(1/beta) "
                f"(= {self.sensitivity / v.MAX_LOSS ** (1.0 / beta):.4g} here)")
        p_big = _prob_loss_above(beta, self.scale, self.sensitivity, v.MAX_LOSS)
        if p_big > _NOT_PRIVATE_PROB:
            s_min = _scale_for(beta, self.sensitivity, v.MAX_LOSS, _NOT_PRIVATE_PROB)
            raise ValueError(
                f"GeneralizedGaussian(beta={beta:g}, scale={self.scale:g}, "
                f"sensitivity={self.sensitivity:g}) is not private in any useful sense: its "
                f"tails are light, but with beta = {beta:g} the privacy loss "
                f"(|x - sensitivity|^beta - |x|^beta) / scale^beta grows like "
                f"((|x| + sensitivity) / scale)^beta and exceeds {v.MAX_LOSS:.0e}, the "
                f"largest privacy loss the accountants represent, with probability "
                f"{p_big:.3g} (so delta(epsilon) >= {p_big:.3g} for every epsilon below it). "
                f"Use scale >= {s_min:.4g} or "
                f"a smaller beta")

    @classmethod
    def from_paper(cls, beta: float, sigma_paper: float, sensitivity: float = 1.0,
                   dimension: int = 1) -> "GeneralizedGaussian":
        r"""GG in the GG paper's parameterization: ``scale = sigma_paper ** (1 / beta)``.

        Definition 8 of Rinberg et al. ("Beyond Laplace and Gaussian: exploring the
        Generalized Gaussian mechanism for private machine learning") writes the density
        of :math:`\mathcal{N}_\beta(0, \sigma)` as proportional to
        :math:`\exp(-|x|^\beta / \sigma)`, so its :math:`\sigma` is
        :math:`s^\beta` in this package's :math:`\exp(-|x/s|^\beta)`.  Their
        Algorithm 1 draws :math:`\mathcal{N}_\beta(0, \sigma \Delta_\beta f)`:
        that is ``from_paper(beta, sigma * Delta, sensitivity=Delta)``.
        """
        beta = v._as_float("beta", beta)
        sigma_paper = v.positive("sigma_paper", sigma_paper)
        if not (1.0 <= beta < math.inf):
            raise ValueError(f"beta must be a finite number >= 1, got {beta!r}")
        return cls(beta=beta, scale=sigma_paper ** (1.0 / beta), sensitivity=sensitivity,
                   dimension=dimension)

    @property
    def sigma_paper(self) -> float:
        """The GG paper's (Definition 8) parameter, ``scale ** beta``."""
        return self.scale ** self.beta

    @classmethod
    def from_noise_multiplier(cls, beta: float, sigma: float,
                              sensitivity: float = 1.0) -> "GeneralizedGaussian":
        """GG with ``scale = sqrt(2) * sigma`` (so ``beta=2`` is exactly N(0, sigma^2))."""
        sigma = v.positive("sigma", sigma)
        return cls(beta=beta, scale=math.sqrt(2.0) * sigma, sensitivity=sensitivity)

    def one_dimensional(self) -> "GeneralizedGaussian":
        r"""The 1-D mechanism with the same privacy loss, used by every accountant.

        Exact for ``dimension == 1`` and for ``beta == 2``.  Raises :class:`ValueError`
        otherwise: for ``beta != 2`` the loss depends on how the :math:`\ell_\beta`
        sensitivity is spread over the coordinates and the 1-D accounting is not a
        worst-case bound (see :mod:`sampledprv.gg.dimension`)."""
        if self.dimension == 1:
            return self
        if self.beta == 2.0:
            return GeneralizedGaussian(self.beta, self.scale, self.sensitivity)
        raise ValueError(
            f"GeneralizedGaussian(beta={self.beta}, dimension={self.dimension}): for beta != 2 "
            "the privacy loss depends on how the l_beta sensitivity is spread over the "
            "coordinates, and the 1-D accounting is not a worst-case bound (see "
            "sampledprv.gg.dimension); for the worst case over the l_beta ball use "
            "sampledprv.GeneralizedGaussianVector(beta, scale, dimension) with "
            "sampledprv.VectorGGAccountant, or dimension=1 per coordinate with its own "
            "sensitivity")

    @property
    def std(self) -> float:
        """Noise standard deviation ``s * sqrt(Gamma(3/b) / Gamma(1/b))``."""
        return self.scale * math.sqrt(math.gamma(3.0 / self.beta) / math.gamma(1.0 / self.beta))


@dataclass(frozen=True)
class GGNMax(Mechanism):
    r"""Noisy argmax with Generalized Gaussian noise (GG paper, Theorem 2).

    Adds i.i.d. ``GG(beta, scale)`` noise to each vote count and releases the argmax.
    Accounted as the 1-D Generalized Gaussian mechanism with sensitivity 1, which is
    valid when neighbouring histograms differ in **one count by one** (a vote added or
    removed).  If a record can *move* a vote between two classes (PATE with a changed
    teacher), two counts change and this accounting is too optimistic (exact check:
    two classes, beta=2, scale=2 gives delta(0) = 2 Phi(1/2) - 1 = 0.3829 against
    2 Phi(1/(2 sqrt 2)) - 1 = 0.2763 for one count); compose
    ``GeneralizedGaussian(beta, scale)`` twice per answer instead (the argmax is
    post-processing of the two noisy counts).  For the same reason the accountants
    refuse ``GGNMax`` under the substitution relation.
    """

    beta: float
    scale: float
    symmetric = True

    def __post_init__(self) -> None:
        gg = GeneralizedGaussian(self.beta, self.scale)  # validates
        object.__setattr__(self, "beta", gg.beta)
        object.__setattr__(self, "scale", gg.scale)

    def as_generalized_gaussian(self) -> GeneralizedGaussian:
        """The 1-D GG mechanism (sensitivity 1) that dominates this argmax."""
        return GeneralizedGaussian(self.beta, self.scale, 1.0)


# ---- exact law --------------------------------------------------------------------------
def check_beta(beta: object) -> float:
    """``beta`` as a float after checking ``1 <= beta < inf`` (the shapes a
    :class:`GeneralizedGaussian` takes); for callers that validate the shape before
    they know the scale."""
    b = v._as_float("beta", beta)
    if not (1.0 <= b < math.inf):
        raise ValueError(
            f"beta must be a finite number >= 1, got {v.plain(beta)}; the Generalized "
            "Gaussian privacy loss is monotone (and exactly accountable) only for beta >= 1")
    return b


#: a GG spec whose privacy loss exceeds ``MAX_LOSS`` with a larger probability is refused
_NOT_PRIVATE_PROB = 1e-9


def _prob_loss_above(beta: float, scale: float, sens: float, limit: float) -> float:
    r"""``P(loss > limit)`` for :math:`x \sim GG(\beta, s)` (0 when it is below
    :data:`_NOT_PRIVATE_PROB`, found without scipy), loss
    :math:`(|x - \Delta|^\beta - |x|^\beta)/s^\beta` (increasing as :math:`x` falls).

    The loss exceeds ``limit`` exactly when :math:`x < -u`, :math:`u` the root of
    :math:`((u + \Delta)^\beta - u^\beta) / s^\beta = \text{limit}` (bisection in
    logs), and :math:`P(x < -u) = \tfrac12 Q(1/\beta, (u/s)^\beta)`."""
    log_limit = math.log(limit)

    def log_loss(u: float) -> float:
        if u <= 0.0:
            return beta * math.log(sens / scale)
        r = math.exp(beta * (math.log(u) - math.log(u + sens)))
        return beta * math.log((u + sens) / scale) + (math.log1p(-r) if r < 1.0 else -math.inf)

    if log_loss(0.0) > log_limit:
        return 0.5
    # quick exit: P(x < -c s) <= exp(-c^beta) / (2 Gamma(1/beta)) < 1e-9 at c^beta = 21
    # (Gamma(a, z) <= z^(a-1) e^-z for a <= 1, z >= 1; Gamma(1/beta) > 0.88): if the loss
    # there is below the limit, so is everything more likely
    if log_loss(scale * 21.0 ** (1.0 / beta)) <= log_limit and _NOT_PRIVATE_PROB >= 1e-9:
        return 0.0
    hi = scale + sens
    while log_loss(hi) <= log_limit:
        hi *= 2.0
        if hi > 1e300:
            return 0.0
    from scipy import special  # noqa: PLC0415 - scipy is slow to import; lazily

    lo = 0.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if log_loss(mid) > log_limit:
            hi = mid
        else:
            lo = mid
    t = (hi / scale) ** beta if math.log(hi / scale) * beta < 700.0 else math.inf
    return 0.0 if t == math.inf else 0.5 * float(special.gammaincc(1.0 / beta, t))


def _scale_for(beta: float, sens: float, limit: float, prob: float) -> float:
    """The smallest scale (to 1e-4 relative) with ``P(loss > limit) <= prob``."""
    lo, hi = sens * 1e-12, sens
    while _prob_loss_above(beta, hi, sens, limit) > prob:
        lo, hi = hi, 2.0 * hi
    while hi - lo > 1e-4 * hi:
        mid = 0.5 * (lo + hi)
        if _prob_loss_above(beta, mid, sens, limit) > prob:
            lo = mid
        else:
            hi = mid
    return hi


def _gg_sf(x, beta: float, scale: float):
    """``P(X > x)`` for ``X ~ gennorm(beta, scale)``, accurate in both tails."""
    import numpy as np
    from scipy import special

    x = np.asarray(x)
    t = np.asarray(np.abs(x / scale) ** beta)
    a = 1.0 / beta
    # each incomplete gamma function only where it is used (they cost most of a call;
    # elementwise, so the values are those of evaluating both everywhere).  scipy's
    # series near t = 1 take about 3 us per value (elsewhere 40-200 ns): gammaincc below
    # t = 1.1 and gammainc on [1, 1.1].  There the value is taken from the fast ones:
    #   Q(a, t) = 1 - P(a, t)                        for t < 1,
    #   Q(a, t) = Q(a+1, t) - w,  P(a, t) = P(a+1, t) + w,  w = t^a e^-t / Gamma(a+1)
    #                                                 for 1 <= t <= 1.1
    # (no tail: a = 1/beta <= 1, so P(a, t) >= P(1, t) > 0.63 for t >= 1, and Q(a, t) is
    # not small unless beta is).  The values are off by a few ulps of 1
    # (tests/test_law_accuracy.py), and the discretizer charges absolute errors: the
    # declared cdf_ulps, in ulps of 1/2
    upper = x >= 0
    lower = ~upper
    near = (t >= 1.0) & (t <= 1.1)
    out = np.empty(t.shape)
    m = upper & (t > 1.1)
    out[m] = 0.5 * special.gammaincc(a, t[m])
    m = upper & (t < 1.0)
    out[m] = 0.5 * (1.0 - special.gammainc(a, t[m]))
    m = lower & ~near
    out[m] = 0.5 + 0.5 * special.gammainc(a, t[m])
    log_gamma = math.lgamma(a + 1.0)
    for m, upper_side in ((upper & near, True), (lower & near, False)):
        if m.any():
            tn = t[m]
            w = np.exp(a * np.log(tn) - tn - log_gamma)
            out[m] = (0.5 * (special.gammaincc(a + 1.0, tn) - w) if upper_side
                      else 0.5 + 0.5 * (special.gammainc(a + 1.0, tn) + w))
    return out


def _gg_root(y_abs, beta: float, scale: float, half: float):
    r"""Solve :math:`\phi(u) = y` for ``u >= 0``, :math:`\phi(u) = (|u+a|^\beta - |u-a|^\beta)/s^\beta`
    (odd, increasing), by safeguarded Halley iteration on the bracket
    :math:`[\max(0, r-a),\ r+a]`, :math:`r = (y s^\beta / (2 a \beta))^{1/(\beta-1)}`
    (:func:`_gg_root_loop`, compiled by Numba on first use).

    ``0`` where ``y`` is 0, negative or NaN, ``inf`` where it is infinite."""
    import numpy as np

    y = np.asarray(y_abs, dtype=np.float64)
    out = np.empty(y.shape)                  # C-contiguous: its flat view is written
    sb = float(scale) ** float(beta)
    _root_kernel()(np.ascontiguousarray(y).reshape(-1), float(beta), sb, float(half),
                   out.reshape(-1))
    return out


@functools.lru_cache(maxsize=1)
def _root_kernel():
    """:func:`_gg_root_loop` compiled (disk-cached; ``nogil``, so the two directions of a
    build and the discretization's blocks solve at once; IEEE division, as numpy's).
    Only the Generalized Gaussian's law with ``beta`` other than 1 and 2 loads Numba on
    the analytic path."""
    import numba
    return numba.njit(cache=True, nogil=True, error_model="numpy")(_gg_root_loop)


def _gg_root_loop(y_abs, beta, sb, a, out):  # pragma: no cover - compiled
    r"""The roots of :func:`_gg_root`, one point at a time: Halley's step
    :math:`u - 2ff'/(2f'^2 - ff'')` (Newton's where :math:`f''` is not finite, at
    :math:`u = a`, or the denominator not positive), replaced by the bracket's midpoint
    where it leaves the bracket, until the step or the bracket is below
    ``1e-15 (|u| + a)`` (at most 100 steps; then the last iterate).  Each step takes two
    powers: :math:`|u \pm a|^{\beta-1}`, times :math:`|u \pm a|` for the
    :math:`\beta`-th power and divided by it for the second derivative.  Cubic
    convergence: on the loss grids of GG calibrations a third fewer steps than Newton's
    (the roots the same to the noise of :math:`f`, whose two powers cancel)."""
    c = 2.0 * a * beta
    e = 1.0 / (beta - 1.0)
    b1 = beta - 1.0
    for i in range(y_abs.size):
        y = y_abs[i]
        if not (math.isfinite(y) and y > 0):
            out[i] = math.inf if math.isinf(y) else 0.0
            continue
        r = min((y * sb / c) ** e, 1e300)
        lo = max(0.0, r - a)
        hi = r + a
        u = min(max(r, lo), hi)
        for _ in range(100):
            plus = abs(u + a)
            minus = u - a
            am = abs(minus)
            pp = plus ** b1
            pm = am ** b1
            f = (plus * pp - am * pm) / sb - y
            sg = 1.0 if minus > 0 else (-1.0 if minus < 0 else 0.0)
            df = beta * (pp - sg * pm) / sb
            if f < 0:
                lo = u
            if f > 0:
                hi = u
            new = u - f / df
            if am > 0.0:                     # Halley's step, where f'' is finite
                d2 = beta * b1 * (pp / plus - pm / am) / sb
                den = 2.0 * df * df - f * d2
                if den > 0.0:
                    new = u - 2.0 * f * df / den
            if not (new > lo and new < hi):
                new = 0.5 * (lo + hi)
            tol = 1e-15 * (abs(u) + a)
            if abs(new - u) <= tol or hi - lo <= tol:
                u = new
                break
            u = new
        out[i] = u


def generalized_gaussian_pair(mech: "GeneralizedGaussian | GGNMax"):
    r"""Laws of :math:`\ell` under :math:`P_0` and :math:`Q_0`, exact for :math:`\beta \ge 1`.

    The loss :math:`\ell(x) = (|x-\Delta|^\beta - |x|^\beta)/s^\beta` is decreasing in
    :math:`x`, so :math:`P_0(\ell \le y) = P(X \ge x^*(y))` with
    :math:`X \sim \mathrm{gennorm}(\beta, s)` whose tail is the regularized incomplete
    gamma function; :math:`x^*` is found by safeguarded Halley iteration.  ``beta=1`` and
    ``beta=2`` use the Laplace and Gaussian closed forms (identical laws)."""
    import numpy as np

    if isinstance(mech, GGNMax):
        mech = mech.as_generalized_gaussian()
    mech = mech.one_dimensional()
    beta, s, delta = mech.beta, mech.scale, mech.sensitivity
    if beta == 1.0:
        return laplace_eps_pair(delta / s)
    if beta == 2.0:
        return gaussian_mu_pair(np.sqrt(2.0) * delta / s)
    a = 0.5 * delta

    last = threading.local()    # each thread's last roots: (|y|, u)

    def x_star(y):
        # a mixture of the two laws (a subsampled step) asks both at the same points,
        # whose roots are the same: the second call reuses the first's
        y = np.asarray(y, dtype=np.float64)
        y_abs = np.abs(y.reshape(-1))
        seen = getattr(last, "roots", None)
        if seen is not None and np.array_equal(seen[0], y_abs):
            u = seen[1]
        else:
            u = _gg_root(y_abs, beta, s, a)
            last.roots = (y_abs, u)
        return a - np.sign(y) * u.reshape(y.shape)

    # the root x* and the incomplete gamma functions: measured at most 15 ulps of 1/2
    # off (tests/test_law_accuracy.py), so the discretizer charges 32
    under_p = LossDistribution(
        cdf_cont=lambda y: _gg_sf(x_star(y), beta, s),
        sf_cont=lambda y: _gg_sf(-x_star(y), beta, s), cont_mass=1.0, cdf_ulps=32.0)
    return under_p, under_p.negated()


# ---- samplers -------------------------------------------------------------------------------
def _numba(mech: "GeneralizedGaussian | GGNMax"):
    if isinstance(mech, GGNMax):
        mech = mech.as_generalized_gaussian()
    mech = mech.one_dimensional()
    d = mech.sensitivity / mech.scale
    if mech.beta == 1.0:
        return "laplace", [d]
    if mech.beta == 2.0:  # N(0, s^2/2): mu = D / (s / sqrt 2)
        return "gaussian", [math.sqrt(2.0) * d]
    return "gg", [d, mech.beta]


def _numpy(mech: "GeneralizedGaussian | GGNMax"):
    if isinstance(mech, GGNMax):
        return gg_numpy_losses(mech.beta, mech.scale, 1.0)
    mech = mech.one_dimensional()
    return gg_numpy_losses(mech.beta, mech.scale, mech.sensitivity)


# ---- relations -------------------------------------------------------------------------------
def _gg_relation(spec: GeneralizedGaussian, relation: NeighbouringRelation) -> GeneralizedGaussian:
    if relation is NeighbouringRelation.SUBSTITUTE:
        return replace(spec, sensitivity=2.0 * spec.sensitivity)
    return spec


def _ggnmax_relation(spec: GGNMax, relation: NeighbouringRelation) -> GGNMax:
    if relation is NeighbouringRelation.SUBSTITUTE:
        raise UnsupportedRelationError(
            f"{spec!r} cannot certify the neighbouring relation 'substitute': replacing a "
            "record can move a vote between two classes, which changes two counts; "
            f"compose GeneralizedGaussian({spec.beta}, {spec.scale}) twice per answer "
            "instead, or use neighbouring='add_remove'")
    return spec


# ---- command line ----------------------------------------------------------------------------
def sigma_to_scale(p: Dict[str, Any]) -> float:
    """``scale=`` as given, or ``sqrt(2) * sigma`` from the noise multiplier ``sigma=``."""
    if "scale" in p:
        return p["scale"]
    sigma = p["sigma"]
    if not (isinstance(sigma, float) and sigma > 0 and math.isfinite(sigma)):
        raise ValueError(f"sigma must be a positive finite number, got {sigma!r}")
    return math.sqrt(2.0) * sigma


def _build_gg(p: Dict[str, Any]) -> GeneralizedGaussian:
    return GeneralizedGaussian(p["beta"], sigma_to_scale(p), p.get("sensitivity", 1.0),
                               p.get("dimension", 1))


def _build_ggnmax(p: Dict[str, Any]) -> GGNMax:
    return GGNMax(p["beta"], sigma_to_scale(p))


def _format(m: "GeneralizedGaussian | GGNMax") -> str:
    if isinstance(m, GGNMax):
        return f"ggnmax beta={_g(m.beta)} scale={_g(m.scale)}"
    dim = "" if m.dimension == 1 else f" dimension={m.dimension}"
    return f"gg beta={_g(m.beta)} scale={_g(m.scale)}{_sens(m)}{dim}"


def _relation(spec: Any, relation: NeighbouringRelation) -> Any:
    if isinstance(spec, GGNMax):
        return _ggnmax_relation(spec, relation)
    return _gg_relation(spec, relation)


FAMILY = register(Family(
    name="generalized_gaussian", types=(GeneralizedGaussian, GGNMax),
    loss_pair=generalized_gaussian_pair, numba_source=_numba, numpy_losses=_numpy,
    for_relation=_relation,
    cli=(CliKind("gg", (("beta",), ("scale", "sigma")), ("sensitivity", "dimension"),
                 ("scale", "sigma"), "gg beta=1.5 sigma=1",
                 "Generalized Gaussian, density ~ exp(-|x/scale|^beta), beta >= 1; "
                 "sigma= is a noise multiplier (scale = sqrt(2) sigma)", _build_gg,
                 aliases=("generalized-gaussian", "generalised-gaussian", "gen-gaussian"),
                 integers=("dimension",)),
         CliKind("ggnmax", (("beta",), ("scale", "sigma")), (), ("scale", "sigma"),
                 "ggnmax beta=2 scale=5",
                 "noisy argmax with GG(beta, scale) noise on vote counts", _build_ggnmax,
                 aliases=("gnmax",))),
    format=_format,
    relations_note="GG: substitution doubles the sensitivity; GGNMax: add/remove only",
    extras={"shift_family": True},
    torch_source=torch_from_kernel(_numba),
    # certified quadrature (rdp numerics), at anchor orders only in the subsampling sums
    renyi=Lazy("sampledprv.rdp.divergence", "generalized_gaussian_renyi"), renyi_costly=True))
