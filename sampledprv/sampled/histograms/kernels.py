r"""Fused privacy-loss histogram kernels: draw -> privacy loss -> bin -> count.

:func:`loss_histogram` draws ``n`` i.i.d. privacy-loss samples of a mechanism in one
direction and returns their :class:`~.histogram.LossHistogram` on the window
``[lo, lo + bins*h)``.  Nothing is dropped: losses below/above the window and the
atoms at :math:`\pm\infty` have their own counters.

Bins.  Bin ``j`` holds the losses ``y`` with ``lo + j*h <= y < lo + (j+1)*h``, the
edges computed in float64 exactly as written (``lo + j*h``); the kernel corrects the
index after ``floor((y - lo)/h)`` so that atoms sitting on an edge land in the bin
these float edges say (exact when ``max(|lo|, |lo + bins*h|) <= 2**40 * h``, which
is checked).

Sources (the ``mechanism`` argument).

1. An analytic spec of :mod:`sampledprv.mechanisms` (``Gaussian``, ``Laplace``,
   ``GeneralizedGaussian``, ``GGNMax``, ``RandomizedResponse``, ``PureDP``,
   ``ApproxDP`` and ``PoissonSubsampled`` of any of these): compiled samplers of
   :mod:`sampledprv.sampled.draws._mechloss`.
2. Any object with a method ``loss_sampler(direction)`` (:mod:`sampledprv.sampled.draws.hooks`)
   returning one of

   * a Numba-jitted ``fill(state, out) -> None`` that writes ``len(out)`` privacy-loss
     samples into the float64 array ``out``, drawing its randomness only from the
     xoshiro256++ ``state`` (a record of :data:`~sampledprv.sampled.draws.rng.STATE_DTYPE`;
     treat it as opaque) with the functions of
     :mod:`sampledprv.sampled.draws.rng` / :mod:`sampledprv.sampled.draws.samplers` (e.g.
     ``rng.normal(state)``, ``rng.uniform(state)``, ``samplers.gg_draw``; a jitted
     exact sampler from :func:`~sampledprv.sampled.draws.samplers.make_rejection_sampler`
     or :meth:`~sampledprv.sampled.draws.ars.AdaptiveRejectionSampler.njit_sampler` is a
     ``draw(state) -> float`` usable inside a fill);
   * a tuple ``(fill, params)`` with a jitted ``fill(state, params, out)`` and a
     float64 array ``params`` (lets one compiled ``fill`` serve many parameter values);
   * a plain Python callable ``sample(rng, size) -> ndarray`` returning ``size`` losses
     drawn with the :class:`numpy.random.Generator` ``rng``: the fallback path, run
     chunked and vectorized in numpy (single-threaded; ``n_threads`` is ignored).

   Jitted fills run on several threads at once: they must be thread-safe (no global
   mutable state) and must not depend on ``len(out)`` beyond filling it (the kernel
   calls them on blocks of :data:`BLOCK` samples).  ``nan`` from a source stops the
   run with :class:`ValueError` naming the source, direction, stream and draw; the
   fallback path checks shapes and NaN of every chunk (a sampler that knows the
   output ``w`` behind a NaN loss should raise itself, naming ``w``).

Reproducibility.  The ``n`` draws are split over :data:`NUM_STREAMS` logical streams
(stream ``i`` gets ``n // NUM_STREAMS + (i < n % NUM_STREAMS)`` draws) seeded by
``SeedSequence(seed).spawn(NUM_STREAMS)`` (:func:`~sampledprv.sampled.draws.rng.seed_states`);
each stream is consumed in blocks of :data:`BLOCK` draws, in order.  Threads take
whole streams, chunks take whole blocks, and counts add, so the same ``seed`` gives
identical histograms for every ``chunk_size`` and ``n_threads``.  The fallback path
uses blocks of :data:`FALLBACK_BLOCK` draws, block ``b`` drawn from
``default_rng(SeedSequence(seed).spawn(...)[b])``, so it too is independent of
``chunk_size``.

Memory is flat in ``n``: one ``(n_threads, bins)`` histogram plus per-thread
buffers of :data:`BLOCK` floats (n = 1e9 runs in about 250 MB RSS, the size of the
imported libraries).  The chunk loop runs in Python between kernel calls, so Ctrl-C
stops a run within one chunk (milliseconds), and a tqdm progress bar reports
progress.

Compilation.  One kernel, :func:`_kernel`, serves every source: it calls the source's
fill through the address of the fill's compiled code (:mod:`._fill_call`), so it does not
link the fill's code into its own (Numba would optimize and emit that code again for
the kernel).  The kernel compiles once and is cached on disk; a built-in sampler kind's
fill (``"gaussian"``, ``"gg"``, ..., :mod:`sampledprv.sampled.draws._mechloss`) compiles
on the first use of that kind only, alone, and is cached on disk too; a user's fill
compiles once per process.  Several threads are Python threads running the kernel at
once (it releases the GIL) on disjoint streams, not a Numba parallel loop, whose
compilation would cost seconds more.  While anything compiles, :mod:`._compile_notice`
shows a bar (or a line) with an estimate.  Numba's cache does not track dependencies
across files: :mod:`sampledprv.sampled._numba_cache` deletes every cached kernel of the
package when any of its source files changed.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from typing import Any, Callable

import numba
import numpy as np
from numba import njit
from numba.core.caching import NullCache
from numba.core.registry import CPUDispatcher

from ... import mechanisms as M
from ._compile_notice import compiling
from ._fill_call import call_fill, fill_address
from ..draws._mechloss import builtin_source, kind_fill, kind_of_fill
from ..draws.hooks import LOSS_SAMPLER, find_hook
from ..draws.rng import seed_states
from ._binning import _ABOVE, _BELOW, _NAN, _NEG, _POS, _bin_index, _count, bin_losses
from ...core.progress import Progress
from ._pypath import FALLBACK_BLOCK, python_histogram
from .histogram import LossHistogram
from .window import check_window

__all__ = ["loss_histogram", "NUM_STREAMS", "BLOCK", "FALLBACK_BLOCK", "bin_losses"]

NUM_STREAMS = 256          #: logical random streams per run (fixed: reproducibility)
BLOCK = 1024               #: draws per call of a source's fill function


@njit(cache=True, nogil=True)
def _kernel(addr, params, states, remaining, done, per_stream, lo, h, hist, extra, nan_at,
            first, step, row):  # pragma: no cover - numba
    """Advance the streams ``first, first + step, ...`` by up to ``per_stream`` draws each
    (a multiple of BLOCK), counting into row ``row`` of ``hist`` and ``extra``.

    ``addr`` is the address of the source's fill (:func:`._fill_call.fill_address`);
    ``nan_at[s]`` records the index (within stream ``s``) of the first NaN loss.  The
    kernel releases the GIL: ``T`` Python threads run it at once on the streams
    ``t, t + T, ...`` (``first = row = t``, ``step = T``), each writing only its own
    streams' entries and its own row.
    """
    bins = hist.shape[1]
    inv_h = 1.0 / h
    buf = np.empty(BLOCK)
    idx = np.empty(BLOCK, dtype=np.int64)
    prm = params.copy()            # thread-local copies: no shared cache lines
    local = states[0:1].copy()
    st = local[0]
    for s in range(first, states.shape[0], step):
        m = min(remaining[s], per_stream)
        local[0] = states[s]
        k0 = 0
        while k0 < m:
            k = min(BLOCK, m - k0)
            out = buf[:k]
            call_fill(addr, st, prm, out)
            _bin_index(out, k, lo, h, inv_h, bins, idx)
            first_nan = _count(idx, k, hist, row, extra)
            if first_nan >= 0 and nan_at[s] < 0:
                nan_at[s] = done[s] + k0 + first_nan
            k0 += k
        states[s] = local[0]
        remaining[s] -= m
        done[s] += m


_POOL: list = [None, -1]           # [ThreadPoolExecutor, pid of its process]
_POOL_LOCK = threading.Lock()


def _pool() -> ThreadPoolExecutor:
    """The process's worker threads (made again after a ``fork``: threads do not survive it)."""
    with _POOL_LOCK:
        if _POOL[0] is None or _POOL[1] != os.getpid():
            _POOL[0] = ThreadPoolExecutor(max_workers=numba.config.NUMBA_NUM_THREADS,
                                          thread_name_prefix="sampledprv-kernel")
            _POOL[1] = os.getpid()
        return _POOL[0]


def _run_kernel(addr, params, states, remaining, done, per_stream, lo, h, hist, extra,
                nan_at) -> None:
    """One chunk: :func:`_kernel` on ``hist.shape[0]`` threads (the calling thread alone
    for one row: no pool, nothing shared, safe after ``fork``)."""
    n_thr = hist.shape[0]
    if n_thr == 1:
        _kernel(addr, params, states, remaining, done, per_stream, lo, h, hist, extra,
                nan_at, 0, 1, 0)
        return
    futures = [_pool().submit(_kernel, addr, params, states, remaining, done, per_stream,
                              lo, h, hist, extra, nan_at, t, n_thr, t)
               for t in range(n_thr)]
    for f in futures:
        f.result()                 # re-raises an error of the fill


@lru_cache(maxsize=None)
def _adapt_two_arg(fill: Callable) -> Callable:
    """Wrap a jitted ``fill(state, out)`` as ``fill(state, params, out)``."""
    @njit
    def fill3(state, params, out):  # pragma: no cover - numba
        fill(state, out)
    return fill3


def _cached_fill(fill: Any) -> bool:
    """Whether ``fill`` is cached on disk (the built-in kinds' fills)."""
    return not isinstance(getattr(fill, "_cache", None), NullCache)


def _is_jitted(f: Any) -> bool:
    return isinstance(f, CPUDispatcher) or hasattr(f, "py_func") and hasattr(f, "signatures")


def _resolve_source(mechanism: Any, direction: str) -> tuple[str, Any, np.ndarray]:
    """``("numba", fill3, params)`` or ``("python", sample, None)``."""
    hook = find_hook(mechanism, LOSS_SAMPLER)
    if isinstance(mechanism, M.Mechanism) and hook is None:
        kind, params = builtin_source(mechanism, direction)
        return "numba", kind_fill(kind), params
    if hook is None:
        raise TypeError(
            f"cannot sample the privacy loss of {mechanism!r}: pass a mechanism spec of "
            "sampledprv.mechanisms or an object with a loss_sampler(direction) method "
            "(see sampledprv.sampled.draws.hooks)")
    src = hook(direction)
    if isinstance(src, tuple) and len(src) == 2 and _is_jitted(src[0]):
        return "numba", src[0], np.ascontiguousarray(src[1], dtype=np.float64).reshape(-1)
    if _is_jitted(src):
        return "numba", _adapt_two_arg(src), np.zeros(1)
    if callable(src):
        return "python", src, None
    raise TypeError(f"{type(mechanism).__name__}.loss_sampler({direction!r}) returned "
                    f"{src!r}; expected a jitted fill, (fill, params) or a callable "
                    "sample(rng, size)")


def _root_seed(seed: Any) -> np.random.SeedSequence:
    if isinstance(seed, np.random.SeedSequence):
        return seed
    if isinstance(seed, np.random.Generator):
        raise TypeError("seed must be an int, a sequence of ints, a SeedSequence or None; "
                        "for a Generator pass generator.bit_generator.seed_seq")
    return np.random.SeedSequence(seed)


def loss_histogram(mechanism: Any, *, direction: str, n: int, lo: float, h: float,
                   bins: int, seed: Any = None, chunk_size: int = 1 << 20,
                   n_threads: int | None = None,
                   progress: bool | None = None) -> LossHistogram:
    """Histogram of ``n`` privacy-loss samples of ``mechanism`` in one direction.

    Parameters
    ----------
    mechanism
        An analytic spec of :mod:`sampledprv.mechanisms` or any object with a
        ``loss_sampler(direction)`` method (protocol in the module docstring).
    direction : {"remove", "add"}
        ``"remove"``: :math:`Y = \\log p(w)/q(w)`, :math:`w \\sim P`; ``"add"``:
        :math:`Y = \\log q(w)/p(w)`, :math:`w \\sim Q`.
    n : int
        Number of draws (any size: memory does not grow with ``n``).
    lo, h, bins
        Window ``[lo, lo + bins*h)``, bin width ``h``.
    seed : int, sequence of int, SeedSequence or None
        Root seed.  The same seed gives the same counts whatever ``chunk_size`` and
        ``n_threads``; independent seeds give independent histograms that add
        (:meth:`~.histogram.LossHistogram.__add__`).
    chunk_size : int
        Draws per kernel call (rounded up to whole blocks of every stream); only
        affects how often progress is reported and how fast Ctrl-C responds.
    n_threads : int, optional
        Threads that run the compiled kernel (default: Numba's current setting, at most
        ``NUMBA_NUM_THREADS``).  ``1`` runs it on the calling thread only (no thread
        pool: safe after ``fork`` and from several Python threads at once).  The counts
        are the same for every ``n_threads``.
    progress : bool, optional
        ``True``/``False`` force the tqdm bar on/off; ``None`` shows it only for runs
        expected to last more than about 2 seconds.

    Returns
    -------
    LossHistogram

    Raises
    ------
    ValueError
        Bad window or direction, or NaN privacy losses (naming source and draw).
    """
    if direction not in ("remove", "add"):
        raise ValueError(f"direction must be 'remove' or 'add', got {direction!r}")
    n, lo, h, bins = check_window(n, lo, h, bins)
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, (int, np.integer)) \
            or chunk_size < 1:
        raise ValueError(f"chunk_size must be a positive integer, got {chunk_size!r}")
    root = _root_seed(seed)
    kind, fill, params = _resolve_source(mechanism, direction)
    if kind == "python":
        bar = Progress(progress, n, f"sampling {direction} losses")
        try:
            counts, extra = python_histogram(mechanism, fill, direction, n, lo, h, bins,
                                             root, on_draws=bar.update)
        finally:
            bar.close()
        return LossHistogram(counts, int(extra[_BELOW]), int(extra[_ABOVE]), int(extra[_POS]),
                             int(extra[_NEG]), n, lo, h)
    return _numba_histogram(mechanism, fill, params, direction, n, lo, h, bins, root,
                            int(chunk_size), n_threads, progress)


def _numba_histogram(mechanism, fill, params, direction, n, lo, h, bins, root, chunk_size,
                     n_threads, progress) -> LossHistogram:
    max_thr = numba.config.NUMBA_NUM_THREADS
    if n_threads is None:
        n_threads = numba.get_num_threads()
    if isinstance(n_threads, bool) or not isinstance(n_threads, (int, np.integer)) \
            or not 1 <= n_threads <= max_thr:
        raise ValueError(f"n_threads must be an integer in [1, {max_thr}], got {n_threads!r}")
    n_threads = int(n_threads)
    states = seed_states(root, NUM_STREAMS)
    remaining = np.full(NUM_STREAMS, n // NUM_STREAMS, dtype=np.int64)
    remaining[: n % NUM_STREAMS] += 1
    done = np.zeros(NUM_STREAMS, dtype=np.int64)
    nan_at = np.full(NUM_STREAMS, -1, dtype=np.int64)
    per_stream = -(-chunk_size // (NUM_STREAMS * BLOCK)) * BLOCK
    hist = np.zeros((n_threads, bins), dtype=np.int64)
    extra = np.zeros((n_threads, 5), dtype=np.int64)
    params = np.array(params, dtype=np.float64).reshape(-1)   # a writable C copy
    kind = kind_of_fill(fill)
    what = (f"the {kind} sampling kernel" if kind is not None
            else f"the sampling kernel of {type(mechanism).__name__}")
    notice = compiling((fill, _kernel), what, (kind or "user", "kernel"),
                       cached=_cached_fill(fill), progress=progress)
    bar = Progress(progress, n, f"sampling {direction} losses")
    try:
        left = n
        while left > 0:
            if notice is not None:          # the first call may compile: show progress
                with notice:
                    addr = fill_address(fill)
                    _run_kernel(addr, params, states, remaining, done, per_stream, lo, h,
                                hist, extra, nan_at)
                notice = None
            else:
                _run_kernel(addr, params, states, remaining, done, per_stream, lo, h, hist,
                            extra, nan_at)
            if extra[:, _NAN].any():
                s = int(np.flatnonzero(nan_at >= 0)[0])
                raise ValueError(
                    f"privacy-loss source {mechanism!r} (direction {direction!r}) returned "
                    f"NaN at draw {int(nan_at[s])} of stream {s}; a privacy loss must be a "
                    "number or +-inf (check log-densities for inf - inf and 0 * inf)")
            new_left = int(remaining.sum())
            bar.update(left - new_left)
            left = new_left
    finally:
        bar.close()
    tot = extra.sum(axis=0)
    return LossHistogram(hist.sum(axis=0), int(tot[_BELOW]), int(tot[_ABOVE]),
                         int(tot[_POS]), int(tot[_NEG]), n, lo, h)
