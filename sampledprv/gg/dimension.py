r"""Does the d-dimensional GG mechanism with :math:`\ell_\beta` sensitivity account like 1-D?

The GG paper (App. B.2) and the package conventions (``docs/concepts.md``) state that a d-dimensional
``GG(beta, s)`` mechanism whose sensitivity is measured in the :math:`\ell_\beta` norm has
the PRV of the 1-D mechanism.  The argument only shows that the *one-hot* difference
vector :math:`\mu = (\Delta, 0, \ldots, 0)` gives the 1-D PRV; other vectors on the same
:math:`\ell_\beta` sphere give different PRVs, and the worst case is what DP needs.

For :math:`\mu` spread evenly over ``k`` coordinates, :math:`\mu_i = \Delta k^{-1/\beta}`,
the privacy loss is a sum of ``k`` independent 1-D GG losses, so its curve is exactly the
``k``-fold composition of ``GeneralizedGaussian(beta, s, sensitivity=Delta k**(-1/beta))``.
Each such pair is an admissible pair of neighbours, so

.. math::

    \max_{k \le d} \varepsilon_k(\delta) \le \varepsilon_{\text{worst}, d}(\delta),

a certified *lower* bound on the true worst case; the 1-D value :math:`\varepsilon_1` is
*not* an upper bound unless ``beta = 2`` (rotation invariance).  For ``beta > 2`` a small
loss per coordinate is about :math:`\beta\mu_i\,\mathrm{sgn}(x)|x|^{\beta-1}/s^\beta`, so the
loss is close to Gaussian with variance proportional to
:math:`\|\mu\|_2^2 = k^{1 - 2/\beta}\Delta^2`, which grows without bound with ``k``:
measured, ``beta=3, s=3, delta=1e-5``: :math:`\varepsilon_1 = 4.36`, :math:`\varepsilon_{256}
= 6.94`, :math:`\varepsilon_{4096} = 12.05`.  For ``1 < beta < 2`` the spread losses are
larger at small delta for small ``k`` (``beta=1.5, s=1``: 3.12 vs 3.18 at ``k=4``) and
smaller for large ``k``.
"""

from __future__ import annotations

from typing import Any, Dict, Iterable

from ..core.interval import Interval
from ..mechanisms import GeneralizedGaussian
from ..calibration import _accountant_factory

__all__ = ["spread_epsilons", "spread_lower_bound"]


def _factory(accountant: Any):
    return _accountant_factory(accountant)


def spread_epsilons(beta: float, scale: float, *, delta: float,
                    spreads: Iterable[int] = (1, 2, 4, 16, 64, 256),
                    sensitivity: float = 1.0, count: int = 1,
                    accountant: Any = None) -> Dict[int, Interval]:
    r"""Certified epsilon of the GG mechanism for :math:`\ell_\beta`-sensitivity vectors
    spread evenly over ``k`` coordinates, for each ``k`` in ``spreads``.

    ``result[1]`` is the 1-D (one-hot) value the paper's accounting uses; every
    ``result[k]`` is achievable by a d-dimensional mechanism with ``d >= k``.
    ``count`` composes the whole release that many times.
    """
    make = _factory(accountant)
    out: Dict[int, Interval] = {}
    for k in spreads:
        k = int(k)
        if k < 1:
            raise ValueError(f"spreads must be positive integers, got {k!r}")
        spec = GeneralizedGaussian(beta, scale, sensitivity * k ** (-1.0 / float(beta)))
        acc = make()
        acc = acc.compose(spec, count=k * int(count)) or acc
        out[k] = acc.epsilon(delta=delta)
    return out


def spread_lower_bound(beta: float, scale: float, *, delta: float, dimension: int,
                       sensitivity: float = 1.0, count: int = 1,
                       accountant: Any = None) -> Interval:
    """Certified lower bound on the worst-case epsilon of the ``dimension``-dimensional GG
    mechanism: the largest :func:`spread_epsilons` value over ``k = 1, 2, 4, ... <= d``
    (its ``lower`` end is certified; compare with the 1-D value to see the gap)."""
    ks = [1]
    while ks[-1] * 2 <= int(dimension):
        ks.append(ks[-1] * 2)
    if ks[-1] != int(dimension):
        ks.append(int(dimension))
    res = spread_epsilons(beta, scale, delta=delta, spreads=ks, sensitivity=sensitivity,
                          count=count, accountant=accountant)
    return max(res.values(), key=lambda iv: iv.lower)
