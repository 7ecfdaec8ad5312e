r"""Group and user-level privacy: the pair seen by a group of ``g`` records.

:class:`Group` ``(mechanism, size=g)`` answers "what does one run of ``mechanism`` reveal
about ``g`` records together" (a user with ``g`` records, or ``g`` correlated records) with
the spec whose pair dominates the group's, and says how it was obtained (:attr:`Group.method`):

* additive noise with a sensitivity (``Gaussian``, ``Laplace``, 1-D
  ``GeneralizedGaussian``, and every shift family): the same noise with sensitivity
  :math:`g\Delta` -- the group moves the query by at most :math:`g\Delta` (triangle
  inequality of the norm), attained when the records move it the same way; **exact**;
* ``PoissonSubsampled(Gaussian(sigma, Delta), q)``: each of the ``g`` records is sampled
  independently, so :math:`K \sim \mathrm{Bin}(g, q)` of them are in the batch and the sum
  moves by at most :math:`K\Delta`: the pair is :math:`(\sum_k \binom{g}{k} q^k
  (1-q)^{g-k} N(k\Delta, \sigma^2),\ N(0, \sigma^2))`, a
  :class:`~sampledprv.mechanisms._mixtures.MixtureOfGaussians`; **exact** (add/remove);
* ``PureDP(eps)``, ``RandomizedResponse``: :math:`g\varepsilon`-DP (group privacy of pure
  DP; a certified bound, tight for some mechanisms, not for all);
* ``ApproxDP(eps, delta)``: :math:`(g\varepsilon, \delta\sum_{i<g} e^{i\varepsilon})`
  (group privacy by induction over the ``g`` records; certified, not tight in general).

``size=1`` is the mechanism itself.  Other specs are refused with a ``ValueError`` that
says what to do: bound the group from the certified composed curve
(:func:`sampledprv.claims.users.group_epsilon`, group privacy of approximate DP, valid for
any composition but loose), or account the group's own pair (a ``FinitePair`` or
``LogDensityPair`` of the group's output laws).

:func:`sampledprv.claims.users.user_level` composes a mechanism for users holding
different numbers of records with it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Tuple

from ..core import validation as v
from .base import Mechanism

from ._mixtures import MixtureOfGaussians
from .approx_dp import ApproxDP, PureDP
from .gaussian import Gaussian
from .randomized_response import RandomizedResponse
from .registry import family_of
from .subsampled import PoissonSubsampled

__all__ = ["Group"]


def _binomial(g: int, q: float) -> Tuple[Tuple[float, ...], Tuple[float, ...]]:
    ks = tuple(float(k) for k in range(g + 1))
    w = [math.comb(g, k) * q ** k * (1.0 - q) ** (g - k) for k in range(g + 1)]
    s = math.fsum(w)
    return ks, tuple(x / s for x in w)


@dataclass(frozen=True)
class Group:
    r"""The privacy of ``size`` records together in one run of ``mechanism``.

    Parameters
    ----------
    mechanism : Mechanism
        A spec (module docstring lists what is supported and how).
    size : int
        Records in the group (>= 1).

    Attributes
    ----------
    spec : Mechanism
        The spec to compose: ``sp.Accountant().compose(sp.Group(m, 4).spec, steps)``.
    method : str
        How :attr:`spec` was obtained, in words.
    exact : bool
        True when :attr:`spec`'s pair is the group's worst case (not only a bound).
    """

    mechanism: Mechanism
    size: int
    spec: Mechanism = field(init=False, repr=False)
    method: str = field(init=False, repr=False)
    exact: bool = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.mechanism, Mechanism):
            raise ValueError(f"mechanism must be a sampledprv mechanism spec, got "
                             f"{self.mechanism!r}")
        size = v.positive_int("size", self.size)
        object.__setattr__(self, "size", size)
        spec, method, exact = _group_spec(self.mechanism, size)
        object.__setattr__(self, "spec", spec)
        object.__setattr__(self, "method", method)
        object.__setattr__(self, "exact", exact)


def _group_spec(m: Mechanism, g: int) -> Tuple[Mechanism, str, bool]:

    if g == 1:
        return m, "group of size 1: the mechanism itself", True
    if isinstance(m, PoissonSubsampled):
        base = m.mechanism
        if isinstance(base, Gaussian):
            ks, w = _binomial(g, m.q)
            shifts = tuple(k * base.sensitivity for k in ks)
            return (MixtureOfGaussians(base.sigma, shifts, w),
                    f"exact: mixture of Gaussians with shifts k*{base.sensitivity:g}, "
                    f"k ~ Binomial({g}, {m.q:g}) (add/remove neighbours)", True)
        raise ValueError(
            f"Group(size={g}) of {m!r}: the group of a Poisson-subsampled mechanism is exact "
            "only for a Gaussian base (a mixture of Gaussians); for another base, bound the "
            "group from the composed curve (sp.group_epsilon(accountant, size, delta)) or "
            "account the group's pair directly (sp.LogDensityPair of the mixture over "
            "k ~ Binomial(size, q) of the base shifted k times)")
    try:
        fam = family_of(m)
    except TypeError:
        fam = None
    if fam is not None and fam.extras.get("shift_family") and hasattr(m, "sensitivity"):
        beta = getattr(m, "beta", None)
        dim = getattr(m, "dimension", 1) or 1
        if beta is not None and beta < 1 and dim > 1:
            raise ValueError(f"Group(size={g}) of {m!r}: the l_beta 'norm' with beta < 1 has "
                             "no triangle inequality in several dimensions; give the group's "
                             "sensitivity yourself (sensitivity=...)")
        return (replace(m, sensitivity=g * m.sensitivity),
                f"exact: sensitivity {g}*{m.sensitivity:g} (triangle inequality; attained "
                "when the records move the query the same way)", True)
    if isinstance(m, (PureDP, RandomizedResponse)) or \
            (isinstance(m, ApproxDP) and m.delta == 0):
        eps = m.epsilon
        return (PureDP(g * eps), f"bound: group privacy of pure DP, {g}*{eps:g}-DP", False)
    if isinstance(m, ApproxDP):
        d = min(1.0, m.delta * math.fsum(math.exp(i * m.epsilon) for i in range(g)))
        return (ApproxDP(g * m.epsilon, d),
                f"bound: group privacy of approximate DP, ({g}*eps, delta*sum_i<{g} e^(i eps))",
                False)
    raise ValueError(
        f"Group(size={g}) of {type(m).__name__}: no group bound is known to the library; "
        "supported: additive noise with a sensitivity (Gaussian, Laplace, GeneralizedGaussian, "
        "...), PoissonSubsampled(Gaussian), PureDP, RandomizedResponse, ApproxDP. For another "
        "mechanism bound the group from the composed curve (sp.group_epsilon(accountant, "
        "size, delta)) or account the group's own pair (sp.FinitePair or sp.LogDensityPair "
        "of the output laws on datasets differing in the group)")
