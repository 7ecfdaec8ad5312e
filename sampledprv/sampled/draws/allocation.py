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

The torch sampler (:func:`allocation_torch_sampler`, any device) draws blocks of rows
and evaluates the same :math:`km + \log e_k(y) - \log\binom Tk` (nats) without a loop
over ``T``: :math:`e_k(y)` is the coefficient of :math:`x^k` in
:math:`\prod_t (1 + y_t x)`, multiplied out by a pairwise tree of polynomials truncated
to degree ``k`` (:func:`_esp_tree`, :math:`\lceil\log_2 T\rceil` levels of batched
operations), with the same log-space fallback done by the same tree in log space.

Parameters travel as one float64 array (the ``(fill, params)`` protocol of
:mod:`sampledprv.sampled.histograms.kernels`), so one compiled fill serves every
spec: ``[T, k, sign, log C(T,k), base kind, d, beta, <GG sampler constants>]``.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Optional

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


def _esp_tree(y: Any, k: int) -> Any:
    r""":math:`e_k(y_{r,1}, \dots, y_{r,T})` of each row ``r`` of the float64 matrix
    ``y >= 0`` (``rows x T``), by a pairwise tree over the steps (no loop over ``T``).

    :math:`e_k(y)` is the coefficient of :math:`x^k` in :math:`\prod_t (1 + y_t x)`.
    Each factor and each product of factors has constant term 1, so a polynomial is
    stored as its coefficients of degrees ``1..D`` (``D = min(k, 2^level)``, the
    coefficients of degree above ``k`` dropped): ``P`` of shape ``(D, rows, n)``, first
    ``D = 1``, ``n = T``, ``P[0] = y``.  A level multiplies polynomial ``i`` by
    polynomial ``i + n//2`` (``E = P[..., :n//2]``, ``O = P[..., n//2:2(n//2)]``; the
    order of the factors is immaterial; an odd ``n`` keeps its last polynomial, i.e.
    pads with the identity ``1``), truncated to degree ``min(k, 2D)``:

    .. math:: Q_j = E_j + O_j + \sum_{a=1}^{j-1} E_a O_{j-a},

    one batched ``addcmul`` per ``a`` -- :math:`O(k)` tensor operations a level,
    :math:`\lceil\log_2 T\rceil` levels.  Every term is non-negative (no cancellation);
    the products sum in a different order than the sequential recursion
    :math:`e_j \leftarrow e_j + y_t e_{j-1}`, equal to it to rounding (relative
    :math:`O(k \log T)` ulp).  Memory: a few ``rows x T`` floats at a time (``n D``
    about ``T`` until ``D`` reaches ``k``, then halving).  Returns the ``rows`` values
    (0 where ``k > T``)."""
    if k > y.shape[1]:
        return y.new_zeros(y.shape[0])
    return _tree(y.unsqueeze(0), k, log=False)[k - 1, :, 0]


def _log_esp_tree(ell: Any, k: int) -> Any:
    r""":math:`\log e_k(e^{\ell_{r,1}}, \dots, e^{\ell_{r,T}})` of each row of ``ell``:
    the tree of :func:`_esp_tree` in log space (``logaddexp`` for the sums, ``+`` for
    the products, ``-inf`` for a zero coefficient), which never underflows.  Slower, for
    the rows whose scaled :math:`e_k` underflows.  ``-inf`` where ``k > T``."""
    if k > ell.shape[1]:
        return ell.new_full((ell.shape[0],), -math.inf)
    return _tree(ell.unsqueeze(0), k, log=True)[k - 1, :, 0]


def _tree(p: Any, k: int, log: bool) -> Any:
    """The levels of :func:`_esp_tree` (``log=False``) or :func:`_log_esp_tree` on the
    coefficient tensor ``p`` of shape ``(D, rows, n)`` (coefficient-major, so each
    operation runs on contiguous runs of a row); returns ``(D, rows, 1)``."""
    zero = -math.inf if log else 0.0
    while p.shape[2] > 1:
        deg, rows, n = p.shape
        new = min(k, 2 * deg)
        half = n // 2
        q = p.new_empty((new, rows, n - half))
        if new > deg:
            q[deg:].fill_(zero)
        ev, od = p[:, :, :half], p[:, :, half:2 * half]   # factor i times factor half + i
        qm = q[:, :, :half]
        qm[:deg] = ev.logaddexp(od) if log else ev + od
        for a in range(1, deg + 1):          # E_a O_b lands at degree a + b, b = 1..deg
            hi = min(new, a + deg)
            if hi <= a:
                break
            if log:
                qm[a:hi] = qm[a:hi].logaddexp(ev[a - 1:a] + od[:hi - a])
            else:
                qm[a:hi].addcmul_(ev[a - 1:a], od[:hi - a])
        if n % 2:
            q[:deg, :, half] = p[:, :, n - 1]
        p = q
    return p


def _torch_step_losses(torch: Any, gen: Any, rows: int, steps: int, selected: int,
                       kind: float, d: float, remove: bool) -> Any:
    r"""``rows x steps`` float64 per-step losses :math:`\ell = \log a/b` (nats) on
    ``gen``'s device, the first ``selected`` steps drawn from ``A`` when ``remove``
    (else all from ``B``); Gaussian (``torch.randn``) or Laplace (exponential times a
    random sign) steps, ``d`` the normalized sensitivity (as in :func:`_step_loss`)."""
    f64 = torch.float64
    dev = gen.device
    rec = selected if remove else 0          # the columns drawn from A
    if kind == BASE_GAUSS:
        # A = N(Delta, s^2), B = N(0, s^2): l = d z + d^2/2 under A, d z - d^2/2 under B
        shift = torch.full((1, steps), -0.5 * d * d, dtype=f64, device=dev)
        shift[0, :rec] = 0.5 * d * d
        z = torch.randn((rows, steps), generator=gen, device=dev, dtype=f64)
        return z.mul_(d).add_(shift)
    # scale 1, y = Lap: l = |d + y| - |y| under A, |y| - |y - d| under B
    e = torch.empty((rows, steps), device=dev, dtype=f64).exponential_(generator=gen)
    u = torch.rand((rows, steps), generator=gen, device=dev, dtype=f64)
    y = torch.where(u < 0.5, -e, e)
    ay = y.abs()
    out = ay - (y - d).abs()
    if rec:
        out[:, :rec] = (d + y[:, :rec]).abs() - ay[:, :rec]
    return out


#: scaled e_k at or below this is recomputed in log space (as in :func:`allocation_fill`)
_EK_FLOOR = 1e-290


def _allocation_losses(ell: Any, k: int, logc: float, force_log: bool = False) -> Any:
    r""":math:`\log e_k(e^{\ell_{r,\cdot}}) - \log\binom Tk` (nats) of each row of the
    float64 matrix ``ell`` (``rows x T``).  ``k = 1``: ``logsumexp``.  ``k > 1``:
    :math:`km + \log e_k(e^{\ell_t - m})`, :math:`m = \max_t \ell_t` the row maximum
    (so :math:`y_t \le 1`), :math:`e_k` by :func:`_esp_tree`; rows where it is not above
    ``1e-290`` (underflow) -- or every row if ``force_log`` -- by :func:`_log_esp_tree`."""
    if k == 1:
        return ell.logsumexp(dim=1) - logc
    m = ell.max(dim=1, keepdim=True).values
    ek = _esp_tree((ell - m).exp_(), k)
    out = k * m[:, 0] + ek.log() - logc
    bad = ~(ek > _EK_FLOOR)
    if force_log:
        bad = bad.new_ones(bad.shape)                    # every row (a bool tensor)
    if bool(bad.any()):
        out[bad] = _log_esp_tree(ell[bad], k) - logc
    return out


def allocation_torch_sampler(steps: int, selected: int, kind: float, d: float, beta: float,
                             direction: str, block: Optional[int] = None
                             ) -> Callable[[Any, int], Any]:
    r"""``f(generator, size) -> float64 Tensor`` of random-allocation privacy losses
    (nats) on the generator's device (Gaussian and Laplace steps; ``d`` the normalized
    sensitivity).

    Each sample draws its ``T`` per-step losses :math:`\ell_t` (the first ``k`` from
    ``A`` for ``"remove"``, all from ``B`` for ``"add"``) and returns
    :math:`\pm(\log e_k(e^{\ell_1}, \dots, e^{\ell_T}) - \log\binom Tk)` (``+`` remove,
    ``-`` add), as the Numba fill.  ``k = 1``: ``logsumexp``.  ``k > 1``: with the row
    maximum :math:`m`, :math:`km + \log e_k(y)`, :math:`y_t = e^{\ell_t - m} \le 1`,
    :math:`e_k(y)` the coefficient of :math:`x^k` in :math:`\prod_t(1 + y_t x)`
    computed by a pairwise tree of degree-``k`` truncated polynomial products
    (:func:`_esp_tree`: :math:`\lceil\log_2 T\rceil` levels of :math:`O(k)` batched
    operations, no loop over ``T``); the rare rows where that :math:`e_k` is not above
    ``1e-290`` are recomputed by the same tree in log space (:func:`_log_esp_tree`).

    Samples are drawn in blocks of ``block`` rows (a ``block x T`` matrix at a time,
    never ``size x T``); by default about ``2**24 / T`` rows on CUDA (few large
    launches) and ``2**20 / T`` elsewhere.  An explicit ``block`` wins."""
    from .torch_draws import require_torch
    torch = require_torch()
    if kind == BASE_GG:
        raise ValueError("backend='torch' samples random allocation with Gaussian or Laplace "
                         "steps; use backend='numba' for GeneralizedGaussian steps")
    if direction not in ("remove", "add"):
        raise ValueError(f"direction must be 'remove' or 'add', got {direction!r}")
    T, k = int(steps), int(selected)
    remove = direction == "remove"
    sign = 1.0 if remove else -1.0
    logc = log_binom(T, k)

    def f(gen: Any, size: int) -> Any:
        rows = block
        if rows is None:
            rows = max(1, (2 ** 24 if gen.device.type == "cuda" else 2 ** 20) // T)
        rows = max(1, int(rows))
        parts = []
        left = int(size)
        while left > 0:
            r = min(rows, left)
            ell = _torch_step_losses(torch, gen, r, T, k, kind, d, remove)
            parts.append(sign * _allocation_losses(ell, k, logc))
            left -= r
        if not parts:
            return torch.empty(0, dtype=torch.float64, device=gen.device)
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
