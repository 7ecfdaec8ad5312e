r"""Fused Numba (and torch) samplers of the random-allocation privacy loss.

Random allocation of ``k`` of ``T`` steps (balls-and-bins for ``k = 1``) with a base
step pair :math:`(A, B)` -- :math:`A` the step's output law with the record, :math:`B`
without it, per-step loss :math:`\ell = \log a/b` -- has the dominating pair
(design notes, "Batch samplers: random allocation")

.. math:: P = \binom{T}{k}^{-1} \sum_{|S| = k} \bigotimes_{t \in S} A
          \otimes \bigotimes_{t \notin S} B, \qquad Q = B^{\otimes T},

whose privacy loss at :math:`x \in \mathbb R^T` is

.. math:: L(x) = \log e_k\big(e^{\ell(x_1)}, \dots, e^{\ell(x_T)}\big) - \log\binom{T}{k},

:math:`e_k` the elementary symmetric polynomial.  For the Gaussian step
:math:`\ell(x) = (x\Delta - \Delta^2/2)/\sigma^2` this is the
:math:`\log e_k(e^{x_t/\sigma^2}) - \log\binom Tk - k\Delta^2/(2\sigma^2)` of the
literature.  The "remove" loss is :math:`L(x)`, :math:`x \sim P` (by exchangeability
the record's steps are the first ``k``); the "add" loss is :math:`-L(x)`,
:math:`x \sim Q`.

The fill draws the ``T`` per-step losses of one sample into a thread-local buffer of
``T`` floats, then evaluates :math:`e_k` in :math:`O(Tk)` by the recursion
:math:`e_j \leftarrow e_j + y_t e_{j-1}` on :math:`y_t = e^{\ell_t - m}`,
:math:`m = \max_t \ell_t` (every term positive, no cancellation; relative error
:math:`O(Tk)` ulp), and writes :math:`km + \log e_k - \log\binom Tk`.  Should
:math:`e_k` underflow (``k`` steps all far below the largest), the sample is
recomputed in log space.  No ``T``-by-``n`` array is ever formed.

Parameters travel as one float64 array (the ``(fill, params)`` protocol of
:mod:`sampledprv.sampled.histograms.kernels`), so one compiled fill serves every
spec: ``[T, k, sign, log C(T,k), base kind, d, beta, <GG sampler constants>]``.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
from numba import njit

from .rng import exponential, normal, random_sign
from .samplers import gg_draw, gg_setup
from .user_fills import states_from

__all__ = ["BASE_GAUSS", "BASE_LAPLACE", "BASE_GG", "allocation_params", "allocation_fill",
           "bulk_fill", "bulk_numpy_sampler",
           "allocation_numpy_sampler", "allocation_torch_sampler", "log_binom"]

BASE_GAUSS, BASE_LAPLACE, BASE_GG = 0.0, 1.0, 2.0
_P_T, _P_K, _P_SIGN, _P_LOGC, _P_KIND, _P_D, _P_BETA, _P_GG = range(8)


def log_binom(n: int, k: int) -> float:
    """:math:`\\log\\binom nk` (float64, via ``lgamma``)."""
    return math.lgamma(n + 1.0) - math.lgamma(k + 1.0) - math.lgamma(n - k + 1.0)


def allocation_params(steps: int, selected: int, kind: float, d: float, beta: float,
                      direction: str) -> np.ndarray:
    """The parameter array of :func:`allocation_fill` (see the module docstring).

    ``d`` is the normalized sensitivity: :math:`\\Delta/\\sigma` (Gaussian),
    :math:`\\Delta/b` (Laplace), :math:`\\Delta/s` (GG of shape ``beta``)."""
    if direction not in ("remove", "add"):
        raise ValueError(f"direction must be 'remove' or 'add', got {direction!r}")
    head = [float(steps), float(selected), 1.0 if direction == "remove" else -1.0,
            log_binom(steps, selected), float(kind), float(d), float(beta)]
    gg = gg_setup(beta) if kind == BASE_GG else np.zeros(8)
    return np.ascontiguousarray(np.concatenate([np.array(head), gg]), dtype=np.float64)


@njit(cache=True, inline="always")
def _step_loss(state, params, with_record: bool) -> float:  # pragma: no cover - numba
    r"""One per-step loss :math:`\ell = \log a/b` at an output drawn from ``A`` (the
    step holds the record) or from ``B``."""
    kind = params[_P_KIND]
    d = params[_P_D]
    if kind == BASE_GAUSS:
        # A = N(Delta, s^2), B = N(0, s^2): l = d z + d^2/2 under A, d z - d^2/2 under B
        z = normal(state)
        return d * z + 0.5 * d * d if with_record else d * z - 0.5 * d * d
    if kind == BASE_LAPLACE:
        # scale 1: l = |x| - |x - d|, x = d + Lap under A, x = Lap under B
        y = random_sign(state) * exponential(state)
        if with_record:
            return abs(d + y) - abs(y)
        return abs(y) - abs(y - d)
    # GG(beta) at scale 1: l = |x|^b - |x - d|^b
    beta = params[_P_BETA]
    r = gg_draw(state, params, _P_GG)
    y = r[0]
    yb = r[1]
    if with_record:
        return abs(d + y) ** beta - yb
    return yb - abs(y - d) ** beta


@njit(cache=True)
def _log_esp_logspace(buf, T, k, e):  # pragma: no cover - numba
    r""":math:`\log e_k(e^{buf})` by the recursion in log space (slow, never underflows)."""
    e[0] = 0.0
    for j in range(1, k + 1):
        e[j] = -math.inf
    for t in range(T):
        lt = buf[t]
        top = min(k, t + 1)
        for j in range(top, 0, -1):
            a = e[j]
            b = e[j - 1] + lt
            if a == -math.inf:
                e[j] = b
            elif b > a:
                e[j] = b + math.log1p(math.exp(a - b))
            else:
                e[j] = a + math.log1p(math.exp(b - a))
    return e[k]


@njit(cache=True)
def allocation_fill(state, params, out):  # pragma: no cover - numba
    """Write ``len(out)`` random-allocation privacy losses (module docstring)."""
    T = int(params[_P_T])
    k = int(params[_P_K])
    sign = params[_P_SIGN]
    logc = params[_P_LOGC]
    remove = sign > 0.0
    buf = np.empty(T)
    e = np.empty(k + 1)
    for i in range(out.shape[0]):
        m = -math.inf
        for t in range(T):
            lt = _step_loss(state, params, remove and t < k)
            buf[t] = lt
            if lt > m:
                m = lt
        if k == 1:
            s = 0.0
            for t in range(T):
                s += math.exp(buf[t] - m)
            loss = m + math.log(s) - logc
        else:
            e[0] = 1.0
            for j in range(1, k + 1):
                e[j] = 0.0
            for t in range(T):
                y = math.exp(buf[t] - m)
                top = min(k, t + 1)
                for j in range(top, 0, -1):
                    e[j] += y * e[j - 1]
            if e[k] > 1e-290:
                loss = k * m + math.log(e[k]) - logc
            else:
                loss = _log_esp_logspace(buf, T, k, e) - logc
        out[i] = sign * loss


@njit(cache=True)
def _fill_many(params, states, out):  # pragma: no cover - numba
    """Fill ``out`` from the streams ``states`` in equal consecutive parts."""
    n = out.shape[0]
    s = states.shape[0]
    per = -(-n // s)
    for j in range(s):
        a = j * per
        b = min(n, a + per)
        if a >= b:
            break
        allocation_fill(states[j], params, out[a:b])


def allocation_numpy_sampler(params: np.ndarray) -> Callable[[np.random.Generator, int],
                                                            np.ndarray]:
    """``sample(rng, size)``: the compiled fill driven by streams seeded from ``rng``
    (the numpy-path hook; reproducible for a given ``rng``)."""
    params = np.ascontiguousarray(params, dtype=np.float64)

    def sample(rng: np.random.Generator, size: int) -> np.ndarray:
        out = np.empty(int(size))
        _fill_many(params, states_from(rng), out)
        return out
    return sample


def allocation_torch_sampler(steps: int, selected: int, kind: float, d: float, beta: float,
                             direction: str, block: int = 4096) -> Callable[[Any, int], Any]:
    r"""``f(generator, size) -> float64 Tensor`` of random-allocation losses on the
    generator's device (Gaussian and Laplace steps).

    Draws blocks of ``block`` samples (a ``block x T`` matrix at a time, never
    ``size x T``); ``k = 1`` uses ``logsumexp``, ``k > 1`` the scaled recursion of
    the module docstring vectorized over the block (log-space fallback per row)."""
    from .torch_draws import require_torch
    torch = require_torch()
    if kind == BASE_GG:
        raise ValueError("backend='torch' samples random allocation with Gaussian or Laplace "
                         "steps; use backend='numba' for GeneralizedGaussian steps")
    T, k = int(steps), int(selected)
    sign = 1.0 if direction == "remove" else -1.0
    logc = log_binom(T, k)
    f64 = torch.float64

    def step_losses(gen: Any, rows: int) -> Any:
        dev = gen.device
        with_rec = torch.zeros((1, T), dtype=torch.bool, device=dev)
        if direction == "remove":
            with_rec[0, :k] = True
        if kind == BASE_GAUSS:
            z = torch.randn((rows, T), generator=gen, device=dev, dtype=f64)
            return d * z + torch.where(with_rec, 0.5 * d * d, -0.5 * d * d)
        e = torch.empty((rows, T), device=dev, dtype=f64).exponential_(generator=gen)
        sgn = torch.where(torch.rand((rows, T), generator=gen, device=dev, dtype=f64) < 0.5,
                          -1.0, 1.0).to(f64)
        y = sgn * e
        return torch.where(with_rec, (d + y).abs() - y.abs(), y.abs() - (y - d).abs())

    def losses(gen: Any, rows: int) -> Any:
        ell = step_losses(gen, rows)
        if k == 1:
            return sign * (torch.logsumexp(ell, dim=1) - logc)
        m = ell.max(dim=1, keepdim=True).values
        y = torch.exp(ell - m)
        e = torch.zeros((rows, k + 1), device=ell.device, dtype=f64)
        e[:, 0] = 1.0
        for t in range(T):
            yt = y[:, t:t + 1]
            e[:, 1:] = e[:, 1:] + yt * e[:, :-1]
        ek = e[:, k]
        out = k * m[:, 0] + torch.log(ek) - logc
        bad = ~(ek > 1e-290)
        if bool(bad.any()):
            rows_bad = ell[bad]
            le = torch.full((rows_bad.shape[0], k + 1), -math.inf, device=ell.device, dtype=f64)
            le[:, 0] = 0.0
            for t in range(T):
                lt = rows_bad[:, t:t + 1]
                le[:, 1:] = torch.logaddexp(le[:, 1:], le[:, :-1] + lt)
            out[bad] = le[:, k] - logc
        return sign * out

    def f(gen: Any, size: int) -> Any:
        parts = []
        left = int(size)
        while left > 0:
            r = min(block, left)
            parts.append(losses(gen, r))
            left -= r
        if not parts:
            return torch.empty(0, dtype=f64, device=gen.device)
        return torch.cat(parts)
    return f


@njit(cache=True)
def bulk_fill(state, params, out):  # pragma: no cover - numba
    r"""Write ``len(out)`` draws of :math:`S = \log\sum_{t=1}^{m} e^{\ell_t}`, the
    steps without the record (:math:`\ell_t` i.i.d. under ``B``), ``m = params[0]``
    (same parameter layout as :func:`allocation_fill`; sign and ``log C`` unused)."""
    T = int(params[_P_T])
    buf = np.empty(T)
    for i in range(out.shape[0]):
        m = -math.inf
        for t in range(T):
            lt = _step_loss(state, params, False)
            buf[t] = lt
            if lt > m:
                m = lt
        s = 0.0
        for t in range(T):
            s += math.exp(buf[t] - m)
        out[i] = m + math.log(s)


@njit(cache=True)
def _bulk_many(params, states, out):  # pragma: no cover - numba
    n = out.shape[0]
    s = states.shape[0]
    per = -(-n // s)
    for j in range(s):
        a = j * per
        b = min(n, a + per)
        if a >= b:
            break
        bulk_fill(states[j], params, out[a:b])


def bulk_numpy_sampler(params: np.ndarray) -> Callable[[np.random.Generator, int], np.ndarray]:
    """``sample(rng, size)`` of :func:`bulk_fill` on streams seeded from ``rng``."""
    params = np.ascontiguousarray(params, dtype=np.float64)

    def sample(rng: np.random.Generator, size: int) -> np.ndarray:
        out = np.empty(int(size))
        _bulk_many(params, states_from(rng), out)
        return out
    return sample
