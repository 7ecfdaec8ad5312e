r"""Exact Numba samplers for noise distributions and Poisson-subsampling mixtures.

All samplers are ``numba.njit`` functions whose first argument is an xoshiro256++
state (see :mod:`sampledprv.sampled.draws.rng`); they can be called from user ``njit`` code
and are inlined into the fills that the kernels of
:mod:`sampledprv.sampled.histograms.kernels` call.

Generalized Gaussian
--------------------
``GG(beta, scale)`` has density :math:`\propto \exp(-|x/s|^\beta)` (exactly
``scipy.stats.gennorm(beta, scale=s)``).  The standard variate (``s = 1``) is drawn by

* ``beta = 1``: Laplace, :math:`\pm E`, :math:`E \sim \mathrm{Exp}(1)`;
* ``beta = 2``: :math:`N(0, 1/2)`;
* ``1 < beta < 2``: rejection from the Laplace envelope :math:`e^{-\lambda |y|}` with
  :math:`\lambda = \beta^{1/\beta}` (the rate that maximizes the acceptance
  :math:`\lambda\,\Gamma(1 + 1/\beta)\, e^{-(1 - 1/\beta)}`, 0.848 at ``beta = 1.5``):
  candidate :math:`|y| = E_1/\lambda`, accepted when
  :math:`E_2 \ge |y|^\beta - \lambda|y| + r^*` with :math:`r^* = 1 - 1/\beta`;
* ``beta > 2``: rejection from the Gaussian envelope :math:`e^{-\kappa y^2}` with
  :math:`\kappa = \beta^{2/\beta}/2` (optimal; acceptance
  :math:`2\Gamma(1+1/\beta)\sqrt{\kappa/\pi}\,e^{-(1/2 - 1/\beta)}`, 0.870 at
  ``beta = 3``), accepted when :math:`E_2 \ge |y|^\beta - \kappa y^2 + r^*`,
  :math:`r^* = 1/2 - 1/\beta`.

(:math:`E_2 \ge t` is decided as :math:`U \le e^{-t}` with the squeezes
:math:`1 - t \le e^{-t} \le 1/(1+t)`, one 64-bit word giving ``U`` and the sign.)
Both envelopes are exact (the log-ratio is maximized in closed form) and return
:math:`|y|^\beta` for free, which the privacy loss reuses.  They beat the gamma
transform :math:`|y| = G^{1/\beta}`, :math:`G \sim \mathrm{Gamma}(1/\beta)` (two
transcendental calls more per draw); :func:`gg_gamma_transform` is kept as a
reference.  Powers :math:`x^\beta` with ``4*beta`` an integer (1.25, 1.5, 2.5, 3, ...)
use multiplications and square roots only (:func:`pow_beta`).

Poisson subsampling
-------------------
For a base pair :math:`(P_0, Q_0)` with loss :math:`\ell = \log p_0/q_0`, the
subsampled pair is :math:`((1-q)Q_0 + qP_0,\ Q_0)` and its loss is
:math:`\log(1 - q + q e^{\ell})` (:func:`subsampled_loss`, evaluated stably).

Generic rejection and ARS
-------------------------
:func:`make_rejection_sampler` builds an exact rejection sampler from a target
log-density, a proposal and a user bound :math:`\log M`; it checks the bound on every
draw.  Adaptive rejection sampling for log-concave 1-D targets given only ``logp`` is
in :mod:`sampledprv.sampled.draws.ars`.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np
from numba import njit, uint64

from .rng import _INV_2_53, exponential, next_u64_aux, normal, random_sign
from .rng import gamma as _gamma

__all__ = [
    "GG_EXACT_LAPLACE", "GG_EXACT_GAUSS", "GG_LAPLACE_ENV", "GG_GAUSS_ENV",
    "gg_setup", "gg_acceptance", "pow_beta", "pow_code", "gg_draw", "generalized_gaussian",
    "gg_gamma_transform", "gaussian", "laplace", "subsampled_loss", "make_rejection_sampler",
]

GG_EXACT_LAPLACE = 0   #: beta == 1
GG_EXACT_GAUSS = 1     #: beta == 2
GG_LAPLACE_ENV = 2     #: 1 < beta < 2
GG_GAUSS_ENV = 3       #: beta > 2


@njit(cache=True, inline="always")
def _gg_consts(beta: float) -> np.ndarray:  # pragma: no cover - numba
    c = np.empty(8)
    c[0] = beta
    if beta == 1.0:
        c[1], c[2], c[3], c[4] = GG_EXACT_LAPLACE, 1.0, 0.0, 0.0
    elif beta == 2.0:
        c[1], c[2], c[3], c[4] = GG_EXACT_GAUSS, math.sqrt(0.5), 1.0, 0.0
    elif beta < 2.0:
        c[1], c[2], c[3], c[4] = GG_LAPLACE_ENV, beta ** (1.0 / beta), 0.0, 1.0 - 1.0 / beta
    else:
        kappa = beta ** (2.0 / beta) / 2.0
        c[1], c[2], c[3] = GG_GAUSS_ENV, 1.0 / math.sqrt(2.0 * kappa), kappa
        c[4] = 0.5 - 1.0 / beta
    q4 = 4.0 * beta
    if q4 == math.floor(q4) and q4 <= 64.0:
        c[5] = math.floor(q4 / 4.0)
        c[6] = q4 - 4.0 * c[5]
    else:
        c[5], c[6] = -1.0, 0.0
    c[7] = 7.0 if c[5] >= 0.0 else 0.0
    return c


def gg_setup(beta: float) -> np.ndarray:
    r"""Sampler constants for the standard ``GG(beta, 1)``.

    Returns
    -------
    numpy.ndarray
        ``float64[8]``: ``[beta, method, a, b, rstar, pow_int, pow_quarter, pow_code]``
        where
        ``method`` is one of the ``GG_*`` codes; for the Laplace envelope ``a`` is the
        rate :math:`\lambda = \beta^{1/\beta}`; for the Gaussian envelope ``a`` is the
        candidate standard deviation :math:`1/\sqrt{2\kappa}` and ``b = kappa``;
        ``rstar`` is the maximal log-ratio; ``pow_int`` / ``pow_quarter`` encode
        ``beta = pow_int + pow_quarter/4`` when ``4*beta`` is an integer <= 64
        (``pow_int = -1`` otherwise: generic ``pow``); ``pow_code`` selects the power
        routine of :func:`pow_code`.
    """
    beta = float(beta)
    if not (beta >= 1.0 and math.isfinite(beta)):
        raise ValueError(f"beta must be a finite number >= 1, got {beta!r}")
    c = _gg_consts.py_func(beta)     # plain Python: nothing to compile (same libm calls)
    c[7] = _pow_code(beta, c[5])
    return c


def gg_acceptance(beta: float) -> float:
    """Acceptance probability of the envelope used for ``beta`` (1.0 for beta in {1, 2})."""
    c = gg_setup(beta)
    g = math.gamma(1.0 + 1.0 / beta)
    if c[1] == GG_LAPLACE_ENV:
        return c[2] * g * math.exp(-c[4])
    if c[1] == GG_GAUSS_ENV:
        return 2.0 * g * math.sqrt(c[3] / math.pi) * math.exp(-c[4])
    return 1.0


@njit(cache=True, inline="always")
def pow_beta(x: float, beta: float, pint: float, pq: float) -> float:  # pragma: no cover
    r""":math:`x^\beta` for ``x >= 0``; exact-arithmetic shortcut when ``pint >= 0``.

    With ``beta = pint + pq/4`` the power is ``x**pint`` by multiplications times
    ``1``, :math:`x^{1/4}`, :math:`x^{1/2}` or :math:`x^{3/4}` by square roots (IEEE
    ``sqrt`` is correctly rounded, so this is as accurate as ``pow``); otherwise ``x**beta``.
    """
    if pint < 0.0:
        return x ** beta
    r = 1.0
    for _ in range(int(pint)):
        r *= x
    if pq == 2.0:
        r *= math.sqrt(x)
    elif pq == 1.0:
        r *= math.sqrt(math.sqrt(x))
    elif pq == 3.0:
        s = math.sqrt(x)
        r *= s * math.sqrt(s)
    return r


#: ``beta`` values whose power compiles to multiplications and square roots (code).
POW_CODES = {1.25: 1.0, 1.5: 2.0, 1.75: 3.0, 2.5: 4.0, 3.0: 5.0, 4.0: 6.0}


def _pow_code(beta: float, pint: float) -> float:
    if beta in POW_CODES:
        return POW_CODES[beta]
    return 7.0 if pint >= 0 else 0.0


@njit(cache=True, inline="always")
def pow_code(x: float, c: np.ndarray, o: int) -> float:  # pragma: no cover - numba
    """``x**beta`` for ``x >= 0`` with the constants of :func:`gg_setup` at ``c[o:o+8]``.

    The code ``c[o+7]`` selects straight-line code for beta in 1.25, 1.5, 1.75, 2.5,
    3, 4, :func:`pow_beta` for other quarter steps, libm ``pow`` otherwise; the branch
    is constant over a run (perfectly predicted).
    """
    code = c[o + 7]
    if code == 2.0:
        return x * math.sqrt(x)
    if code == 0.0:
        return x ** c[o]
    if code == 5.0:
        return x * x * x
    if code == 1.0:
        return x * math.sqrt(math.sqrt(x))
    if code == 3.0:
        r = math.sqrt(x)
        return x * r * math.sqrt(r)
    if code == 4.0:
        return x * x * math.sqrt(x)
    if code == 6.0:
        x2 = x * x
        return x2 * x2
    return pow_beta(x, c[o], c[o + 5], c[o + 6])


@njit(cache=True, inline="always")
def _accept(state, t):  # pragma: no cover - numba
    r"""Bernoulli(:math:`e^{-t}`) for ``t >= 0`` plus an independent random sign.

    One 64-bit word of the auxiliary generator gives :math:`U = (k + 1/2)/2^{53}` (top
    53 bits) and the sign (bit 0).  Accept iff :math:`U \le e^{-t}`, decided by the squeezes
    :math:`1 - t \le e^{-t} \le 1/(1 + t)` and ``exp`` only in between.
    """
    b = next_u64_aux(state)
    u = (float(b >> uint64(11)) + 0.5) * _INV_2_53
    sign = -1.0 if (b & uint64(1)) else 1.0
    if u <= 1.0 - t:
        return True, sign
    if u * (1.0 + t) > 1.0:
        return False, sign
    return u <= math.exp(-t), sign


@njit(cache=True, inline="always")
def gg_draw(state, c, o):  # pragma: no cover - numba
    r"""One draw :math:`y \sim GG(\beta, 1)` and :math:`|y|^\beta`, exactly.

    Parameters
    ----------
    state : record of ``STATE_DTYPE``
        xoshiro256++ state, advanced in place.
    c : float64 array
        Constants from :func:`gg_setup` stored at ``c[o:o+8]`` (an offset rather than
        a slice: slicing in the hot loop would cost reference counting).
    o : int
        Offset of the constants in ``c``.
    """
    method = c[o + 1]
    if method == GG_EXACT_LAPLACE:
        e = exponential(state)
        return random_sign(state) * e, e
    if method == GG_EXACT_GAUSS:
        y = normal(state) * c[o + 2]
        return y, y * y
    rstar = c[o + 4]
    if method == GG_LAPLACE_ENV:
        lam = c[o + 2]
        inv_lam = 1.0 / lam
        while True:
            a = exponential(state) * inv_lam
            ab = pow_code(a, c, o)
            ok, sign = _accept(state, ab - lam * a + rstar)
            if ok:
                return sign * a, ab
    sd, kappa = c[o + 2], c[o + 3]
    while True:  # Gaussian envelope
        y = normal(state) * sd
        ab = pow_code(abs(y), c, o)
        ok, sign = _accept(state, ab - kappa * y * y + rstar)
        if ok:
            return y, ab


@njit(cache=True)
def generalized_gaussian(state, beta: float, scale: float,
                         out: np.ndarray) -> None:  # pragma: no cover - numba
    """Fill ``out`` with i.i.d. ``GG(beta, scale)`` draws (``scipy.stats.gennorm``)."""
    c = _gg_consts(beta)
    for i in range(out.shape[0]):
        out[i] = scale * gg_draw(state, c, 0)[0]


@njit(cache=True)
def gg_gamma_transform(state, beta: float, scale: float) -> float:  # pragma: no cover
    r"""``GG(beta, scale)`` by the gamma transform :math:`\pm s\,G^{1/\beta}`,
    :math:`G \sim \mathrm{Gamma}(1/\beta, 1)` (reference implementation)."""
    return random_sign(state) * scale * _gamma(state, 1.0 / beta) ** (1.0 / beta)


@njit(cache=True, inline="always")
def gaussian(state, mean: float, sigma: float) -> float:  # pragma: no cover
    """One draw of :math:`N(\\mathrm{mean}, \\sigma^2)`."""
    return mean + sigma * normal(state)


@njit(cache=True, inline="always")
def laplace(state, loc: float, b: float) -> float:  # pragma: no cover
    """One draw of the Laplace law with density :math:`e^{-|x - loc|/b}/(2b)`."""
    return loc + b * random_sign(state) * exponential(state)


@njit(cache=True, inline="always")
def subsampled_loss(loss: float, q: float) -> float:  # pragma: no cover - numba
    r""":math:`\log(1 - q + q e^{\ell})`, stable for every :math:`\ell \in [-\infty, \infty]`.

    :math:`\log1p(q\,\mathrm{expm1}(\ell))` while that argument exceeds -1/2
    (relative accuracy of a few ulp), else :math:`\log((1-q) + q e^{\ell})` (a sum of
    positives, its log well-conditioned; :math:`\ell = -\infty` gives
    :math:`\log(1-q)`); for :math:`\ell > 700`, where
    ``expm1`` would overflow, :math:`\ell + \log q + \log1p(\tfrac{1-q}{q} e^{-\ell})`.
    """
    if loss > 700.0:
        if loss == math.inf:
            return math.inf
        return loss + math.log(q) + math.log1p((1.0 - q) / q * math.exp(-loss))
    x = q * math.expm1(loss)
    if x > -0.5:
        return math.log1p(x)
    return math.log((1.0 - q) + q * math.exp(loss))  # well-conditioned: value <= log(1/2)


def make_rejection_sampler(target_logpdf: Callable, proposal_sample: Callable,
                           proposal_logpdf: Callable, log_m: float,
                           rtol: float = 1e-9) -> Callable:
    r"""Exact rejection sampler for a target density, as an ``njit`` function.

    A candidate :math:`x \sim g` (``proposal_sample(state)``) is accepted with
    probability :math:`f(x) / (M g(x))`, i.e. when
    :math:`E \ge \log M - (\log f(x) - \log g(x))`, :math:`E \sim \mathrm{Exp}(1)`.
    This is exact only if :math:`\log f - \log g \le \log M` everywhere, so every draw
    checks the bound and raises :class:`ValueError` (naming ``x`` and the excess) when
    it is violated by more than ``rtol * max(1, |log M|)``.

    Parameters
    ----------
    target_logpdf, proposal_logpdf : njit callables ``(x: float) -> float``
        Log-densities (the target may be unnormalized; ``log_m`` must then bound the
        unnormalized ratio).
    proposal_sample : njit callable ``(state) -> float``
        Draws from the proposal with the :mod:`~sampledprv.sampled.draws.rng` functions.
    log_m : float
        :math:`\log M`, an upper bound of :math:`\log f(x) - \log g(x)`.

    Returns
    -------
    numba dispatcher ``draw(state) -> float``
        One exact draw from the target per call.
    """
    log_m = float(log_m)
    if not math.isfinite(log_m):
        raise ValueError(f"log_m must be finite, got {log_m!r}")
    tol = float(rtol) * max(1.0, abs(log_m))

    @njit
    def draw(state):  # pragma: no cover - numba
        while True:
            x = proposal_sample(state)
            r = target_logpdf(x) - proposal_logpdf(x)
            if r > log_m + tol:
                raise ValueError("rejection bound violated: log f(x) - log g(x) exceeds "
                                 "log_m; pass a larger log_m (x, log-ratio, log_m) =",
                                 x, r, log_m)
            if r != r:
                raise ValueError("target_logpdf or proposal_logpdf returned NaN at x =", x)
            if exponential(state) >= log_m - r:
                return x

    return draw

