r"""Upper bounds on the Renyi divergence of built-in mechanism specs.

:func:`renyi_divergence` returns, for order :math:`\alpha > 1`, a certified upper bound on

* ``direction="remove"``: :math:`D_\alpha(P\|Q)`, the pair ``(M(D + x), M(D))``;
* ``direction="add"``: :math:`D_\alpha(Q\|P)`,

maximised over all neighbouring pairs the spec describes (the conventions of
:func:`sampledprv.mechanisms.relations.privacy_loss`).  Where the bound comes from:

* the family's record, its :attr:`~sampledprv.mechanisms.registry.Family.renyi` plug-in
  (Gaussian, Laplace, randomized response, pure and approximate DP, the batch samplers;
  any new family the same way, with no edit here).  Bounds that need this package's
  numerics are defined here or beside it and named in the record by reference
  (:class:`~sampledprv.mechanisms.registry.Lazy`): :func:`generalized_gaussian_renyi`,
  :func:`symmetric_pair_renyi`, :func:`sampledprv.rdp.gg_vector.vector_spec_renyi`;
* the subsampling expansions here, for ``PoissonSubsampled``;
* :func:`register_divergence`, for spec types outside the registry.

Per spec (all cover both directions):

* ``Gaussian``: :math:`\alpha\mu^2/2` (exact);
* ``Laplace`` (:math:`\varepsilon = \Delta/b`): :math:`\frac{1}{\alpha-1}\log\big(
  \frac{\alpha}{2\alpha-1}e^{(\alpha-1)\varepsilon} + \frac{\alpha-1}{2\alpha-1}
  e^{-\alpha\varepsilon}\big)` (exact; Mironov 2017, "Renyi differential privacy",
  Table II);
* ``GeneralizedGaussian`` (1-D) and ``GGNMax``: certified quadrature
  (:mod:`sampledprv.rdp.gg_quadrature`);
* ``RandomizedResponse``, ``PureDP``, ``ApproxDP`` with ``delta = 0``:
  :math:`\frac{1}{\alpha-1}\log\frac{e^{\alpha\varepsilon} + e^{(1-\alpha)\varepsilon}}
  {1+e^\varepsilon}` (exact for randomized response; every :math:`\varepsilon`-DP pair
  is a post-processing of it, Kairouz, Oh & Viswanath 2015);
* ``PoissonSubsampled``: :mod:`sampledprv.rdp.subsampled` (binomial expansion for the
  remove direction; for the add direction the same bound when the base is symmetric,
  Zhu & Wang 2019 Thm 6 otherwise; integer orders; other orders by the chord of the
  convex :math:`(\alpha-1)D_\alpha` between the neighbouring integers, and for a
  Gaussian base by the certified series of :mod:`sampledprv.rdp.sampled_gaussian`).

``ApproxDP`` with ``delta > 0`` has infinite Renyi divergence and is refused.  Every
floating-point result is rounded up (:mod:`sampledprv.core.outward`).
"""

from __future__ import annotations

import functools
import math
from typing import Callable, Dict, Optional

from ..core import validation as v
from ..mechanisms import Gaussian, GGNMax, Mechanism, PoissonSubsampled
from ..mechanisms.registry import family_of
from ..core.outward import up
from .gg_quadrature import gg_renyi_bounds
from .sampled_gaussian import sampled_gaussian_renyi
from .subsampled import (chord_bound, integer_order, subsampled_fractional_bound,
                         subsampled_general_bound, subsampled_remove_bound)

__all__ = ["renyi_divergence", "DIRECTIONS", "register_divergence", "spec_divergence",
           "generalized_gaussian_renyi", "symmetric_pair_renyi"]

DIRECTIONS = ("remove", "add")

#: extra spec types: ``type -> f(spec, order, direction) -> float`` (upper bound)
_REGISTRY: Dict[type, Callable[[Mechanism, float, str], float]] = {}


def register_divergence(spec_type: type, bound: Callable[[Mechanism, float, str], float]) -> None:
    """Teach :func:`renyi_divergence` a new spec type (``bound(spec, order, direction)``
    must return a certified upper bound)."""
    _REGISTRY[spec_type] = bound
    _integer_sum_cached.cache_clear()
    _spec_bound_cached.cache_clear()


def _check(order: object, direction: str) -> float:
    a = v._as_float("order", order)
    if not 1.0 < a < math.inf:
        raise ValueError(f"order must be a finite number > 1, got {order!r}; Renyi "
                         "divergences of order <= 1 are not supported here")
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be 'remove' (D(P||Q)) or 'add' (D(Q||P)), "
                         f"got {direction!r}")
    return a


#: anchor orders of quadrature-based bounds (between them: chords of (a-1) D_a)
ANCHORS = (2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 48, 64, 96, 128, 192, 256)


def _anchors_around(k: int) -> tuple:
    """Neighbouring anchor orders ``l1 <= k <= l2`` (:data:`ANCHORS`, then x1.5)."""
    anchors = list(ANCHORS)
    while anchors[-1] < k:
        anchors.append(int(math.ceil(anchors[-1] * 1.5)))
    if k in anchors:
        return k, k
    i = next(j for j, x in enumerate(anchors) if x > k)
    return anchors[i - 1], anchors[i]


def _base_fn(spec: Mechanism, direction: str) -> Callable[[int], float]:
    r"""``k -> upper bound on D_k`` for the subsampling sums.

    For specs whose bound needs quadrature, orders between anchors are bounded by the
    chord of :math:`K(\alpha) = (\alpha - 1)D_\alpha`, which is convex in :math:`\alpha`
    (a cumulant generating function; a supremum over pairs of convex functions is convex),
    so the chord through upper bounds at the anchors lies above it."""
    cache: Dict[int, float] = {}
    expensive = _costly(spec)

    def direct(k: int) -> float:
        if k not in cache:
            cache[k] = spec_divergence(spec, float(k), direction)
        return cache[k]

    def f(k: int) -> float:
        if not expensive:
            return direct(k)
        l1, l2 = _anchors_around(k)
        if l1 == l2:
            return direct(k)
        k1, k2 = (l1 - 1) * direct(l1), (l2 - 1) * direct(l2)
        chord = (k1 * (l2 - k) + k2 * (k - l1)) / (l2 - l1)
        return up(chord / (k - 1), max(k1, k2) / (k - 1))
    return f


def _integer_sum(spec: PoissonSubsampled, k: int, general: bool) -> float:
    """The binomial sum at integer order ``k`` (remove direction, or both directions of a
    symmetric base), or Zhu & Wang's general bound (``general``)."""
    base = spec.mechanism
    if not general:
        return subsampled_remove_bound(k, spec.q, _base_fn(base, "remove"))
    rem, add = _base_fn(base, "remove"), _base_fn(base, "add")
    return subsampled_general_bound(k, spec.q, lambda j: max(rem(j), add(j)))


#: the integer-order sums, shared by the non-integer orders around them (chords);
#: cleared by :func:`register_divergence`
_integer_sum_cached = functools.lru_cache(maxsize=8192)(_integer_sum)


def _subsampled(spec: PoissonSubsampled, a: float, direction: str) -> float:
    """Integer orders: the binomial sums.  Other orders: the smallest of the next
    integer's bound, the chord of ``(a-1) D_a`` between the neighbouring integers
    (:func:`~.subsampled.chord_bound`), the bound for orders in (1, 2) and, for a Gaussian
    base, the certified series at that order (:mod:`.sampled_gaussian`)."""
    alpha = integer_order(a)
    base, q = spec.mechanism, spec.q
    general = not (direction == "remove" or base.symmetric)
    try:
        hash(spec)
        whole = lambda k: _integer_sum_cached(spec, k, general)  # noqa: E731
    except TypeError:
        whole = lambda k: _integer_sum(spec, k, general)  # noqa: E731
    best = whole(alpha)
    if a == alpha:
        return best
    if a > 2.0:
        best = min(best, chord_bound(a, whole))
    if direction == "remove" or base.symmetric:
        if 1.0 < a < 2.0 and q < 1.0:
            best = min(best, subsampled_fractional_bound(a, q, spec_divergence(base, a,
                                                                              "remove")))
        if isinstance(base, Gaussian) and q < 1.0:
            # the Gaussian is symmetric: the add direction is at most the remove direction
            best = min(best, sampled_gaussian_renyi(a, q, base.mu))
    return best


def renyi_divergence(spec: Mechanism, order: float, direction: str) -> float:
    r"""Certified upper bound on the order-``order`` Renyi divergence of ``spec``.

    Parameters
    ----------
    spec : Mechanism
        A built-in spec (see the module table) or a type added with
        :func:`register_divergence`.
    order : float
        :math:`\alpha > 1`.
    direction : {"remove", "add"}
        ``"remove"``: :math:`D_\alpha(P\|Q)`; ``"add"``: :math:`D_\alpha(Q\|P)`, with
        ``P = M(D + x)``, ``Q = M(D)``.

    Returns
    -------
    float
        An upper bound in nats (``inf`` when the divergence is infinite, e.g.
        ``RandomizedResponse(p=1)``).

    Raises
    ------
    ValueError
        Unsupported spec (e.g. ``ApproxDP`` with ``delta > 0``, multi-dimensional
        ``GeneralizedGaussian`` with ``beta != 2``), order <= 1, or an unknown direction.
    """
    a = _check(order, direction)
    if not isinstance(spec, Mechanism):
        raise ValueError(f"spec must be a sampledprv mechanism spec, got {spec!r}")
    return spec_divergence(spec, a, direction)


def _spec_bound(spec: Mechanism, a: float, direction: str) -> float:
    bound = _bound_of(spec)
    if bound is None:
        raise ValueError(f"no Renyi divergence bound for {type(spec).__name__}; supported: "
                         "Gaussian, Laplace, GeneralizedGaussian, GGNMax, RandomizedResponse, "
                         "PureDP, ApproxDP(delta=0), PoissonSubsampled of these, and every "
                         "family that registers a renyi hook")
    return float(bound(spec, a, direction))


#: bounds by (spec, order, direction): a spec is a frozen value and its bound a function
#: of it, so a sampled query's thousands of evaluations of the same few base orders (the
#: subsampling sums, the batch samplers' step moments) are computed once; cleared by
#: :func:`register_divergence`
_spec_bound_cached = functools.lru_cache(maxsize=1 << 16)(_spec_bound)


def spec_divergence(spec: Mechanism, order: float, direction: str) -> float:
    """The straight path of :func:`renyi_divergence` inside this package: the same bound,
    for a spec known to be a :class:`~sampledprv.mechanisms.Mechanism` and an order
    already a float, cached (for a hashable spec) instead of validated and dispatched on
    every call.

    Raises
    ------
    ValueError
        An order not in (1, inf), an unknown direction, or a spec with no bound.
    """
    if not 1.0 < order < math.inf or direction not in DIRECTIONS:
        _check(order, direction)                        # raises, naming the argument
    try:
        hash(spec)
    except TypeError:
        return _spec_bound(spec, order, direction)
    return _spec_bound_cached(spec, order, direction)


def generalized_gaussian_renyi(spec: Mechanism, a: float, direction: str) -> float:
    """The ``renyi`` plug-in of the Generalized Gaussian family (``GeneralizedGaussian``
    in one dimension, ``GGNMax``): the certified quadrature of
    :func:`~.gg_quadrature.gg_renyi_bounds` (the same in both directions)."""
    if isinstance(spec, GGNMax):
        spec = spec.as_generalized_gaussian()
    gg = spec.one_dimensional()                       # type: ignore[attr-defined]
    return gg_renyi_bounds(gg.beta, gg.sensitivity / gg.scale, a)[1]


def _bound_of(spec: Mechanism) -> Optional[Callable[[Mechanism, float, str], float]]:
    """The bound for ``spec``: types of :func:`register_divergence`, the subsampling
    sums, then the family's ``renyi`` plug-in (``None`` when there is none)."""
    if type(spec) in _REGISTRY:
        return _REGISTRY[type(spec)]
    for spec_type, bound in _REGISTRY.items():
        if isinstance(spec, spec_type):
            return bound
    if isinstance(spec, PoissonSubsampled):
        return _subsampled
    try:
        fam = family_of(spec)
    except TypeError:
        return None
    return fam.renyi


def _costly(spec: Mechanism) -> bool:
    """Whether the bound of ``spec`` needs quadrature (evaluated at anchors only)."""
    if any(isinstance(spec, t) for t in _REGISTRY):
        return True
    try:
        fam = family_of(spec)
    except TypeError:
        return False
    return fam.renyi is not None and fam.renyi_costly


def symmetric_pair_renyi(spec: Mechanism, a: float, direction: str) -> float:
    r"""The ``renyi`` plug-in of the symmetric dominating pair :math:`S` of fixed-size
    batches under substitution (:mod:`sampledprv.mechanisms.substitution`).  Its loss is the member's remove loss
    :math:`\ell` on :math:`\{\ell > 0\}` and at most 0 elsewhere, so
    :math:`E_S[e^{(a-1)L}] \le E_{P^*}[e^{(a-1)\ell}] + 1` and
    :math:`D_a(S) \le \log(e^{(a-1)D_a(P^*\|Q^*)} + 1)/(a-1)` in both directions (the
    pair is symmetric)."""
    d = spec_divergence(spec.member, a, "remove")      # type: ignore[attr-defined]
    if math.isinf(d):
        return math.inf
    x = (a - 1.0) * d
    return up((x + math.log1p(math.exp(-x))) / (a - 1.0))

