"""Numba bridges for user-written samplers: kernel-form functions as fills and samplers.

A user mechanism in kernel form (:class:`~sampledprv.sampled.LogDensityPair` or
:class:`~sampledprv.sampled.PrivacyLossSampler` with ``kernel=True``) gives jitted scalar
``sample(state)``, ``logp(w)``, ``logq(w)`` or a jitted ``fill(state, out)`` drawing from
an xoshiro ``state`` (:mod:`.rng`).  :func:`make_fill` fuses a sampler and two
log-densities into a ``fill`` for the histogram kernels; :func:`fill_as_sampler` and
:func:`scalar_as_vector` run kernel-form functions from Python as numpy-style
``sample(rng, size)`` (for the numpy path and the checks).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from .rng import seed_states

__all__ = ["make_fill", "fill_as_sampler", "scalar_as_vector", "jit_helpers", "states_from"]


_JIT_CACHE: dict = {}


def jit_helpers() -> tuple:
    """Numba drivers (built once): run a kernel-form ``fill``/``sample``/``logf`` from Python."""
    if not _JIT_CACHE:
        from numba import njit

        @njit
        def run_fill(fill, states, out):  # pragma: no cover - numba
            fill(states[0], out)

        @njit
        def run_draw(sample, states, out):  # pragma: no cover - numba
            for i in range(out.shape[0]):
                out[i] = sample(states[0])

        @njit
        def run_map(f, x, out):  # pragma: no cover - numba
            for i in range(x.shape[0]):
                out[i] = f(x[i])
        _JIT_CACHE.update(fill=run_fill, draw=run_draw, map=run_map)
    return _JIT_CACHE["fill"], _JIT_CACHE["draw"], _JIT_CACHE["map"]


def states_from(rng: np.random.Generator) -> np.ndarray:
    """One xoshiro state seeded from ``rng`` (a numpy ``Generator``)."""
    return seed_states(np.random.SeedSequence(int(rng.integers(2**63))), 1)


def fill_as_sampler(fill: Callable) -> Callable:
    """A kernel-form ``fill(state, out)`` as a numpy-style ``sample(rng, size)``."""
    def f(rng: np.random.Generator, size: int) -> np.ndarray:
        out = np.empty(size)
        jit_helpers()[0](fill, states_from(rng), out)
        return out
    return f


def scalar_as_vector(sample: Callable, logp: Callable, logq: Callable) -> tuple:
    """Kernel-form scalar ``sample(state)``, ``logp(w)``, ``logq(w)`` as numpy callables."""
    _, draw, vmap = jit_helpers()

    def s(rng: np.random.Generator, size: int) -> np.ndarray:
        out = np.empty(size)
        draw(sample, states_from(rng), out)
        return out

    def lift(f: Callable) -> Callable:
        def g(w: np.ndarray) -> np.ndarray:
            w = np.ascontiguousarray(w, dtype=np.float64)
            out = np.empty(w.shape[0])
            vmap(f, w, out)
            return out
        return g
    return s, lift(logp), lift(logq)


def make_fill(sample: Callable, logp: Callable, logq: Callable, sign: float) -> Callable:
    """Fused ``fill(state, out)``: draw w, write ``sign * (logp(w) - logq(w))``."""
    from numba import njit

    @njit
    def fill(state, out):  # pragma: no cover - numba
        for i in range(out.shape[0]):
            w = sample(state)
            out[i] = sign * (logp(w) - logq(w))
    return fill
