r"""Renyi divergence of a Poisson-subsampled mechanism from that of its base.

Under add/remove neighbours a Poisson-subsampled mechanism gives the pair
:math:`P = (1-q)Q_0 + qP_0` and :math:`Q = Q_0` (``P_0`` with the record), averaged over the
rest of the subsample; by joint convexity of :math:`(P, Q) \mapsto E_Q[(P/Q)^\alpha]` the
average is at most the worst pair.  For integer :math:`\alpha \ge 2`:

* **remove** (:math:`D_\alpha(P\|Q)`): the binomial expansion is exact for a fixed base
  pair,

  .. math::
     e^{(\alpha-1)D_\alpha(P\|Q)} = \sum_{k=0}^{\alpha}\binom{\alpha}{k}(1-q)^{\alpha-k}q^k
     e^{(k-1)D_k(P_0\|Q_0)},

  so inserting the base's remove-direction bounds :math:`\varepsilon(k)` gives an upper
  bound valid for any base mechanism (the bound of Mironov, Talwar & Zhang 2019, "Renyi
  differential privacy of the sampled Gaussian mechanism", Sec. 3.3, and of Zhu & Wang
  2019, "Poisson subsampled Renyi differential privacy", Thm 5, for this direction);
* **add** (:math:`D_\alpha(Q\|P)`), any base: Zhu & Wang 2019, Theorem 6 (general upper
  bound, any mechanism with RDP :math:`\varepsilon(\cdot)` over both directions),

  .. math::
     e^{(\alpha-1)D_\alpha} \le (1-q)^{\alpha-1}(\alpha q - q + 1)
     + \binom{\alpha}{2}q^2(1-q)^{\alpha-2}e^{\varepsilon(2)}
     + 3\sum_{\ell=3}^{\alpha}\binom{\alpha}{\ell}(1-q)^{\alpha-\ell}q^\ell
       e^{(\ell-1)\varepsilon(\ell)} ;

* **add, symmetric base** (the base's loss has the same law in both directions, as for
  the Gaussian, Laplace, Generalized Gaussian in any dimension and randomized response;
  pure-DP bases reduce to randomized response by post-processing): the add direction is
  at most the remove direction, so the binomial sum bounds both.  This extends
  Mironov, Talwar & Zhang (2019, Thm 5, the Gaussian case).  *Proof.* With
  :math:`r = P_0/Q_0`, symmetry gives :math:`E_{Q_0}[g(r)] = E_{Q_0}[r\,g(1/r)]`, so
  :math:`e^{(\alpha-1)D}` of either direction is :math:`E_{Q_0}[\tilde h(r)]` with
  :math:`\tilde h(r) = (h(r) + r h(1/r))/2`, :math:`h_{rem}(t) = m_t^\alpha`,
  :math:`h_{add}(t) = m_t^{1-\alpha}`, :math:`m_t = 1 - q + qt`.  For :math:`r > 1` let
  :math:`x = m_r`, :math:`y = m_{1/r}`; then :math:`\tilde h_{rem} - \tilde h_{add}
  \propto \phi(x) + r\phi(y)` with :math:`\phi(z) = z^\alpha - z^{1-\alpha}`,
  :math:`\phi(1) = 0`, and :math:`r = (x-1)/(1-y)`, so the sign is that of
  :math:`S(x) - T(y)` with the chord slopes :math:`S(x) = \phi(x)/(x-1)` and
  :math:`T(y) = -\phi(y)/(1-y)`.  :math:`\phi` is concave on :math:`(0, 1]`, so
  :math:`T` is nonincreasing; :math:`xy \ge 1` (AM-GM) gives :math:`T(y) \le T(1/x)`,
  and :math:`T(1/x) = S(x)` identically.  The case :math:`r < 1` follows from
  :math:`\tilde h(1/r) = \tilde h(r)/r`.  :math:`\square`

Orders :math:`1 < \alpha < 2`, remove direction (and add for symmetric bases, by the
argument above, which holds for every real :math:`\alpha > 1`): with :math:`X = q(r - 1)`,
:math:`E_{Q_0}[X] = 0` and the elementary inequality
:math:`(1+x)^\alpha \le 1 + \alpha x + |x|^\alpha` for :math:`x \ge -1`,
:math:`1 < \alpha \le 2` (for :math:`x \ge 0` the difference has derivative
:math:`\alpha(1 + x^{\alpha-1} - (1+x)^{\alpha-1}) \ge 0` by subadditivity of
:math:`t^{\alpha-1}`; for :math:`x = -y \in [-1, 0]`, :math:`y^\alpha - (1-y)^\alpha + 1 - \alpha y`
has derivative :math:`\alpha(y^{\alpha-1} + (1-y)^{\alpha-1} - 1) \ge 0`), so

.. math::
   e^{(\alpha-1)D_\alpha(P\|Q)} \le 1 + q^\alpha E_{Q_0}|r - 1|^\alpha
   \le 1 + q^\alpha\big(e^{(\alpha-1)D_\alpha(P_0\|Q_0)} - 1 + (1 + \alpha)\,TV\big),

using :math:`(r-1)^\alpha \le r^\alpha - 1` for :math:`r \ge 1`, :math:`(1-r)^\alpha \le 1 - r`
and :math:`1 - r^\alpha \le \alpha(1 - r)` for :math:`r < 1`, and
:math:`E_{Q_0}[(1-r)_+] = TV(P_0, Q_0) \le 1`
(:func:`subsampled_fractional_bound`).  It matters when the base divergence is large
(then order 2 amplifies little: :math:`q^2 e^{D_2}` can exceed 1).  Other non-integer
orders use :math:`D_\alpha \le D_{\lceil\alpha\rceil}` (Renyi divergences are
nondecreasing in the order) and the chord of the convex :math:`(\alpha-1)D_\alpha`
between the neighbouring integers (:func:`chord_bound`); a Gaussian base has a certified
series at every real order (:mod:`sampledprv.rdp.sampled_gaussian`).
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np
from scipy.special import gammaln

from ..core.outward import up

__all__ = ["subsampled_remove_bound", "subsampled_general_bound", "integer_order",
           "subsampled_fractional_bound", "chord_bound"]


def integer_order(order: float) -> int:
    """The integer order whose divergence bounds order ``order`` (``ceil``, at least 2)."""
    return max(2, int(math.ceil(float(order) - 1e-12)))


def chord_bound(order: float, bound: Callable[[int], float]) -> float:
    r"""Upper bound at a non-integer ``order > 2`` from upper bounds ``bound(k)`` on
    :math:`D_k` at the integers :math:`k_1 = \lfloor\alpha\rfloor`, :math:`k_2 = k_1 + 1`:
    the chord of :math:`K(\alpha) = (\alpha - 1)D_\alpha`, which is convex in
    :math:`\alpha` for every pair (a cumulant generating function), so that for the
    worst pair :math:`K(\alpha) \le \frac{(k_2-\alpha)K(k_1) + (\alpha-k_1)K(k_2)}
    {k_2 - k_1}` with the bounds in place of :math:`K(k_i)` (at most ``bound(k2)`` when
    ``bound(k1) <= bound(k2)``)."""
    a = float(order)
    k1 = int(math.floor(a))
    if k1 < 2 or a == k1:
        raise ValueError(f"order must be a non-integer > 2 for the chord, got {order!r}")
    k2 = k1 + 1
    b1, b2 = (k1 - 1) * bound(k1), (k2 - 1) * bound(k2)
    if not (math.isfinite(b1) and math.isfinite(b2)):
        return math.inf
    chord = (b1 * (k2 - a) + b2 * (a - k1)) / (a - 1.0)
    return up(chord, max(b1, b2) / (a - 1.0))


def _log_terms(alpha: int, q: float, base: Callable[[int], float]) -> np.ndarray:
    k = np.arange(alpha + 1, dtype=float)
    log_binom = gammaln(alpha + 1.0) - gammaln(k + 1.0) - gammaln(alpha - k + 1.0)
    log1mq = math.log1p(-q) if q < 1.0 else -math.inf
    with np.errstate(invalid="ignore", divide="ignore"):
        log_w = log_binom + (alpha - k) * log1mq + k * math.log(q)
    if q == 1.0:
        log_w = np.where(k == alpha, 0.0, -math.inf)
    moments = np.array([0.0, 0.0] + [(j - 1) * base(j) for j in range(2, alpha + 1)])
    return log_w + moments


def _finish(log_terms: np.ndarray, alpha: int) -> float:
    finite = log_terms[np.isfinite(log_terms)]
    if np.any(log_terms == math.inf):
        return math.inf
    top = float(finite.max())
    total = top + math.log(float(np.exp(finite - top).sum()))
    # the terms are >= 0 and sum to >= 1 (k = 0, 1 alone give 1 - ... >= (1-q)^alpha)
    return up(max(total, 0.0) / (alpha - 1), (abs(top) + 1.0) / (alpha - 1))


def subsampled_remove_bound(alpha: int, q: float, base: Callable[[int], float]) -> float:
    r"""Upper bound on :math:`D_\alpha((1-q)Q_0 + qP_0 \,\|\, Q_0)` (integer ``alpha >= 2``)
    from ``base(k)`` :math:`\ge D_k(P_0\|Q_0)`, ``k = 2..alpha`` (binomial expansion)."""
    return _finish(_log_terms(alpha, q, base), alpha)


def subsampled_general_bound(alpha: int, q: float, base: Callable[[int], float]) -> float:
    r"""Zhu & Wang (2019) Theorem 6: upper bound on the order-``alpha`` Renyi divergence of
    the Poisson-subsampled mechanism in **both** directions, from ``base(k)`` bounding the
    base mechanism's divergence in both directions."""
    terms = _log_terms(alpha, q, base)
    terms[3:] += math.log(3.0)
    return _finish(terms, alpha)


def subsampled_fractional_bound(alpha: float, q: float, base: float, tv: float = 1.0) -> float:
    r"""Upper bound on :math:`D_\alpha((1-q)Q_0 + qP_0 \,\|\, Q_0)` for ``1 < alpha < 2``
    from ``base`` :math:`\ge D_\alpha(P_0\|Q_0)` and ``tv`` :math:`\ge TV(P_0, Q_0)` (see the
    module docstring):
    :math:`\log(1 + q^\alpha(e^{(\alpha-1)\,base} - 1 + (1+\alpha)\,tv)) / (\alpha - 1)`."""
    a = float(alpha)
    if not 1.0 < a < 2.0:
        raise ValueError(f"alpha must lie in (1, 2) for the fractional bound, got {alpha!r}")
    if not math.isfinite(base):
        return math.inf
    log_q = a * math.log(q)
    # log(e^{(a-1) base} - 1 + (1 + a) tv), then log1p of q^a times it
    x = (a - 1.0) * max(float(base), 0.0)
    with np.errstate(divide="ignore"):
        inner = x + float(np.log1p(((1.0 + a) * tv - 1.0) * math.exp(-x)))
    total = math.log1p(math.exp(log_q + inner)) if log_q + inner < 700 else log_q + inner
    return up(total / (a - 1.0), (abs(log_q + inner) + 1.0) / (a - 1.0))
