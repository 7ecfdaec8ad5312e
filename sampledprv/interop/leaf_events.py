r"""One dp-accounting event -> one sampledprv spec or Renyi part (no tree walking).

The reader (:mod:`sampledprv.interop.reader`) walks an event tree; what a single event
*is* lives here:

* :data:`LEAF_SPECS`: the additive leaf events (Gaussian, Laplace, discrete Laplace,
  discrete Gaussian, randomized response, ``(epsilon, delta)``, exponential mechanism,
  permute-and-flip), one function per event class name, each returning ``(spec, note)``
  with ``spec`` a :class:`~sampledprv.Mechanism`, an
  :class:`~sampledprv.interop.composition.RdpPart`, ``None`` (no privacy cost) or
  ``"nonprivate"``, and ``note`` how tight the mapping is;
* the Renyi parts of zCDP guarantees, plain and Poisson-subsampled;
* dp-accounting's truncated Poisson-sampled Gaussian pair;
* the validation of event fields (messages name ``EventClass.field``).

Noise parameters are relative to the per-record bound ``C`` (``sensitivity = 1`` in
units of ``C``); the relation's doubling under ``REPLACE_ONE`` is applied by the
accountants (:mod:`sampledprv.interop.reader`, "Sensitivity convention").
"""

from __future__ import annotations

import math
from typing import Any, Callable, Dict, Tuple

import numpy as np

from ..mechanisms import (ApproxDP, DiscreteGaussian, DiscreteLaplace, Gaussian,
                          KaryRandomizedResponse, Laplace, NeighbouringRelation,
                          PoissonSubsampled, PureDP)
from ..mechanisms._mixtures import TaggedMixture
from ..mechanisms.relations import resolve_relation
from ..mechanisms.substitution import GaussianMixturePair
from ..rdp.subsampled import (chord_bound, integer_order, subsampled_fractional_bound,
                              subsampled_general_bound, subsampled_remove_bound)
from .composition import RdpPart

__all__ = ["LEAF_SPECS"]

#: what a leaf maps to: a spec, an RdpPart, None (no privacy cost) or "nonprivate"
LeafResult = Tuple[Any, str]


# ---- naming and validating events ------------------------------------------------------------
def _name(event: Any) -> str:
    return type(event).__name__


def _refuse(event: Any, why: str) -> ValueError:
    return ValueError(f"{_name(event)} cannot be accounted by sampledprv: {why} (event: "
                      f"{event!r})")


def _positive_count(event: Any, value: Any, name: str) -> int:
    """``value`` as an ``int >= 0`` (integral floats accepted); ``ValueError`` naming
    ``EventClass.name`` otherwise."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 0:
        raise ValueError(f"{_name(event)}.{name} must be an integer >= 0, got {value!r}")
    return int(value)


def _noise(event: Any, value: Any, name: str) -> float:
    """A noise parameter as a float ``>= 0`` (NaN refused), naming ``EventClass.name``."""
    x = float(value)
    if not x >= 0.0:
        raise ValueError(f"{_name(event)}.{name} must be >= 0, got {value!r}")
    return x


# ---- zCDP guarantees as Renyi parts -------------------------------------------------------------
def _zcdp_curve(rho: float, xi: float) -> Callable[[float, str], float]:
    return lambda a, d: xi + rho * a


def _zcdp_part(rho: float, xi: float, event: Any, label: str) -> RdpPart:
    """An ``(xi, rho)``-zCDP guarantee: Renyi curve ``xi + rho * alpha`` in both directions."""
    return RdpPart(label, _zcdp_curve(rho, xi), 1, event)


def _sampled_zcdp_part(q: float, rho: float, xi: float, event: Any) -> RdpPart:
    """Poisson-subsampled (xi, rho)-zCDP under add/remove: the binomial expansion (remove)
    and Zhu & Wang 2019 Thm 6 (add), from the base bound ``xi + rho k`` which holds in both
    directions (:mod:`sampledprv.rdp.subsampled`); at other orders the smaller of the next
    integer's bound and the chord between the neighbouring integers (and, remove
    direction, the bound for orders in (1, 2))."""
    base = lambda k: xi + rho * k  # noqa: E731

    def curve(a: float, d: str) -> float:
        alpha = integer_order(a)
        whole = (lambda k: subsampled_remove_bound(k, q, base)) if d == "remove" else \
            (lambda k: subsampled_general_bound(k, q, base))
        best = whole(alpha)
        if a == alpha:
            return best
        if a > 2.0:
            best = min(best, chord_bound(a, whole))
        elif d == "remove" and q < 1.0:
            best = min(best, subsampled_fractional_bound(a, q, base(a)))
        return best
    return RdpPart(f"PoissonSampled(q={q:g}, ZCDp(rho={rho:g}, xi={xi:g}))", curve, 1, event)


# ---- the additive leaves, one function per event class -----------------------------------------
def _gaussian(event: Any, relation: NeighbouringRelation) -> LeafResult:
    """``GaussianDpEvent(z)``: ``Gaussian(sigma=z, sensitivity=1)``, exact."""
    z = _noise(event, event.noise_multiplier, "noise_multiplier")
    if z == 0.0:
        return "nonprivate", ""
    return Gaussian(sigma=z, sensitivity=1.0), "exact PLD"


def _laplace(event: Any, relation: NeighbouringRelation) -> LeafResult:
    """``LaplaceDpEvent(b)``: ``Laplace(scale=b, sensitivity=1)``, exact."""
    b = _noise(event, event.noise_multiplier, "noise_multiplier")
    if b == 0.0:
        return "nonprivate", ""
    return Laplace(scale=b, sensitivity=1.0), "exact PLD"


def _discrete_laplace(event: Any, relation: NeighbouringRelation) -> LeafResult:
    """``DiscreteLaplaceDpEvent(a, s)``: ``P(k) ~ exp(-a|k|)``, i.e. scale ``1/a``, exact."""
    a = _noise(event, event.noise_parameter, "noise_parameter")
    if a == 0.0:
        return "nonprivate", ""
    return DiscreteLaplace(scale=1.0 / a, sensitivity=event.sensitivity), "exact PLD"


def _discrete_gaussian(event: Any, relation: NeighbouringRelation) -> LeafResult:
    """``DiscreteGaussianDpEvent``: exact in one dimension with an integer sensitivity,
    else the ``(Delta^2 / 2 sigma^2)``-zCDP bound as a Renyi part."""
    s = _noise(event, event.sigma, "sigma")
    sens = float(getattr(event, "sensitivity", 1.0))
    dim = getattr(event, "dimension", None)
    if s == 0.0:
        return "nonprivate", ""
    if dim == 1 and sens.is_integer() and sens > 0:
        return DiscreteGaussian(sigma=s, sensitivity=int(sens)), "exact PLD"
    # multivariate (or unknown dimension): (Delta^2 / 2 sigma^2)-zCDP, Canonne, Kamath
    # and Steinke 2020 (Thm 14); sensitivity doubled under substitution
    d = sens * (2.0 if relation is NeighbouringRelation.SUBSTITUTE else 1.0)
    rho = d * d / (2.0 * s * s)
    return _zcdp_part(rho, 0.0, event, f"DiscreteGaussian(sigma={s:g}, sensitivity={sens:g}, "
                      f"dimension={dim}) as {rho:.6g}-zCDP"), \
        "Renyi DP (zCDP bound of the multivariate discrete Gaussian)"


def _randomized_response(event: Any, relation: NeighbouringRelation) -> LeafResult:
    """``RandomizedResponseDpEvent(p, k)``: the true value with probability ``1 - p``, else
    uniform over ``k`` buckets, i.e. ``k``-ary randomized response with
    ``epsilon = log(1 + k (1 - p) / p)``, exact."""
    p = float(event.noise_parameter)
    k = _positive_count(event, event.num_buckets, "num_buckets")
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"RandomizedResponseDpEvent.noise_parameter must lie in [0, 1], "
                         f"got {p!r}")
    if k <= 1 or p == 1.0:
        return None, ""
    if p == 0.0:
        return "nonprivate", ""
    eps = math.log1p(k * (1.0 - p) / p)
    return KaryRandomizedResponse(k=k, epsilon=eps), \
        "exact PLD (the pair of one changed value, under either relation)"


def _epsilon_delta(event: Any, relation: NeighbouringRelation) -> LeafResult:
    """``EpsilonDeltaDpEvent``: the worst case of the guarantee (``PureDP`` / ``ApproxDP``)."""
    eps, dl = float(event.epsilon), float(event.delta)
    if math.isinf(eps) or dl >= 1.0:
        return "nonprivate", ""
    spec = ApproxDP(eps, dl) if dl > 0 else PureDP(eps)
    return spec, "worst case of any (epsilon, delta)-DP mechanism (tight for the guarantee)"


def _pure_epsilon(event: Any, relation: NeighbouringRelation) -> LeafResult:
    """``ExponentialMechanismDpEvent`` / ``PermuteAndFlipDpEvent``: ``PureDP(epsilon)``."""
    eps = float(event.epsilon)
    if math.isinf(eps):
        return "nonprivate", ""
    return PureDP(eps), ("worst case of any epsilon-DP mechanism (randomized response); "
                         "tight for the guarantee, not for the mechanism")


#: additive leaf event class name -> ``f(event, relation) -> (spec, note)``; a new leaf
#: kind is one entry (the reader accounts every name here)
LEAF_SPECS: Dict[str, Callable[[Any, NeighbouringRelation], LeafResult]] = {
    "GaussianDpEvent": _gaussian,
    "LaplaceDpEvent": _laplace,
    "DiscreteLaplaceDpEvent": _discrete_laplace,
    "DiscreteGaussianDpEvent": _discrete_gaussian,
    "RandomizedResponseDpEvent": _randomized_response,
    "EpsilonDeltaDpEvent": _epsilon_delta,
    "ExponentialMechanismDpEvent": _pure_epsilon,
    "PermuteAndFlipDpEvent": _pure_epsilon,
}


# ---- truncated Poisson sampling -----------------------------------------------------------------
def _truncated(event: Any, relation: NeighbouringRelation) -> Any:
    """dp-accounting's pair for truncated Poisson sampling: with the probability ``t`` that
    the other records alone fill the batch, a substitution-like pair of shift 2 at the
    conditional rate; otherwise the Poisson-subsampled Gaussian."""
    from scipy import stats

    n = _positive_count(event, event.dataset_size, "dataset_size")
    q = float(event.sampling_probability)
    b = _positive_count(event, event.truncated_batch_size, "truncated_batch_size")
    z = _noise(event, event.noise_multiplier, "noise_multiplier")
    if not 0.0 <= q <= 1.0:
        raise ValueError("TruncatedSubsampledGaussianDpEvent.sampling_probability must lie in "
                         f"[0, 1], got {q!r}")
    if q == 0.0 or b == 0 or n == 0:
        return None
    if z == 0.0:
        return "nonprivate"
    base = resolve_relation(PoissonSubsampled(Gaussian(z), q) if q < 1.0 else Gaussian(z),
                            relation)
    t = float(stats.binom.sf(b - 1, n - 1, q))
    if t == 0.0:
        return base
    q2 = float(stats.binom.sf(b, n, q)) * b / t / n
    q2 = min(max(q2, 1e-300), 1.0)
    return TaggedMixture((1.0 - t, t), (base, GaussianMixturePair(2.0 / z, q2)), relation,
                         label=f"TruncatedSubsampledGaussian(n={n}, q={q!r}, B={b}, z={z!r})")
