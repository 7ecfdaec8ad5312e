r"""Renyi-DP composition over a grid of orders.

Renyi divergences of (adaptively) composed mechanisms add order by order and direction by
direction (Mironov 2017, Prop. 1), so ``count`` runs of a mechanism with bound
:math:`\rho_i(\alpha)` give :math:`\sum_i c_i\rho_i(\alpha)`; :func:`epsilon_from_rdp` /
:func:`delta_from_rdp` then convert each direction and the larger value is reported
(``delta = max(delta_{P||Q}, delta_{Q||P})``, the add/remove convention of the package).
"""

from __future__ import annotations

import math
from typing import Callable, Dict, Iterable, Optional, Sequence, Tuple

import numpy as np

from ..core import validation as v
from ..mechanisms import GeneralizedGaussian, Mechanism
from .conversion import delta_from_rdp, epsilon_from_rdp
from ..core.outward import up
from .divergence import DIRECTIONS, renyi_divergence

__all__ = ["DEFAULT_ORDERS", "RdpAccountant", "rdp_curve"]

#: dp-accounting's default grid (``1 + x/10`` for ``x = 1..99``, the integers 11..63, 128,
#: 256, 512, 1024), quarter orders from 11 to 64 (the best order of a long composition is
#: rarely an integer), and the integers 2..10, 72..256 used before.  Fractional orders are
#: certified for the Poisson-subsampled Gaussian (:mod:`.sampled_gaussian`), bounded by
#: chords of the convex :math:`(\alpha-1)D_\alpha` for other subsampled specs, and exact
#: for the closed forms.
DEFAULT_ORDERS: Tuple[float, ...] = tuple(sorted(set(
    [1.0 + x / 10.0 for x in range(1, 100)] + [x / 4.0 for x in range(44, 257)]
    + [float(a) for a in [2, 3, 4, 5, 6, 7, 8, 9, 10, 72, 80, 96, 112, 128, 160, 192, 256,
                          512, 1024]])))


def rdp_curve(spec: Mechanism, orders: Sequence[float] = DEFAULT_ORDERS,
              direction: str = "remove") -> np.ndarray:
    """Upper bounds on the Renyi divergences of ``spec`` at ``orders`` in one direction."""
    return np.array([renyi_divergence(spec, a, direction) for a in orders])


def _by_quadrature(spec: Mechanism) -> bool:
    """Specs whose Renyi divergence at each order costs a numerical quadrature (the
    Generalized Gaussian of shape other than 1 and 2, not subsampled)."""
    return isinstance(spec, GeneralizedGaussian) and float(spec.beta) not in (1.0, 2.0)


def _chorded_curve(spec: Mechanism, orders: Sequence[float], direction: str) -> np.ndarray:
    r"""Bounds at ``orders``: exact at integers, the chord of the convex
    :math:`(\alpha-1)D_\alpha` between the neighbouring integers elsewhere (with
    :math:`(\alpha-1)D_\alpha = 0` at 1: loose below 2, where the integer-only grid had
    no order at all), rounded up.
    Valid for every spec; used where each evaluation is a quadrature, so that the
    fractional grid costs no more than the integers it rests on."""
    ints = sorted({int(math.floor(a)) for a in orders} | {int(math.ceil(a)) for a in orders})
    k = {a: (0.0 if a <= 1 else (a - 1) * renyi_divergence(spec, float(a), direction))
         for a in ints}
    out = []
    for a in orders:
        lo, hi = int(math.floor(a)), int(math.ceil(a))
        if lo == hi:
            out.append(k[lo] / (a - 1.0))
            continue
        chord = (k[lo] * (hi - a) + k[hi] * (a - lo)) / (hi - lo)
        out.append(up(chord / (a - 1.0), max(k[lo], k[hi]) / (a - 1.0)))
    return np.array(out)


class RdpAccountant:
    r"""Composition by Renyi DP: an upper bound only.

    Parameters
    ----------
    orders : sequence of float
        Orders :math:`\alpha > 1` to track (default :data:`DEFAULT_ORDERS`, 1.1 to 1024).
    divergence : callable, optional
        ``(spec, order, direction) -> upper bound``; default
        :func:`sampledprv.rdp.renyi_divergence`.

    Notes
    -----
    ``epsilon(delta)`` and ``delta(epsilon)`` return floats: certified **upper** bounds
    (Renyi accounting has no matching lower bound).

    Examples
    --------
    >>> import sampledprv as sp
    >>> from sampledprv.rdp import RdpAccountant
    >>> acc = RdpAccountant().compose(sp.Gaussian(sigma=2.0), count=10)
    >>> round(acc.epsilon(1e-5), 2)
    8.08
    """

    def __init__(self, orders: Iterable[float] = DEFAULT_ORDERS, *,
                 divergence: Optional[Callable[[Mechanism, float, str], float]] = None) -> None:
        orders = tuple(float(a) for a in orders)
        if not orders or not all(1.0 < a < math.inf for a in orders):
            raise ValueError(f"orders must be a non-empty sequence of finite numbers > 1, "
                             f"got {orders!r}")
        self.orders = orders
        self._divergence = divergence or renyi_divergence
        self._rdp: Dict[str, np.ndarray] = {d: np.zeros(len(orders)) for d in DIRECTIONS}
        self._composition: Dict[Mechanism, int] = {}

    def compose(self, mechanism: Mechanism, count: int = 1) -> "RdpAccountant":
        """Add ``count`` runs of ``mechanism`` (returns ``self``)."""
        count = v.positive_int("count", count)
        for d in DIRECTIONS:
            if d == "add" and getattr(mechanism, "symmetric", False):
                curve = self._curve(mechanism, "remove")
            else:
                curve = self._curve(mechanism, d)
            self._rdp[d] = self._rdp[d] + count * curve
        self._composition[mechanism] = self._composition.get(mechanism, 0) + count
        return self

    def _curve(self, mechanism: Mechanism, direction: str) -> np.ndarray:
        if self._divergence is renyi_divergence and _by_quadrature(mechanism):
            return _chorded_curve(mechanism, self.orders, direction)
        return np.array([self._divergence(mechanism, a, direction) for a in self.orders])

    def compose_rdp(self, rdp_remove: Sequence[float], rdp_add: Sequence[float],
                    count: int = 1) -> "RdpAccountant":
        """Add ``count`` runs of a mechanism given by its Renyi bounds at :attr:`orders`."""
        count = v.positive_int("count", count)
        for d, r in zip(DIRECTIONS, (rdp_remove, rdp_add)):
            r = np.asarray(r, dtype=float)
            if r.shape != (len(self.orders),) or np.any(np.isnan(r)) or np.any(r < 0):
                raise ValueError(f"rdp_{d} must hold {len(self.orders)} values >= 0, one "
                                 "per order")
            self._rdp[d] = self._rdp[d] + count * r
        return self

    @property
    def rdp(self) -> Dict[str, np.ndarray]:
        """The composed bounds per direction, aligned with :attr:`orders`."""
        return {d: r.copy() for d, r in self._rdp.items()}

    def epsilon(self, delta: float) -> float:
        """Certified upper bound on ``epsilon(delta)``."""
        return max(epsilon_from_rdp(self.orders, r, delta) for r in self._rdp.values())

    def delta(self, epsilon: float) -> float:
        """Certified upper bound on ``delta(epsilon)``."""
        return max(delta_from_rdp(self.orders, r, epsilon) for r in self._rdp.values())

    def __repr__(self) -> str:
        parts = ", ".join(f"{m!r} x{c}" for m, c in self._composition.items())
        return f"RdpAccountant({len(self.orders)} orders; {parts})"
