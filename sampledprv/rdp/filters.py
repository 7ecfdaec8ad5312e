r"""Privacy filters and odometers that stay valid when mechanisms are chosen adaptively.

A *filter* is given a budget up front and, before each mechanism, decides whether running
it keeps the total within the budget; the mechanism (and every later one) may be chosen
from the outputs so far.  Plain composition theorems assume the sequence is fixed in
advance; the filters here rest on theorems that hold for adaptively chosen mechanisms and
budgets:

* :class:`RenyiFilter` -- Feldman & Zrnic (2021, "Individual privacy accounting via a
  Renyi filter", arXiv 2008.11193, Thm 3.1): if the Renyi costs
  :math:`\rho_t(\alpha)` are chosen adaptively (each known before step ``t`` runs) and
  :math:`\sum_t \rho_t(\alpha) \le B(\alpha)` almost surely, the whole interaction is
  :math:`(\alpha, B(\alpha))`-RDP.  The filter runs a mechanism only when, at *every*
  order it tracks, the sum including it stays within the budget; so the sum never
  exceeds the budget at any order and the theorem applies at each order.  A refused
  mechanism does not run (cost 0); with ``halt=True`` (default) the filter then refuses
  everything, otherwise a cheaper mechanism may still pass (the theorem allows it).
* :class:`IndividualRenyiFilter` -- the same theorem per record (Feldman & Zrnic's
  individual filter): record ``i`` has its own costs (for a Gaussian step with clipped
  gradient norm :math:`g_i`, :math:`\alpha g_i^2 / (2\sigma^2)`); a record whose next
  cost would cross the budget is left out of that step (its contribution is dropped, so
  it costs it nothing) and, with ``halt=True``, of every later step.
* :class:`GaussianDPFilter` -- :math:`\mu`-GDP composes under full adaptivity (Smith &
  Thakurta 2022, "Fully adaptive composition for Gaussian differential privacy",
  arXiv 2210.17520): if :math:`\sum_t \mu_t^2 \le \mu^2` almost surely, the interaction is
  :math:`\mu`-GDP.  Only mechanisms with a certified GDP parameter are accepted
  (a Gaussian mechanism: :math:`\mu = \Delta/\sigma`).
* :class:`RenyiOdometer` -- an odometer from filters (Rogers, Roth, Ullman & Vadhan 2016;
  Lecuyer 2021, arXiv 2103.01379): filters with budgets :math:`B_k = 2^k b` run
  side by side; after any number of steps, with the spent sum in
  :math:`(B_{k-1}, B_k]`, the transcript is a post-processing of filter ``k``'s, which is
  :math:`(\alpha, B_k)`-RDP; the ex-post :math:`(\varepsilon_k, \delta_k)` uses
  :math:`\delta_k = \delta \cdot 6 / (\pi^2 k^2)` (a union over the levels,
  :math:`\sum_k \delta_k \le \delta`).

There is no privacy-loss-distribution or trade-off-curve filter: composing the curves of
adaptively chosen mechanisms and stopping at a curve budget is not valid in general
(arXiv 2602.06756); see the design notes, "Privacy filters".
"""

from __future__ import annotations

import math
from typing import Any, Dict, Mapping, Optional, Sequence

import numpy as np

from ..core import validation as v
from .conversion import epsilon_from_rdp

from ..mechanisms import Gaussian, PoissonSubsampled
from .divergence import renyi_divergence

__all__ = ["RenyiFilter", "IndividualRenyiFilter", "GaussianDPFilter", "RenyiOdometer",
           "mechanism_costs", "gaussian_record_costs"]

#: tolerance of the budget comparison (floating-point sums of costs)
_TOL = 1e-12


def _budget(budget: Any) -> Dict[float, float]:
    if not isinstance(budget, Mapping) or not budget:
        raise ValueError("budget must be a non-empty mapping {order: RDP budget in nats}, "
                         f"got {budget!r}; e.g. RenyiFilter({{8.0: 1.0}})")
    out = {}
    for a, b in budget.items():
        a = v._as_float("budget order", a)
        if not 1.0 < a < math.inf:
            raise ValueError(f"budget orders must be finite numbers > 1, got {a!r}")
        out[a] = v.positive("budget", b)
    return dict(sorted(out.items()))


def mechanism_costs(mechanism: Any, orders: Sequence[float]) -> np.ndarray:
    """Certified Renyi costs of one run of a spec at ``orders`` (worst direction,
    :func:`sampledprv.rdp.renyi_divergence`)."""
    return np.array([max(renyi_divergence(mechanism, a, "remove"),
                         renyi_divergence(mechanism, a, "add")) for a in orders])


def _epsilon(budget: Mapping[float, float], delta: float) -> float:
    orders = list(budget)
    return float(epsilon_from_rdp(orders, [budget[a] for a in orders], delta))


class RenyiFilter:
    r"""Renyi-DP filter for an adaptively chosen sequence of mechanisms (module docstring).

    Parameters
    ----------
    budget : mapping
        ``{order: B(order)}`` in nats; the interaction is :math:`(\alpha, B(\alpha))`-RDP
        at every listed order.
    halt : bool
        Refuse every later mechanism after the first refusal (default True).

    Examples
    --------
    >>> f = RenyiFilter({8.0: 2.0})
    >>> f.try_spend(sp.Gaussian(4.0))   # D_8 = 8/32 = 0.25: runs
    True
    """

    def __init__(self, budget: Mapping[float, float], *, halt: bool = True) -> None:
        self.budget = _budget(budget)
        self.orders = tuple(self.budget)
        self._b = np.array([self.budget[a] for a in self.orders])
        self.spent = np.zeros(len(self.orders))
        self.halt = bool(halt)
        self.halted = False
        self.steps = 0

    @classmethod
    def for_dp(cls, epsilon: float, delta: float, order: float, **kw: Any) -> "RenyiFilter":
        """A filter at one ``order`` whose budget converts to ``(epsilon, delta)``-DP
        (:func:`sampledprv.rdp.epsilon_from_rdp`, solved for the budget by bisection)."""
        epsilon = v.positive("epsilon", epsilon)
        delta = v.in_interval("delta", delta, 0.0, 1.0, low_open=True, high_open=True)
        order = v._as_float("order", order)
        if not 1.0 < order < math.inf:
            raise ValueError(f"order must be a finite number > 1, got {order!r}")
        lo, hi = 0.0, epsilon + 1.0
        while _epsilon({order: hi}, delta) <= epsilon:
            lo, hi = hi, 2.0 * hi
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            if _epsilon({order: mid}, delta) <= epsilon:
                lo = mid
            else:
                hi = mid
        if lo <= 0:
            raise ValueError(f"no positive RDP budget at order {order:g} converts to "
                             f"({epsilon:g}, {delta:g})-DP; use a larger order or epsilon")
        return cls({order: lo}, **kw)

    def _costs(self, mechanism: Any) -> np.ndarray:
        if isinstance(mechanism, Mapping):
            missing = [a for a in self.orders if a not in mechanism]
            if missing:
                raise ValueError(f"costs must give every order of the budget {self.orders}; "
                                 f"missing {missing}")
            c = np.array([v.nonnegative("cost", mechanism[a]) for a in self.orders])
        else:
            c = mechanism_costs(mechanism, self.orders)
        return c

    def would_cross(self, mechanism: Any) -> bool:
        """True when running ``mechanism`` (a spec, or ``{order: cost}``) would take the
        spent total above the budget at some order."""
        c = self._costs(mechanism)
        return bool(np.any(self.spent + c > self._b * (1 + _TOL)))

    def try_spend(self, mechanism: Any) -> bool:
        """Run-or-refuse: spend ``mechanism``'s costs and return True if they fit at every
        order (and the filter has not halted); else spend nothing and return False."""
        if self.halted:
            return False
        c = self._costs(mechanism)
        if np.any(self.spent + c > self._b * (1 + _TOL)):
            if self.halt:
                self.halted = True
            return False
        self.spent = self.spent + c
        self.steps += 1
        return True

    @property
    def remaining(self) -> Dict[float, float]:
        return {a: float(max(0.0, b - s)) for a, b, s in zip(self.orders, self._b, self.spent)}

    def epsilon(self, delta: float) -> float:
        """The ``(epsilon, delta)``-DP guarantee of the whole interaction (from the
        budget, whatever the adaptive choices)."""
        return _epsilon(self.budget, delta)


def gaussian_record_costs(norms: Any, sigma: float, orders: Sequence[float],
                          q: Optional[float] = None, levels: int = 64,
                          clip: Optional[float] = None) -> np.ndarray:
    r"""Per-record Renyi costs of one Gaussian step, shape ``(n, len(orders))``.

    Record ``i`` with gradient norm :math:`g_i` (after clipping) sees a Gaussian mechanism
    of sensitivity :math:`g_i`: cost :math:`\alpha g_i^2 / (2\sigma^2)`.  With ``q`` the
    step is Poisson-subsampled: the costs are those of
    ``PoissonSubsampled(Gaussian(sigma, g), q)`` with ``g`` rounded *up* to one of
    ``levels`` equally spaced values in ``[0, clip]`` (costs grow with ``g``, so rounding
    up keeps them certified).
    """
    g = np.asarray(norms, dtype=np.float64).ravel()
    if g.size == 0 or not np.all(np.isfinite(g)) or np.any(g < 0):
        raise ValueError("norms must be finite numbers >= 0 (one per record)")
    sigma = v.positive("sigma", sigma)
    a = np.asarray(orders, dtype=np.float64)
    if q is None:
        return a[None, :] * g[:, None] ** 2 / (2.0 * sigma ** 2) * (1 + 1e-12)
    q = v.in_interval("q", q, 0.0, 1.0, low_open=True, high_open=False)
    top = float(clip) if clip is not None else float(g.max())
    if np.any(g > top * (1 + 1e-12)):
        raise ValueError(f"norms exceed clip={top:g}: clip the gradients first")
    levels = v.positive_int("levels", levels)
    grid = np.linspace(0.0, top, levels + 1)
    idx = np.minimum(np.searchsorted(grid, g * (1 - 1e-15), side="left"), levels)
    table = np.zeros((levels + 1, a.size))
    for j in np.unique(idx):
        if grid[j] > 0:
            table[j] = mechanism_costs(PoissonSubsampled(Gaussian(sigma, float(grid[j])), q),
                                       a)
    return table[idx]


class IndividualRenyiFilter:
    r"""Per-record Renyi filters (Feldman & Zrnic's individual filter; module docstring).

    Parameters
    ----------
    n_records : int
    budget : mapping
        ``{order: B}`` shared by every record.
    halt : bool
        A record refused once is left out of every later step (default True).
    """

    def __init__(self, n_records: int, budget: Mapping[float, float], *,
                 halt: bool = True) -> None:
        self.n = v.positive_int("n_records", n_records)
        self.budget = _budget(budget)
        self.orders = tuple(self.budget)
        self._b = np.array([self.budget[a] for a in self.orders])
        self.spent = np.zeros((self.n, len(self.orders)))
        self.active = np.ones(self.n, dtype=bool)
        self.halt = bool(halt)

    def admit(self, costs: Any) -> np.ndarray:
        """Given the costs this step would charge each record (shape ``(n, orders)``),
        return the mask of records that take part (their totals stay within the budget at
        every order) and charge them; the others must be left out of the step."""
        c = np.asarray(costs, dtype=np.float64)
        if c.shape != (self.n, len(self.orders)):
            raise ValueError(f"costs must have shape ({self.n}, {len(self.orders)}) (records, "
                             f"orders {self.orders}), got {c.shape}")
        if not np.all(np.isfinite(c)) or np.any(c < 0):
            raise ValueError("costs must be finite numbers >= 0")
        fits = np.all(self.spent + c <= self._b * (1 + _TOL), axis=1) & self.active
        if self.halt:
            self.active &= fits
        self.spent[fits] += c[fits]
        return fits

    def epsilon(self, delta: float) -> float:
        """Each record's ``(epsilon, delta)`` guarantee (from the shared budget)."""
        return _epsilon(self.budget, delta)


class GaussianDPFilter:
    r""":math:`\mu`-GDP filter: runs Gaussian mechanisms while
    :math:`\sum_t \mu_t^2 \le \mu^2` (Smith & Thakurta 2022; module docstring)."""

    def __init__(self, mu: float, *, halt: bool = True) -> None:
        self.mu = v.positive("mu", mu)
        self.spent_sq = 0.0
        self.halt = bool(halt)
        self.halted = False
        self.steps = 0

    @staticmethod
    def mu_of(mechanism: Any) -> float:
        """The GDP parameter of a mechanism this filter accepts: a Gaussian spec
        (``sensitivity / sigma``) or a number."""
        if isinstance(mechanism, Gaussian):
            return mechanism.mu
        if isinstance(mechanism, (int, float)) and not isinstance(mechanism, bool):
            return v.nonnegative("mu", mechanism)
        raise ValueError(f"GaussianDPFilter accepts Gaussian specs or a GDP parameter mu, got "
                         f"{mechanism!r}: fully adaptive composition is proved for mu-GDP "
                         "mechanisms; use RenyiFilter for other mechanisms")

    def would_cross(self, mechanism: Any) -> bool:
        m = self.mu_of(mechanism)
        return self.spent_sq + m * m > self.mu ** 2 * (1 + _TOL)

    def try_spend(self, mechanism: Any) -> bool:
        if self.halted:
            return False
        m = self.mu_of(mechanism)
        if self.spent_sq + m * m > self.mu ** 2 * (1 + _TOL):
            if self.halt:
                self.halted = True
            return False
        self.spent_sq += m * m
        self.steps += 1
        return True

    @property
    def spent(self) -> float:
        """:math:`\\sqrt{\\sum_t \\mu_t^2}` so far."""
        return math.sqrt(self.spent_sq)


class RenyiOdometer:
    r"""Running Renyi-DP account of an adaptive interaction with valid ex-post guarantees
    (module docstring).

    Parameters
    ----------
    order : float
        The Renyi order tracked.
    base : float
        The first level :math:`B_1 = b`; levels double: :math:`B_k = 2^{k-1} b`.
    """

    def __init__(self, order: float, base: float = 0.01) -> None:
        self.order = v._as_float("order", order)
        if not 1.0 < self.order < math.inf:
            raise ValueError(f"order must be a finite number > 1, got {order!r}")
        self.base = v.positive("base", base)
        self.spent = 0.0
        self.steps = 0

    def spend(self, mechanism: Any) -> float:
        """Record one run (a spec, or its cost at :attr:`order`); returns the spent total."""
        if isinstance(mechanism, (int, float)) and not isinstance(mechanism, bool):
            c = v.nonnegative("cost", mechanism)
        else:
            c = float(mechanism_costs(mechanism, [self.order])[0])
        self.spent += c
        self.steps += 1
        return self.spent

    @property
    def level(self) -> int:
        """The level ``k >= 1`` with :math:`B_{k-1} < \\text{spent} \\le B_k`."""
        if self.spent <= self.base:
            return 1
        return 1 + int(math.ceil(math.log2(self.spent / self.base) - 1e-12))

    def epsilon(self, delta: float) -> float:
        """Ex-post epsilon of the interaction so far: level ``k``'s budget converted at
        :math:`\\delta_k = 6\\delta/(\\pi^2 k^2)`."""
        delta = v.in_interval("delta", delta, 0.0, 1.0, low_open=True, high_open=True)
        k = self.level
        b_k = self.base * 2.0 ** (k - 1)
        return _epsilon({self.order: b_k}, delta * 6.0 / (math.pi ** 2 * k * k))
