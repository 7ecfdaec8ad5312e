r"""Inlined xoshiro256++ random numbers for Numba kernels.

Every sampler of :mod:`sampledprv.sampled` draws from a *state*: one xoshiro256++
generator (Blackman & Vigna, 2019; period :math:`2^{256}-1`) plus an auxiliary one
(:func:`next_u64_aux`), stored as a record of :data:`STATE_DTYPE` (eight ``uint64``
fields ``s0..s3``, ``t0..t3``), i.e. an element of the structured array returned by
:func:`seed_states`.  Records are passed by reference
without reference counting, which keeps the hot loops free of atomic operations.
The functions below are ``numba.njit(inline="always")`` functions that take the state
as their first argument and advance it in place, so they inline into the fused
histogram kernels (:mod:`sampledprv.sampled.histograms.kernels`) with no call overhead.  User
code that plugs a custom sampler into the kernels calls them the same way::

    from numba import njit
    from sampledprv.sampled.draws import rng

    @njit
    def my_loss(state, out):          # fills out[:] with privacy-loss samples
        for i in range(out.shape[0]):
            out[i] = 0.5 - rng.normal(state)

Independent streams come from :class:`numpy.random.SeedSequence`: :func:`seed_states`
spawns one child per stream and uses its 256 bits of generated state, so streams are
statistically independent and a run is reproducible from the user's seed alone.

Distributions (all exact up to floating-point granularity):

* :func:`uniform`: :math:`U[0, 1)` on the 53-bit grid ``k / 2**53``;
  :func:`uniform_open`: :math:`U(0, 1)` on ``(k + 1/2) / 2**53`` (safe for ``log``);
* :func:`exponential`: :math:`\mathrm{Exp}(1)`, 256-layer ziggurat (Marsaglia & Tsang 2000);
* :func:`normal`: :math:`N(0, 1)`, 256-layer ziggurat with Marsaglia's exact tail;
* :func:`gamma`: :math:`\mathrm{Gamma}(a, 1)`, Marsaglia & Tsang (2000), with the
  :math:`U^{1/a}` boost for :math:`a < 1`.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, uint64
from numpy.random import bit_generator as _bit_generator

__all__ = [
    "STATE_DTYPE", "seed_states", "next_u64", "next_u64_aux", "uniform_aux",
    "uniform", "uniform_open", "exponential", "normal", "gamma", "random_sign",
]

_INV_2_53 = 1.0 / 9007199254740992.0

#: dtype of one generator state (a numba Record inside jitted code).
STATE_DTYPE = np.dtype([("s0", np.uint64), ("s1", np.uint64), ("s2", np.uint64),
                        ("s3", np.uint64), ("t0", np.uint64), ("t1", np.uint64),
                        ("t2", np.uint64), ("t3", np.uint64)])


def seed_states(seed: object, n_streams: int) -> np.ndarray:
    """Independent xoshiro256++ states for ``n_streams`` logical streams.

    Parameters
    ----------
    seed : int, sequence of int, numpy.random.SeedSequence or None
        Root entropy.  ``None`` draws fresh entropy from the OS (not reproducible).
    n_streams : int
        Number of streams; stream ``i`` is seeded from ``SeedSequence(seed).spawn(n)[i]``
        (the same children whatever ``n`` beyond ``i``); its 8 generated words seed the
        main and the auxiliary generator.

    Returns
    -------
    numpy.ndarray
        Structured array of shape ``(n_streams,)`` and dtype :data:`STATE_DTYPE`;
        element ``i`` is the state of stream ``i`` (never all-zero, the one forbidden
        xoshiro state).  Inside jitted code ``states[i]`` is a mutable record.
    """
    root = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    raw = _children_states(root, n_streams)
    if raw is None:                 # the children one by one (numpy's own SeedSequence)
        raw = np.empty((n_streams, 8), dtype=np.uint64)
        for i in range(n_streams):
            child = np.random.SeedSequence(root.entropy,
                                           spawn_key=tuple(root.spawn_key) + (i,),
                                           pool_size=root.pool_size)
            raw[i] = child.generate_state(8, np.uint64)
    raw[~raw[:, :4].any(axis=1), 0] = 1     # pragma: no cover - probability 2**-256
    raw[~raw[:, 4:].any(axis=1), 4] = 1     # pragma: no cover - probability 2**-256
    return raw.view(STATE_DTYPE).reshape(n_streams)


# numpy's SeedSequence constants (numpy/random/bit_generator.pyx)
_INIT_A, _MULT_A = np.uint32(0x43b0d7e5), np.uint32(0x931e8875)
_INIT_B, _MULT_B = np.uint32(0x8b51f9dd), np.uint32(0x58f38ded)
_MIX_L, _MIX_R = np.uint32(0xca01f9dd), np.uint32(0x4973f715)
_XSHIFT = np.uint32(16)


def _children_states(root: np.random.SeedSequence, n_streams: int):
    """``SeedSequence(root.entropy, spawn_key=root.spawn_key + (i,),
    pool_size=root.pool_size).generate_state(8, uint64)`` for every ``i < n_streams``, as
    rows of a ``(n_streams, 8)`` array: numpy's SeedSequence algorithm (entropy mixing and
    state generation in wrapping uint32 arithmetic) run once over all children, which
    differ only in the last word of their spawn key.  ``None`` where this is not
    possible (numpy's entropy coercion not available, a big-endian machine); the caller
    then builds the children one by one.  Checked bit for bit against numpy's
    SeedSequence by the tests."""
    coerce = getattr(_bit_generator, "_coerce_to_uint32_array", None)
    if coerce is None or np.little_endian is False or n_streams >= 2**32:
        return None
    run = coerce(root.entropy)
    spawn = coerce(tuple(root.spawn_key))
    pool = int(root.pool_size)
    if run.size < pool:             # a spawned sequence pads its entropy to the pool size
        run = np.concatenate([run, np.zeros(pool - run.size, dtype=np.uint32)])
    words = [np.uint32(x) for x in run] + [np.uint32(x) for x in spawn] \
        + [np.arange(n_streams, dtype=np.uint32)]
    hc = [_INIT_A]

    def hashmix(v):
        v = v ^ hc[0]
        hc[0] = np.uint32(hc[0] * _MULT_A)
        v = v * hc[0]
        return v ^ (v >> _XSHIFT)

    def mix(x, y):
        r = _MIX_L * x - _MIX_R * y
        return r ^ (r >> _XSHIFT)

    with np.errstate(over="ignore"):
        mixer = [hashmix(words[i] if i < len(words) else np.uint32(0)) for i in range(pool)]
        for src in range(pool):
            for dst in range(pool):
                if src != dst:
                    mixer[dst] = mix(mixer[dst], hashmix(mixer[src]))
        for src in range(pool, len(words)):
            for dst in range(pool):
                mixer[dst] = mix(mixer[dst], hashmix(words[src]))
        out = np.empty((n_streams, 16), dtype=np.uint32)
        h = _INIT_B
        for k in range(16):
            v = mixer[k % pool] ^ h
            h = np.uint32(h * _MULT_B)
            v = v * h
            out[:, k] = v ^ (v >> _XSHIFT)
    return out.view(np.uint64).copy()


@njit(inline="always")
def _rotl(x, k):  # pragma: no cover - numba
    return (x << uint64(k)) | (x >> uint64(64 - k))


@njit(cache=True, inline="always")
def next_u64(state) -> np.uint64:  # pragma: no cover - numba
    """Next 64 random bits of xoshiro256++; advances the ``state`` record in place."""
    s0 = state.s0
    s1 = state.s1
    s2 = state.s2
    s3 = state.s3
    result = _rotl(s0 + s3, 23) + s0
    t = s1 << uint64(17)
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s3 = _rotl(s3, 45)
    state.s0 = s0
    state.s1 = s1
    state.s2 = s2
    state.s3 = s3
    return result


@njit(cache=True, inline="always")
def next_u64_aux(state) -> np.uint64:  # pragma: no cover - numba
    """Next 64 bits of the stream's auxiliary xoshiro256++ generator (fields ``t0..t3``).

    Samplers that need two random numbers per draw (a candidate and its acceptance
    uniform, a magnitude and its sign) take the second from the auxiliary generator:
    the two state-update chains then run in parallel on the CPU (about 1.4x faster
    than one chain).
    """
    s0 = state.t0
    s1 = state.t1
    s2 = state.t2
    s3 = state.t3
    result = _rotl(s0 + s3, 23) + s0
    t = s1 << uint64(17)
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s3 = _rotl(s3, 45)
    state.t0 = s0
    state.t1 = s1
    state.t2 = s2
    state.t3 = s3
    return result


@njit(cache=True, inline="always")
def uniform_aux(state) -> float:  # pragma: no cover - numba
    """:math:`U[0, 1)` from the auxiliary generator (see :func:`next_u64_aux`)."""
    return float(next_u64_aux(state) >> uint64(11)) * _INV_2_53


@njit(cache=True, inline="always")
def uniform(state) -> float:  # pragma: no cover - numba
    """:math:`U[0, 1)`: ``k / 2**53`` with ``k`` the top 53 bits of :func:`next_u64`."""
    return float(next_u64(state) >> uint64(11)) * _INV_2_53


@njit(cache=True, inline="always")
def uniform_open(state) -> float:  # pragma: no cover - numba
    """:math:`U(0, 1)`: ``(k + 1/2) / 2**53``, never 0 or 1 (safe inside ``log``)."""
    return (float(next_u64(state) >> uint64(11)) + 0.5) * _INV_2_53


@njit(cache=True, inline="always")
def random_sign(state) -> float:  # pragma: no cover - numba
    """``+1.0`` or ``-1.0`` with probability 1/2 each (top bit of :func:`next_u64_aux`)."""
    return 1.0 if (next_u64_aux(state) >> uint64(63)) == uint64(0) else -1.0


# ---------------------------------------------------------------------------------------
# Ziggurat tables (256 layers).  Layer i (0 <= i < 256) has right edge x[i] with
# x[0] = v / f(r) (the base strip: rectangle [0, r] x [0, f(r)] plus the tail), x[1] = r,
# x[i+1] = f^{-1}(f(x[i]) + v / x[i]) and x[256] = 0.  A draw picks a layer i and
# u * x[i]; it is accepted at once when below x[i+1] (fully under the curve).
# ---------------------------------------------------------------------------------------

def _ziggurat_tables(f, finv, r: float, v: float, bits: int):
    n = 256
    x = np.empty(n + 1)
    x[0] = v / f(r)
    x[1] = r
    for i in range(1, n - 1):
        x[i + 1] = finv(f(x[i]) + v / x[i])
    x[n] = 0.0
    scale = float(2 ** bits)
    w = x[:n] / scale                      # x = k * w[i] for k in [0, 2**bits)
    k = np.floor(x[1:] / x[:n] * scale).astype(np.uint64)   # accept when k < k[i]
    fx = np.array([f(t) for t in x])      # f at the layer edges, fx[256] = f(0) = 1
    return w, k, fx


def _solve_r(f, finv, tail, r0: float) -> tuple[float, float]:
    """Refine the ziggurat base edge ``r`` so the 256 layers close exactly at ``f(0) = 1``.

    ``v(r) = r f(r) + tail(r)`` is the common layer area; the closing error
    ``f(x[255]) + v / x[255] - 1`` changes sign at the exact ``r`` (bisection).
    """
    def closing(r: float) -> float:
        v = r * f(r) + tail(r)
        x = r
        for _ in range(1, 255):
            y = f(x) + v / x
            if y >= 1.0:
                return 1.0
            x = finv(y)
        return f(x) + v / x - 1.0

    a, b = r0 * (1 - 1e-6), r0 * (1 + 1e-6)
    fa = closing(a)
    for _ in range(200):
        m = 0.5 * (a + b)
        fm = closing(m)
        if m in (a, b):
            break
        if (fm > 0) == (fa > 0):
            a, fa = m, fm
        else:
            b = m
    r = 0.5 * (a + b)
    return r, r * f(r) + tail(r)


def _f_nor(t: float) -> float:
    return math.exp(-0.5 * t * t)


def _finv_nor(y: float) -> float:
    return math.sqrt(-2.0 * math.log(y))


_NOR_R, _NOR_V = _solve_r(_f_nor, _finv_nor,
                          lambda r: math.sqrt(math.pi / 2) * math.erfc(r / math.sqrt(2)),
                          3.6541528853610088)
_NOR_W, _NOR_K, _NOR_F = _ziggurat_tables(_f_nor, _finv_nor, _NOR_R, _NOR_V, 52)
_EXP_R, _EXP_V = _solve_r(lambda t: math.exp(-t), lambda y: -math.log(y),
                          lambda r: math.exp(-r), 7.69711747013104972)
_EXP_W, _EXP_K, _EXP_F = _ziggurat_tables(
    lambda t: math.exp(-t), lambda y: -math.log(y), _EXP_R, _EXP_V, 56)


@njit(cache=True)
def _exponential_slow(state, i, x) -> float:  # pragma: no cover - numba
    # rare branch of exponential(): wedge test of layer i at x, else a fresh draw
    while True:
        if i == 0:
            return _EXP_R - math.log(uniform_open(state))
        if _EXP_F[i] + uniform(state) * (_EXP_F[i + 1] - _EXP_F[i]) < math.exp(-x):
            return x
        b = next_u64(state)
        i = b & uint64(0xFF)
        k = b >> uint64(8)
        x = float(k) * _EXP_W[i]
        if k < _EXP_K[i]:
            return x


@njit(cache=True, inline="always")
def exponential(state) -> float:  # pragma: no cover - numba
    r"""Standard exponential :math:`\mathrm{Exp}(1)` by a 256-layer ziggurat.

    8 bits choose the layer, 56 bits the abscissa; about 98.9% of draws cost one
    :func:`next_u64` and a multiply (inlined); the wedges and the tail beyond
    ``r = 7.697`` (``r + Exp(1)`` by memorylessness, drawn by inversion) are handled
    out of line.
    """
    b = next_u64(state)
    i = b & uint64(0xFF)
    k = b >> uint64(8)
    x = float(k) * _EXP_W[i]
    if k < _EXP_K[i]:
        return x
    return _exponential_slow(state, i, x)


@njit(cache=True)
def _normal_slow(state, i, neg, x) -> float:  # pragma: no cover - numba
    # rare branch of normal(): tail (layer 0) or wedge test of layer i, else redraw
    while True:
        if i == 0:
            while True:
                xx = -math.log(uniform_open(state)) / _NOR_R
                yy = -math.log(uniform_open(state))
                if yy + yy > xx * xx:
                    return -(_NOR_R + xx) if neg else _NOR_R + xx
        if _NOR_F[i] + uniform(state) * (_NOR_F[i + 1] - _NOR_F[i]) < math.exp(-0.5 * x * x):
            return -x if neg else x
        b = next_u64(state)
        i = b & uint64(0xFF)
        neg = (b >> uint64(8)) & uint64(1)
        k = (b >> uint64(9)) & uint64(0xFFFFFFFFFFFFF)
        x = float(k) * _NOR_W[i]
        if k < _NOR_K[i]:
            return -x if neg else x


@njit(cache=True, inline="always")
def normal(state) -> float:  # pragma: no cover - numba
    r"""Standard normal :math:`N(0, 1)` by a 256-layer ziggurat.

    8 bits choose the layer, 1 bit the sign, 52 bits the abscissa (fast path
    inlined); the wedges and the tail beyond ``r = 3.654`` (Marsaglia's exact method:
    ``x = -log(U1)/r`` accepted when ``-2 log(U2) > x**2``) run out of line.
    """
    b = next_u64(state)
    i = b & uint64(0xFF)
    neg = (b >> uint64(8)) & uint64(1)
    k = (b >> uint64(9)) & uint64(0xFFFFFFFFFFFFF)
    x = float(k) * _NOR_W[i]
    if k < _NOR_K[i]:
        return -x if neg else x
    return _normal_slow(state, i, neg, x)


@njit(cache=True)
def gamma(state, a: float) -> float:  # pragma: no cover - numba
    r"""Gamma(a, 1) for ``a > 0`` (Marsaglia & Tsang 2000).

    For :math:`a \ge 1`, with :math:`d = a - 1/3`, :math:`c = 1/\sqrt{9d}`: draw
    :math:`Z \sim N(0,1)`, :math:`V = (1 + cZ)^3`, accept :math:`dV` when
    :math:`\log U < Z^2/2 + d(1 - V + \log V)`.  For :math:`a < 1`:
    :math:`\mathrm{Gamma}(a+1)\, U^{1/a}`.
    """
    boost = a < 1.0
    a1 = a + 1.0 if boost else a
    d = a1 - 1.0 / 3.0
    c = 1.0 / math.sqrt(9.0 * d)
    while True:
        z = normal(state)
        t = 1.0 + c * z
        if t <= 0.0:
            continue
        v = t * t * t
        u = uniform_open(state)
        z2 = z * z
        if u < 1.0 - 0.0331 * z2 * z2 or math.log(u) < 0.5 * z2 + d * (1.0 - v + math.log(v)):
            g = d * v
            if boost:
                g *= math.exp(-exponential(state) / a)
            return g
