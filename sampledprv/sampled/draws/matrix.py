r"""Fused Numba samplers of the privacy loss of matrix-factorization training (DP-MF).

The mechanism releases :math:`y = Cx + N(0, \sigma^2 I_n)` over ``n`` steps, ``C``
lower-triangular with non-negative entries, :math:`x_i = 1` at the steps the record takes
part in (design notes, "Matrix-factorization training").  With :math:`c_i` the column
``i`` of :math:`C/\sigma` and :math:`z = y/\sigma`, the per-step log-likelihood ratio is
:math:`\ell_i = c_i^\top z - \|c_i\|^2/2`.  Kinds (``params[0]``):

``GRAM`` (fixed bin, Gram-reduced)
    :math:`P = b^{-1}\sum_j N(m_j, \sigma^2 I)`, :math:`m_j = C\,1\{i \equiv j\}`; the
    loss depends on :math:`y` only through :math:`u = M^\top y/\sigma^2 \in \mathbb R^b`,
    :math:`L = \operatorname{logsumexp}_j(u_j - S_{jj}/2) - \log b`,
    :math:`S = M^\top M/\sigma^2`.  Under :math:`Q`, :math:`u = Rz`, :math:`RR^\top = S`
    (Cholesky, stored sparse: it keeps the band of :math:`S` apart from the rows the
    cyclic wrap fills); under :math:`P`, :math:`u = S e_i + Rz`, :math:`i` uniform.  A
    draw costs :math:`b` normals and :math:`\mathrm{nnz}(R) + \mathrm{nnz}(S_{:,i})`.
``FIXED`` (fixed bin, ``n``-dimensional)
    the same loss from :math:`z` itself: :math:`u_j = \sum_{i \equiv j} c_i^\top z`.
``CYCLIC`` (random-shift cyclic Poisson)
    shift :math:`s` uniform, step :math:`i \equiv s` included w.p. ``p``;
    :math:`L = \operatorname{logsumexp}_s \sum_{i\equiv s}\log(1-p+pe^{\ell_i}) - \log b`
    (the columns of one shift are orthogonal: band at most ``b``).
``EPOCH`` (bin redrawn every epoch, ``C`` block-diagonal by epoch)
    epochs of ``b`` steps, one uniform step of each epoch; the epochs' outputs are
    independent, :math:`L = \sum_e [\operatorname{logsumexp}_{j<b}(\ell_{eb+j}) - \log b]`.
``BMINSEP`` (b-min-sep)
    participations form a renewal process with gaps :math:`b-1+\mathrm{Geom}(p)`;
    :math:`V_i = \log((1-p)e^{V_{i+1}} + pe^{\ell_i + V_{i+b}})`, :math:`V_{i\ge n} = 0`
    (a ring buffer of ``b`` values); cold start :math:`L = V_0`, warm start
    :math:`L = \log(e^{V_0} + p\sum_{k=1}^{b-1}e^{V_k}) - \log(1+(b-1)p)`.

The ``n``-dimensional kinds keep one draw's :math:`z` (``n`` floats) and its ``n``
ratios; no ``n``-by-draws array is formed.  The "remove" loss is :math:`L(z)` with
:math:`z \sim P` (the participation pattern drawn, its columns added), the "add" loss
:math:`-L(z)` with :math:`z \sim Q`.  Parameters travel as one float64 array (the
``(fill, params)`` protocol of :mod:`sampledprv.sampled.histograms.kernels`); integer
fields are stored exactly as floats.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
from numba import njit

from ...rdp.matrix_moments import log_add
from .rng import normal, uniform
from .torch_draws import require_torch
from .user_fills import states_from

__all__ = ["GRAM", "FIXED", "CYCLIC", "BMINSEP", "EPOCH", "lse_shifted", "correlated_normals",
           "gram_params", "ndim_params", "matrix_fill", "matrix_numpy_sampler", "pointwise_loss",
           "gram_torch_sampler"]

GRAM, FIXED, CYCLIC, BMINSEP, EPOCH = 0.0, 1.0, 2.0, 3.0, 4.0
_HEAD = 10      # kind, sign, n, b, p, warm, log b, nnz1, nnz2, spare


def gram_params(S: np.ndarray, R: np.ndarray, direction: str) -> np.ndarray:
    """Parameter array of the Gram-reduced fixed-bin sampler from the scaled Gram matrix
    ``S`` (``b x b``) and a lower-triangular factor ``R`` with ``R R^T = S``; both are
    stored by rows without their exact zeros."""
    sign = _sign(direction)
    b = S.shape[0]
    sp_, si, sv = _csr(S)
    rp, ri, rv = _csr(R)
    head = np.zeros(_HEAD)
    head[:8] = [GRAM, sign, 0.0, b, 1.0, 0.0, math.log(b), sv.size]
    head[8] = rv.size
    return np.ascontiguousarray(np.concatenate(
        [head, 0.5 * np.diag(S), sp_, si, sv, rp, ri, rv]), dtype=np.float64)


def ndim_params(kind: float, colptr: np.ndarray, rowidx: np.ndarray, vals: np.ndarray,
                n: int, b: int, p: float, warm: bool, direction: str) -> np.ndarray:
    r"""Parameter array of the ``n``-dimensional samplers.

    ``colptr, rowidx, vals``: the columns of :math:`C/\sigma` (compressed sparse
    columns, ``n + 1`` pointers); ``b`` the number of bins / cycle length / minimum
    separation; ``p`` the inclusion probability (1 for the fixed bin)."""
    sign = _sign(direction)
    half = np.zeros(n)
    for i in range(n):
        v = vals[colptr[i]:colptr[i + 1]]
        half[i] = 0.5 * float(v @ v)
    mhalf = np.zeros(b)
    z = np.zeros(n)
    for j in range(b):            # ||m_j||^2 / 2 (no orthogonality assumed)
        z[:] = 0.0
        for i in range(j, n, b):
            z[rowidx[colptr[i]:colptr[i + 1]]] += vals[colptr[i]:colptr[i + 1]]
        mhalf[j] = 0.5 * float(z @ z)
    head = np.zeros(_HEAD)
    head[:8] = [kind, sign, n, b, p, 1.0 if warm else 0.0, math.log(b), vals.size]
    return np.ascontiguousarray(np.concatenate(
        [head, colptr.astype(np.float64), rowidx.astype(np.float64), vals, half, mhalf]),
        dtype=np.float64)


def _sign(direction: str) -> float:
    if direction not in ("remove", "add"):
        raise ValueError(f"direction must be 'remove' or 'add', got {direction!r}")
    return 1.0 if direction == "remove" else -1.0


def _csr(A: np.ndarray) -> tuple:
    A = np.asarray(A, dtype=np.float64)
    ptr = [0]
    idx, val = [], []
    for r in range(A.shape[0]):
        nz = np.nonzero(A[r])[0]
        idx.append(nz)
        val.append(A[r, nz])
        ptr.append(ptr[-1] + nz.size)
    return (np.array(ptr, dtype=np.float64), np.concatenate(idx).astype(np.float64),
            np.concatenate(val))


@njit(cache=True, inline="always")
def lse_shifted(x, half, start, stop):  # pragma: no cover - numba
    r""":math:`\log\sum_{start \le i < stop} e^{x_i - h_i}` (``h`` = ``half``), the
    largest term factored out."""
    m = -math.inf
    for i in range(start, stop):
        if x[i] - half[i] > m:
            m = x[i] - half[i]
    s = 0.0
    for i in range(start, stop):
        s += math.exp(x[i] - half[i] - m)
    return m + math.log(s)


@njit(cache=True, inline="always")
def correlated_normals(state, rptr, ridx, rval, g, u):  # pragma: no cover - numba
    r"""Fill ``g`` with standard normals and ``u`` with :math:`Rg` (``R`` by rows:
    pointers ``rptr``, column indices ``ridx``, values ``rval``): a draw of
    :math:`N(0, RR^\top)`."""
    for j in range(g.shape[0]):
        g[j] = normal(state)
    for r in range(u.shape[0]):
        acc = 0.0
        for q in range(rptr[r], rptr[r + 1]):
            acc += rval[q] * g[ridx[q]]
        u[r] = acc


@njit(cache=True, inline="always")
def _uniform_index(state, b):  # pragma: no cover - numba
    """A uniform index in ``0..b-1`` (the uniform's rounding up to 1 kept inside)."""
    i = int(uniform(state) * b)
    return b - 1 if i >= b else i


@njit(cache=True, inline="always")
def _csr_block(params, o, rows, nnz):  # pragma: no cover - numba
    """The compressed-sparse block stored at offset ``o`` of ``params`` (``rows + 1``
    pointers, ``nnz`` indices, ``nnz`` values) and the offset after it."""
    ptr = params[o:o + rows + 1]
    o += rows + 1
    idx = params[o:o + nnz]
    o += nnz
    return ptr, idx, params[o:o + nnz], o + nnz


@njit(cache=True, inline="always")
def _columns(params):  # pragma: no cover - numba
    """``(cptr, cidx, cval, half, mhalf)`` of ``n``-dimensional parameters
    (:func:`ndim_params`)."""
    n = int(params[2])
    b = int(params[3])
    cptr, cidx, cval, o = _csr_block(params, _HEAD, n, int(params[7]))
    return cptr, cidx, cval, params[o:o + n], params[o + n:o + n + b]


# ---- the Gram-reduced fixed-bin sampler ---------------------------------------------------
@njit(cache=True)
def _gram_fill(state, params, out):  # pragma: no cover - numba
    sign = params[1]
    b = int(params[3])
    logb = params[6]
    ns = int(params[7])
    nr = int(params[8])
    half = params[_HEAD:_HEAD + b]
    sptr, sidx, sval, o = _csr_block(params, _HEAD + b, b, ns)
    rptr, ridx, rval, o = _csr_block(params, o, b, nr)
    z = np.empty(b)
    u = np.empty(b)
    rp = rptr.astype(np.int64)
    ri = ridx.astype(np.int64)
    sp_ = sptr.astype(np.int64)
    si = sidx.astype(np.int64)
    remove = sign > 0.0
    for k in range(out.shape[0]):
        correlated_normals(state, rp, ri, rval, z, u)
        if remove:
            i = _uniform_index(state, b)
            for q in range(sp_[i], sp_[i + 1]):
                u[si[q]] += sval[q]
        out[k] = sign * (lse_shifted(u, half, 0, b) - logb)


# ---- the n-dimensional samplers -----------------------------------------------------------
@njit(cache=True)
def _geometric(state, p):  # pragma: no cover - numba
    """Geometric on {1, 2, ...} with success probability ``p`` (inversion)."""
    if p >= 1.0:
        return 1
    u = 1.0 - uniform(state)          # in (0, 1]
    g = 1.0 + math.floor(math.log(u) / math.log1p(-p))
    if g > 4.0e18:
        return 4000000000000000000
    return int(g)


@njit(cache=True)
def _add_column(z, i, cptr, cidx, cval):  # pragma: no cover - numba
    for q in range(int(cptr[i]), int(cptr[i + 1])):
        z[int(cidx[q])] += cval[q]


@njit(cache=True)
def _loss_of_z(params, z, ell, acc, ring):  # pragma: no cover - numba
    r"""The remove loss :math:`\log P/Q` at the scaled output ``z`` (module docstring);
    ``ell`` (``n``), ``acc`` (``b``), ``ring`` (``b``) are work buffers."""
    kind = params[0]
    n = int(params[2])
    b = int(params[3])
    p = params[4]
    warm = params[5] > 0.0
    logb = params[6]
    cptr, cidx, cval, half, mhalf = _columns(params)
    for i in range(n):                       # dot products c_i^T z
        s = 0.0
        for q in range(int(cptr[i]), int(cptr[i + 1])):
            s += cval[q] * z[int(cidx[q])]
        ell[i] = s
    if kind == FIXED:
        for j in range(b):
            acc[j] = 0.0
        for i in range(n):
            acc[i % b] += ell[i]
        return lse_shifted(acc, mhalf, 0, b) - logb
    if kind == EPOCH:
        total = 0.0
        for e in range(n // b):
            total += lse_shifted(ell, half, e * b, (e + 1) * b) - logb
        return total
    lq = math.log1p(-p) if p < 1.0 else -math.inf
    lp = math.log(p)
    if kind == CYCLIC:
        for j in range(b):
            acc[j] = 0.0
        for i in range(n):
            acc[i % b] += log_add(lq, lp + ell[i] - half[i])
        m = -math.inf
        for j in range(b):
            if acc[j] > m:
                m = acc[j]
        s = 0.0
        for j in range(b):
            s += math.exp(acc[j] - m)
        return m + math.log(s) - logb
    # BMINSEP: ring[i % b] holds V_i for the b suffixes ahead
    for j in range(b):
        ring[j] = 0.0
    for i in range(n - 1, -1, -1):
        v_next = ring[(i + 1) % b]
        v_skip = ring[i % b]                 # V_{i+b}
        ring[i % b] = log_add(lq + v_next, lp + ell[i] - half[i] + v_skip)
    if not warm:
        return ring[0]
    t = ring[0]
    for k in range(1, b):
        t = log_add(t, lp + ring[k])
    return t - math.log1p((b - 1) * p)


@njit(cache=True)
def _draw_pattern(state, params, z):  # pragma: no cover - numba
    """Add the columns of one participation pattern (drawn from the sampler) to ``z``."""
    kind = params[0]
    n = int(params[2])
    b = int(params[3])
    p = params[4]
    warm = params[5] > 0.0
    cptr, cidx, cval, _, _ = _columns(params)
    if kind == EPOCH:
        for e in range(n // b):
            _add_column(z, e * b + _uniform_index(state, b), cptr, cidx, cval)
        return
    if kind == FIXED or kind == CYCLIC:
        s = _uniform_index(state, b)
        for i in range(s, n, b):
            if kind == FIXED or p >= 1.0 or uniform(state) < p:
                _add_column(z, i, cptr, cidx, cval)
        return
    # BMINSEP: last participation at -b (cold) or drawn from the stationary law (warm)
    last = -b
    if warm:
        u = uniform(state) * (1.0 + (b - 1) * p)
        if u >= 1.0:
            k = 1 + int((u - 1.0) / p)
            if k > b - 1:
                k = b - 1
            last = -b + k
    while True:
        nxt = last + b - 1 + _geometric(state, p)
        if nxt >= n:
            return
        _add_column(z, nxt, cptr, cidx, cval)
        last = nxt


@njit(cache=True)
def _ndim_fill(state, params, out):  # pragma: no cover - numba
    sign = params[1]
    n = int(params[2])
    b = int(params[3])
    z = np.empty(n)
    ell = np.empty(n)
    acc = np.empty(b)
    ring = np.empty(b)
    for k in range(out.shape[0]):
        for i in range(n):
            z[i] = normal(state)
        if sign > 0.0:
            _draw_pattern(state, params, z)
        out[k] = sign * _loss_of_z(params, z, ell, acc, ring)


@njit(cache=True)
def matrix_fill(state, params, out):  # pragma: no cover - numba
    """Write ``len(out)`` privacy losses of the DP-MF pair of ``params`` (any kind)."""
    if params[0] == GRAM:
        _gram_fill(state, params, out)
    else:
        _ndim_fill(state, params, out)


def matrix_numpy_sampler(params: np.ndarray) -> Callable[[np.random.Generator, int],
                                                        np.ndarray]:
    """``sample(rng, size)``: :func:`matrix_fill` on streams seeded from ``rng``."""
    params = np.ascontiguousarray(params, dtype=np.float64)

    def sample(rng: np.random.Generator, size: int) -> np.ndarray:
        out = np.empty(int(size))
        matrix_fill(states_from(rng)[0], params, out)
        return out
    return sample


@njit(cache=True)
def _pointwise(params, z):  # pragma: no cover - numba
    n = int(params[2])
    b = int(params[3])
    return _loss_of_z(params, z, np.empty(n), np.empty(b), np.empty(b))


def pointwise_loss(params: np.ndarray, z: np.ndarray) -> float:
    r""":math:`\log P/Q` at the scaled output :math:`z = y/\sigma` (``n`` floats) for
    ``n``-dimensional parameters (:func:`ndim_params`)."""
    if params[0] == GRAM:
        raise ValueError("pointwise_loss takes the n-dimensional parameters (ndim_params)")
    z = np.ascontiguousarray(z, dtype=np.float64)
    if z.shape != (int(params[2]),):
        raise ValueError(f"y must have one value per step ({int(params[2])}), got shape "
                         f"{z.shape}")
    return float(_pointwise(params, z))


def gram_torch_sampler(S: np.ndarray, R: np.ndarray, direction: str,
                       block_floats: int = 1 << 22) -> Callable:
    r"""``f(generator, size) -> float64 Tensor`` of fixed-bin losses on the generator's
    device by the Gram reduction (module docstring): :math:`u = [S e_i] + Rg` for a block
    of draws at a time (``block_floats`` floats of :math:`g`, never ``size x b``)."""
    torch = require_torch()
    sign = _sign(direction)
    b = S.shape[0]
    logb = math.log(b)
    rows_per_block = max(1, int(block_floats) // b)
    cache: dict = {}

    def on(dev: Any) -> tuple:
        key = str(dev)
        if key not in cache:
            cache[key] = (torch.as_tensor(np.ascontiguousarray(R.T), dtype=torch.float64,
                                          device=dev),
                          torch.as_tensor(np.array(S, copy=True), dtype=torch.float64,
                                          device=dev),
                          torch.as_tensor(0.5 * np.diag(S), dtype=torch.float64, device=dev))
        return cache[key]

    def f(gen: Any, size: int) -> Any:
        dev = gen.device
        Rt, St, half = on(dev)
        parts = []
        left = int(size)
        while left > 0:
            r = min(rows_per_block, left)
            u = torch.randn((r, b), generator=gen, device=dev, dtype=torch.float64) @ Rt
            if sign > 0:
                i = torch.randint(0, b, (r,), generator=gen, device=dev)
                u += St[i]
            parts.append(sign * (torch.logsumexp(u - half, dim=1) - logb))
            left -= r
        if not parts:
            return torch.empty(0, dtype=torch.float64, device=dev)
        return torch.cat(parts)
    return f
