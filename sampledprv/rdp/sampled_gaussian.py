r"""Renyi divergence of the Poisson-subsampled Gaussian at any real order, certified.

Pair (remove direction, add/remove neighbours, noise in units of the sensitivity,
:math:`\mu = \Delta/\sigma`, :math:`s = 1/\mu`): :math:`Q = \mu_0 = N(0, s^2)`,
:math:`P = (1-q)\mu_0 + q\mu_1`, :math:`\mu_1 = N(1, s^2)`, and

.. math:: A_\alpha = E_{\mu_0}[(P/\mu_0)^\alpha], \qquad
   D_\alpha(P\|Q) = \frac{\log A_\alpha}{\alpha - 1}.

**Series** (Mironov, Talwar & Zhang 2019, "Renyi differential privacy of the sampled
Gaussian mechanism", Sec. 3.3).  :math:`q\mu_1 \le (1-q)\mu_0` exactly on
:math:`z \le z_0 = s^2\log((1-q)/q) + 1/2`.  On each side factor out the larger term and
expand :math:`(1+\rho)^\alpha = \sum_i \binom{\alpha}{i}\rho^i` with :math:`0 < \rho \le 1`:

.. math::
   A_\alpha = \sum_{i\ge0} t_i + \sum_{i\ge0} u_i, \qquad
   t_i = \binom{\alpha}{i}(1-q)^{\alpha-i}q^i e^{(i^2-i)/(2s^2)}\,
         \Phi\Big(\frac{z_0 - i}{s}\Big), \qquad
   u_i = \binom{\alpha}{i}q^{\alpha-i}(1-q)^{i} e^{(j^2-j)/(2s^2)}\,
         \Phi\Big(\frac{j - z_0}{s}\Big),\ j = \alpha - i,

since :math:`\mu_0^{1-i}\mu_1^{i} = e^{(i^2-i)/(2s^2)}N(i, s^2)` for every real
:math:`i`.  Exchanging sum and integral is justified by dominated convergence:
:math:`\sum_i|\binom{\alpha}{i}|\rho^i \le \sum_i|\binom{\alpha}{i}| < \infty`
(:math:`|\binom{\alpha}{i}| \sim i^{-\alpha-1}/|\Gamma(-\alpha)|`) and the factored-out
weights :math:`(1-q)^\alpha\mu_0` and :math:`\mu_0^{1-\alpha}(q\mu_1)^\alpha` are
integrable.

**Certified remainder.**  Let :math:`n = \lfloor\alpha\rfloor` (:math:`\alpha` not an
integer; for an integer the series ends at :math:`i = \alpha`).  For :math:`i > \alpha`
the reflection formula gives

.. math:: \Big|\binom{\alpha}{i}\Big| = \frac{|\sin\pi\alpha|}{\pi}B(i-\alpha, \alpha+1)
   = \int_0^1 \tau^i\,d\kappa(\tau), \qquad
   d\kappa = \frac{|\sin\pi\alpha|}{\pi}\tau^{-\alpha-1}(1-\tau)^\alpha d\tau,

and the sign of :math:`\binom{\alpha}{i}` is :math:`(-1)^{\max(0,\, i-n-1)}`, so the terms
alternate from :math:`i = n+1` on.  On the left half
:math:`|t_i| = \int_{z\le z_0}\int_0^1 (\tau\rho(z))^i\,d\kappa(\tau)\,(1-q)^\alpha\mu_0(z)\,dz`
with :math:`\rho = q\mu_1/((1-q)\mu_0) \in (0, 1]`; on the right half the same with
:math:`\rho' = 1/\rho \in (0, 1]` on :math:`z \ge z_0` and the weight
:math:`\mu_0^{1-\alpha}(q\mu_1)^\alpha`.  So for :math:`i \ge m_0 = n+1` the magnitudes
are moments, :math:`T_{m_0+k} = \int_{[0,1]} x^k\,d\nu(x)`, of a finite positive measure
:math:`\nu` (the image of :math:`(\tau\rho)^{m_0}d\kappa\,w\,dz` under
:math:`x = \tau\rho`), which gives no mass to :math:`x = 1`.  The remainder after
:math:`m \ge m_0` terms is then (dominated convergence: the partial sums of
:math:`\sum_k(-x)^k` are bounded by 1)

.. math:: R_m = \pm\sum_{k\ge0}(-1)^k T_{m+k} = \pm\int x^{m-m_0}\frac{d\nu(x)}{1+x},
   \qquad \tfrac12 \le \frac{1}{1+x} \le 1 - \frac x2 \ \text{on}\ [0, 1],

with the sign of the first omitted term: :math:`|R_m| \in [T_m/2,\ T_m - T_{m+1}/2]`.
The bound adds :math:`T_m - T_{m+1}/2` when the first omitted term is positive and
subtracts :math:`T_m/2` when it is negative; the bracket has width
:math:`(T_m - T_{m+1})/2 \approx T_m(\alpha+2)/(2m)`, so a few hundred terms usually
suffice (more are added until it is below :math:`10^{-14}` of the result).  (The
weaker, classical statement -- :math:`T_i` nonincreasing since :math:`\rho^{i+1} \le
\rho^i` and :math:`(i-\alpha)/(i+1) < 1`, so :math:`|R_m| \le T_m` -- follows too.)

**Floating point.**  Each term is :math:`\pm\exp(L_i)` with :math:`L_i` a sum of
logarithms (``log_ndtr``, ``log1p``, ``log`` and a cumulative sum of
:math:`\log(|\alpha-k|/(k+1))` for the binomial coefficient).  With :math:`M_i` the sum of
the magnitudes of everything entering :math:`L_i` (including the sensitivity of
``log_ndtr`` to the rounding of its argument), :math:`L_i` is taken to be accurate to
:math:`64\,\epsilon_{mach} M_i` (library functions within a few ulps; checked against
mpmath in the tests), so each term is accurate to the relative error
:math:`\delta_i = \exp(64\epsilon_{mach}M_i) - 1`; the terms are summed exactly rounded
(``math.fsum``) and :math:`\sum_i|\text{term}_i|\delta_i` is added.  The result is then
rounded up by :func:`sampledprv.core.outward.up`.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy.special import log_ndtr

from ..core.outward import up

__all__ = ["sampled_gaussian_log_moment", "sampled_gaussian_renyi"]

_EPS = float(np.finfo(np.float64).eps)
#: multiple of the machine epsilon per unit of magnitude entering a term's logarithm
_KAPPA = 64.0
#: series lengths tried (the remainder bound is valid at each; more terms tighten it)
_LENGTHS = (256, 1024, 4096, 16384, 65536)


def _half(alpha: float, q: float, mu: float, z0: float, n_terms: int, left: bool):
    """``(log |term|, sign, magnitude entering the logarithm)`` of the terms
    ``0..n_terms+1`` of one half (``n_terms >= floor(alpha) + 1``; sign 0 for the zero
    terms of an integer order)."""
    i = np.arange(n_terms + 2, dtype=np.float64)
    # log |C(alpha, i)| by the recurrence C(a, k+1) = C(a, k) (a - k) / (k + 1)
    diff = alpha - i[:-1]
    with np.errstate(divide="ignore"):
        steps = np.log(np.abs(diff)) - np.log(i[:-1] + 1.0)
    log_c = np.concatenate([[0.0], np.cumsum(steps)])
    abs_steps = np.concatenate([[0.0], np.cumsum(np.abs(np.where(np.isfinite(steps), steps,
                                                                   0.0)))])
    neg = np.concatenate([[0], np.cumsum(diff < 0)])
    sign = np.where(neg % 2 == 0, 1.0, -1.0)
    if float(alpha).is_integer():
        sign = np.where(i <= alpha, sign, 0.0)
    log1mq, logq = math.log1p(-q), math.log(q)
    mu2 = mu * mu
    if left:
        j = i
        comp = ((alpha - i) * log1mq, i * logq)
        x = (z0 - i) * mu
    else:
        j = alpha - i
        comp = (j * logq, i * log1mq)
        x = (j - z0) * mu
    lnd = log_ndtr(x)
    # z0 = (log(1-q) - log q) / mu^2 + 1/2 may cancel: its rounding scales with the parts
    z0_mag = abs(z0) + (abs(log1mq) + abs(logq)) / mu2
    finite_c = np.where(sign == 0.0, 0.0, log_c)
    log_t = np.where(sign == 0.0, -np.inf,
                     finite_c + comp[0] + comp[1] + 0.5 * (j * j - j) * mu2 + lnd)
    # sensitivity of log Phi to its argument: phi/Phi <= |x| + 1 for x < 0 (Birnbaum's
    # bound on the Mills ratio), <= 2 phi(x) <= exp(-x^2/2) for x >= 0
    sens = np.where(x < 0.0, np.abs(x) + 1.0, np.exp(-0.5 * np.minimum(x * x, 1400.0)))
    mag = (np.abs(finite_c) + i * (abs_steps + 2.0) + np.abs(comp[0]) + np.abs(comp[1])
           + 0.5 * (j * j + np.abs(j)) * mu2 + np.abs(lnd)
           + sens * (z0_mag + np.abs(j) + 1.0) * mu + 1.0)
    return log_t, sign, mag


def _remainder(first: float, second: float, rel0: float, rel1: float) -> float:
    r"""Upper bound on an alternating remainder whose first two terms are ``first`` and
    ``second`` (computed to relative errors ``rel0``, ``rel1``): its magnitude lies in
    :math:`[T_m/2,\ T_m - T_{m+1}/2]` (module docstring) and its sign is that of
    ``first``."""
    t0, t1 = abs(first), abs(second)
    if first > 0.0:
        return t0 * (1.0 + rel0) - 0.5 * t1 * (1.0 - rel1)
    return -0.5 * t0 * (1.0 - rel0)


def sampled_gaussian_log_moment(alpha: float, q: float, mu: float) -> float:
    r"""Certified upper bound on :math:`\log A_\alpha` (module docstring) of the
    Poisson-subsampled Gaussian: rate ``q`` in (0, 1), ``mu = sensitivity / sigma > 0``,
    any real ``alpha > 1``."""
    a, q, mu = float(alpha), float(q), float(mu)
    if not (a > 1.0 and math.isfinite(a)):
        raise ValueError(f"alpha must be a finite number > 1, got {alpha!r}")
    if not 0.0 < q < 1.0:
        raise ValueError(f"q must lie in (0, 1) for the series, got {q!r}")
    if not (mu > 0.0 and math.isfinite(mu)):
        raise ValueError(f"mu must be a finite number > 0, got {mu!r}")
    z0 = math.log1p(-q) / (mu * mu) - math.log(q) / (mu * mu) + 0.5
    first = int(math.floor(a)) + 1
    best = math.inf
    for n in _LENGTHS:
        n = max(n, first + 1)
        halves = [_half(a, q, mu, z0, n, left) for left in (True, False)]
        logs = np.concatenate([h[0] for h in halves])
        if np.any(np.isnan(logs)) or np.any(logs == np.inf):
            return math.inf
        shift = float(np.max(logs))
        s, err, tail, width = [], 0.0, 0.0, 0.0
        for log_t, sign, mag in halves:
            t = sign * np.exp(log_t - shift)
            rel = np.expm1(_KAPPA * _EPS * (mag + abs(shift)))
            s.extend(t[:-2].tolist())
            err += float(np.sum(np.abs(t[:-2]) * rel[:-2]))
            tail += _remainder(float(t[-2]), float(t[-1]), float(rel[-2]), float(rel[-1]))
            width += 0.5 * (abs(float(t[-2])) - abs(float(t[-1])))
        total = math.fsum(s)
        bound = total + tail + err * (1.0 + 1e-6) + 4.0 * _EPS * abs(total)
        best = min(best, shift + math.log(bound)) if bound > 0 else best
        # enough terms once the remainder's bracket is far below the final rounding
        log_a = shift + math.log(max(total, 1e-300))
        if width <= (1e-14 * abs(log_a) + 1e-18) * abs(total):
            break
    return best


@functools.lru_cache(maxsize=4096)
def sampled_gaussian_renyi(alpha: float, q: float, mu: float) -> float:
    r"""Certified upper bound on :math:`D_\alpha((1-q)N(0,s^2) + qN(1,s^2)\,\|\,N(0,s^2))`,
    :math:`s = 1/\mu`, for any real ``alpha > 1`` (module docstring); for the add direction
    the same value bounds :math:`D_\alpha(Q\|P)` (the Gaussian base is symmetric,
    :mod:`sampledprv.rdp.subsampled`)."""
    log_a = sampled_gaussian_log_moment(alpha, q, mu)
    if math.isinf(log_a):
        return math.inf
    a = float(alpha)
    # log(total) is correctly rounded to within an ulp; up() adds 1e-11 relative
    return max(0.0, up(log_a / (a - 1.0), (abs(log_a) + 1e-15) / (a - 1.0)))
