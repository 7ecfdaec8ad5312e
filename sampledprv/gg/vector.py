r"""The d-dimensional Generalized Gaussian mechanism, accounted over the whole
:math:`\ell_\beta` ball.

:class:`GeneralizedGaussianVector` adds i.i.d. :math:`GG(\beta, s)` noise to each of ``d``
coordinates of a query whose :math:`\ell_\beta` sensitivity is ``clip_norm`` (beta-DP-SGD's
per-step mechanism).  For ``beta != 2`` its privacy depends on how the sensitivity is
spread over the coordinates (:mod:`sampledprv.gg.dimension`), so it is answered with an
interval:

* **upper**: Renyi DP, order by order, worst case over the ball
  (:mod:`sampledprv.rdp.gg_vector`: :math:`\sum_i g_a(\Delta_i) \le d\,\hat G_a(1/d)`),
  Poisson subsampling by :mod:`sampledprv.rdp.subsampled`, composition over the orders and
  conversion (:mod:`sampledprv.rdp.conversion`);
* **lower**: the exact PLD accountant on concrete sensitivity vectors: spread evenly over
  ``m`` coordinates, :math:`\Delta_i = C m^{-1/\beta}` (a composition of ``m`` 1-D GG
  mechanisms), for ``m`` in :func:`spreads` (powers of 4 up to ``min(d, 4096)`` and
  ``d`` itself when small).  Under Poisson subsampling the loss of a spread vector is
  :math:`\log(1 - q + q e^S)` with ``S`` the sum of ``m`` 1-D losses: its law is
  computed by FFT and pushed through the subsampling map with rounding in the safe
  direction, so that the analytic accountant's lower bound for it is certified
  (:mod:`sampledprv.gg.vector_lower`).

At ``beta = 2`` the mechanism is dimension independent and the exact PLD interval of the
1-D Gaussian is returned; so is the exact 1-D interval at ``d = 1``.  :class:`VectorGGAccountant` implements the usual
``compose`` / ``epsilon`` / ``delta`` contract for compositions that contain these specs
next to any other mechanisms: the upper bound then comes from Renyi DP for every part,
the lower from the exact PLD accountant with concrete vectors.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from ..core import validation as v
from ..core.concurrency import guarded
from ..core.contract import PrivacyAccountant
from ..core.interval import DETERMINISTIC, Interval
from .vector_lower import SpreadSubsampledLower
from ..mechanisms import Mechanism, PoissonSubsampled
from ..mechanisms.generalized_gaussian_vector import GeneralizedGaussianVector
from ..rdp.accountant import RdpAccountant
from ..rdp.conversion import delta_from_rdp, epsilon_from_rdp
from ..rdp.divergence import ANCHORS
from ..mechanisms.base import as_direction
from ..analytic.accountant import Accountant

__all__ = ["GeneralizedGaussianVector", "VectorGGAccountant", "spreads", "VECTOR_ORDERS"]

#: orders of the Renyi accounting: fractional orders in (1, 2), where Poisson subsampling
#: still amplifies when the per-step divergence is large (beta > 2, large d), and the
#: quadrature anchors 2..256 (between them the subsampling sums use chords of the convex
#: (a-1) D_a, so no other integer order is computed)
FRACTIONAL_ORDERS: Tuple[float, ...] = (1.05, 1.1, 1.15, 1.2, 1.3, 1.4, 1.5, 1.75)
VECTOR_ORDERS: Tuple[float, ...] = FRACTIONAL_ORDERS + tuple(float(a) for a in ANCHORS)

_MAX_SPREAD = 4096


def spreads(dimension: float) -> List[int]:
    """The spreads ``m`` of the concrete lower-bound vectors: powers of 4 up to
    ``min(d, 4096)``, and ``d`` itself when ``d <= 4096``."""
    d = int(min(dimension, _MAX_SPREAD))
    out, m = [], 1
    while m <= d:
        out.append(m)
        m *= 4
    if d not in out:
        out.append(d)
    return out


def _direction(direction: Optional[Any]) -> Optional[str]:
    if direction is None:
        return None
    return as_direction(direction).value


def _exact_1d(vec: GeneralizedGaussianVector) -> bool:
    """The 1-D mechanism is the exact worst case: ``beta = 2`` (rotation invariance) or
    ``d = 1`` (the loss is monotone in ``|Delta| <= C``)."""
    return vec.beta == 2.0 or vec.dimension == 1


def _vector_of(mech: Mechanism) -> Optional[GeneralizedGaussianVector]:
    if isinstance(mech, GeneralizedGaussianVector):
        return mech
    if isinstance(mech, PoissonSubsampled) and isinstance(mech.mechanism,
                                                          GeneralizedGaussianVector):
        return mech.mechanism
    return None


def _default_pld(eps_error: float, delta_error: float) -> Any:
    """The default PLD accountant of :class:`VectorGGAccountant`."""
    return Accountant(eps_error, delta_error)


@guarded("compose", "composition", "epsilon", "delta", "describe", "__repr__")
class VectorGGAccountant(PrivacyAccountant):
    r"""Accountant for compositions containing :class:`GeneralizedGaussianVector`.

    Same contract as :class:`sampledprv.Accountant`: ``compose(spec, count)`` (also plain
    specs), ``epsilon(delta)`` and ``delta(epsilon)`` return an :class:`Interval`.

    * Without vector specs of ``beta != 2`` and ``d > 1``: the exact PLD interval (such
      vector specs are their 1-D mechanism, exact at ``beta = 2`` by rotation invariance
      and at ``d = 1`` because the 1-D divergences grow with ``|Delta|``).
    * Otherwise: **upper** from Renyi DP over :data:`VECTOR_ORDERS` for every part
      (:class:`sampledprv.rdp.RdpAccountant`), **lower** the largest certified lower bound
      of the exact PLD accountant over concrete sensitivity vectors (:func:`spreads`;
      under Poisson subsampling through :mod:`sampledprv.gg.vector_lower`); ``estimate``
      is the largest PLD estimate over those vectors (what a worst-case vector at least
      costs), clipped into the interval.

    Parameters
    ----------
    eps_error, delta_error : float
        Passed to the PLD accountants (lower bounds and the ``beta = 2`` path).
    orders : sequence of float, optional
        Renyi orders (default :data:`VECTOR_ORDERS`).
    accountant : callable, optional
        Factory of PLD accountants (default ``sampledprv.Accountant(eps_error, delta_error)``).
    spreads : sequence of int, optional
        Spreads ``m`` of the concrete lower-bound vectors (default :func:`spreads` of the
        largest dimension).  ``(1,)`` keeps only the one-hot vector: the cheapest lower
        end, for callers that need only the upper end (calibration).  Every spread costs
        one PLD composition (under subsampling also an ``m``-fold FFT).
    """

    def __init__(self, eps_error: float = 0.01, delta_error: float = 1e-10, *,
                 orders: Optional[Iterable[float]] = None,
                 accountant: Optional[Callable[[], Any]] = None,
                 spreads: Optional[Sequence[int]] = None) -> None:
        self.eps_error, self.delta_error = eps_error, delta_error
        Accountant(eps_error, delta_error)   # validates both
        # None: Accountant(eps_error, delta_error) (no lambda, so the accountant pickles)
        self._factory = accountant
        self.orders = tuple(VECTOR_ORDERS if orders is None else orders)
        RdpAccountant(self.orders)           # validates the orders
        if spreads is not None:
            spreads = sorted({v.positive_int("spreads", m) for m in spreads})
            if not spreads:
                raise ValueError("spreads must list at least one spread m >= 1, e.g. (1,)")
        self.lower_spreads: Optional[List[int]] = spreads
        self._composition: Dict[Mechanism, int] = {}
        self._cache: Dict[Tuple[str, float], Interval] = {}

    def compose(self, mechanism: Mechanism, count: int = 1) -> "VectorGGAccountant":
        """Add ``count`` runs of ``mechanism`` (returns ``self``)."""
        if not isinstance(mechanism, Mechanism):
            raise ValueError(f"mechanism must be a sampledprv mechanism spec, got {mechanism!r}")
        count = v.positive_int("count", count)
        self._composition[mechanism] = self._composition.get(mechanism, 0) + count
        self._cache.clear()
        return self

    @property
    def composition(self) -> Tuple[Tuple[Mechanism, int], ...]:
        """The composed ``(mechanism, count)`` pairs."""
        return tuple(self._composition.items())

    # ---- the two routes -----------------------------------------------------------------
    def _needs_rdp(self) -> bool:
        return any((vec := _vector_of(m)) is not None and not _exact_1d(vec)
                   for m in self._composition)

    def _pld(self, m: int):
        """PLD accountant of the composition with every vector spec replaced by the
        concrete vector spread over ``min(m, d)`` coordinates."""
        acc = self._factory() if self._factory is not None else \
            _default_pld(self.eps_error, self.delta_error)
        for mech, count in self._composition.items():
            vec = _vector_of(mech)
            if vec is None:
                acc = acc.compose(mech, count=count) or acc
                continue
            k = int(min(m, vec.effective_dimension))
            if k == 1 or _exact_1d(vec):
                one = vec.one_hot()
                part = PoissonSubsampled(one, mech.q) if isinstance(mech, PoissonSubsampled) \
                    else one
                acc = acc.compose(part, count=count) or acc
            elif isinstance(mech, PoissonSubsampled):
                acc = acc.compose(self._subsampled_spread(vec, k, mech.q), count=count) or acc
            else:
                acc = acc.compose(vec.spread(k), count=count * k) or acc
        return acc

    def _subsampled_spread(self, vec: GeneralizedGaussianVector, m: int,
                           q: float) -> SpreadSubsampledLower:
        r"""The lower laws of the subsampled vector spread over ``m`` coordinates
        (:mod:`sampledprv.gg.vector_lower`), with an inner shift that costs about
        ``eps_error / 2`` over the composition (the loss moves by at most the shift times
        :math:`g' \le 1`, and by about ``q`` times it on steps without the record) and a
        coupling failure of ``delta_error / 20`` in total."""
        total = sum(self._composition.values())
        subsampled = sum(c for mech, c in self._composition.items()
                         if isinstance(mech, PoissonSubsampled))
        shift = 0.5 * self.eps_error / (1.0 + 2.0 * q * subsampled)
        return SpreadSubsampledLower(vec.beta, vec.scale, vec.clip_norm, m, q, shift,
                                     0.05 * self.delta_error / total)

    def _spreads(self) -> List[int]:
        if self.lower_spreads is not None:
            return list(self.lower_spreads)
        dims = [_vector_of(m).effective_dimension for m in self._composition
                if _vector_of(m) is not None]
        return spreads(max(dims)) if dims else [1]

    def _rdp(self) -> RdpAccountant:
        acc = RdpAccountant(self.orders)
        for mech, count in self._composition.items():
            acc.compose(mech, count)
        return acc

    def _method(self, ms: Sequence[int]) -> str:
        return ("upper: Renyi DP, worst case over the l_beta ball (d * concave majorant, "
                "certified quadrature), Poisson-subsampled RDP (binomial expansion; add <= remove "
                "for symmetric bases, else Zhu-Wang Thm 6), CKS conversion; lower: exact PLD "
                "of concrete sensitivity vectors "
                f"spread over m in {list(ms)} coordinates (subsampled: FFT law of the "
                "m-coordinate loss sum, rounded down through the subsampling map)")

    def _query(self, kind: str, value: float, direction: Optional[str] = None) -> Interval:
        key = (kind, value, direction)
        if key in self._cache:
            return self._cache[key]
        if not self._composition:
            raise ValueError("nothing composed yet: call compose(mechanism, count) first")
        def pld_query(acc: Any) -> Interval:
            if kind == "epsilon":
                return acc.epsilon(value, direction=direction)
            return acc.delta(value, direction=direction)

        if not self._needs_rdp():
            iv = pld_query(self._pld(1))
            self._cache[key] = iv
            return iv
        rdp = self._rdp()
        curves = rdp.rdp
        dirs = [direction] if direction is not None else list(curves)
        conv = epsilon_from_rdp if kind == "epsilon" else delta_from_rdp
        upper = max(conv(self.orders, curves[d], value) for d in dirs)
        ms = self._spreads()
        lows, ests = [], []
        for m in ms:
            iv = pld_query(self._pld(m))
            lows.append(iv.lower)
            ests.append(iv.estimate)
        lower = max(lows)
        if lower > upper:
            raise RuntimeError(f"certified lower bound {lower} exceeds the Renyi upper bound "
                               f"{upper}; this is a bug, please report it")
        est = min(max(max(ests), lower), upper)
        iv = Interval(lower, est, upper, DETERMINISTIC, 1.0, self._method(ms),
                      {"lower_by_spread": dict(zip(ms, lows)), "orders": self.orders,
                       "rdp_remove": tuple(rdp.rdp["remove"]), "rdp_add": tuple(rdp.rdp["add"])})
        self._cache[key] = iv
        return iv

    def epsilon(self, delta: float, direction: object = None) -> Interval:
        """Certified interval for ``epsilon(delta)``: the maximum over both directions, or
        one direction (``"remove"`` / ``"add"``)."""
        delta = v.in_interval("delta", delta, 0.0, 1.0, low_open=True, high_open=True)
        return self._query("epsilon", delta, _direction(direction))

    def delta(self, epsilon: float, direction: object = None) -> Interval:
        """Certified interval for ``delta(epsilon)``: the maximum over both directions, or
        one direction."""
        epsilon = v.nonnegative("epsilon", epsilon)
        return self._query("delta", epsilon, _direction(direction))

    def tradeoff_lower_sources(self) -> list:
        """Accountants whose lower ends each bound the profile of one attained pair (the
        PLDs of the spread vectors; sampledprv/core/tradeoff.py takes the best lower trade-off
        curve over them, and the upper ends from this accountant)."""
        if not self._needs_rdp():
            return [self]
        return [self._pld(m) for m in self._spreads()]

    def describe(self) -> str:
        """How the intervals are computed (Renyi upper, PLD lower over spread vectors)."""
        return (f"VectorGGAccountant(eps_error={self.eps_error:g}, "
                f"delta_error={self.delta_error:g}): {sum(c for _, c in self.composition):,} "
                "mechanisms; upper bound from Renyi DP, lower bound from exact PLDs of "
                "concrete sensitivity vectors")

    def settings(self) -> Dict[str, Any]:
        """Type and settings (JSON-ready)."""
        return {"type": "vector-gg", "eps_error": self.eps_error,
                "delta_error": self.delta_error, "neighbouring": "add_remove"}

    def supports(self, mechanism: object) -> bool:
        """True for the specs :meth:`compose` accepts."""
        try:
            type(self)(self.eps_error, self.delta_error).compose(mechanism)
        except (TypeError, ValueError):
            return False
        return True

    def __repr__(self) -> str:
        parts = ", ".join(f"{m!r} x{c}" for m, c in self._composition.items())
        return f"VectorGGAccountant({parts})"
