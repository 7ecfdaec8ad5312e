"""Progress indication while Numba compiles a sampler, with an estimate of how long.

The sampling kernel (one for every source) and the fill of each built-in sampler kind
compile on first use and are then cached on disk
(:mod:`sampledprv.sampled.histograms.kernels`); user fills compile once per process.
A silent pause looks like a hang, so :func:`compiling` shows, before a call that will
compile (and only then):

* a tqdm bar on ``stderr`` counting the elapsed seconds against the estimate, when
  progress bars are on (``progress=True``, or ``None`` and ``stderr`` is a terminal);
* otherwise one line, ``sampledprv: compiling <what> (about N s, ...)...``.

The estimate is honest rather than fixed: the CPU seconds each piece took to compile on
a reference core (:data:`COMPILE_CPU_S`, measured; the ``key`` of a kind), added over
the pieces that will compile and scaled by how busy the machine is (the 1-minute load
average per core, at least 1).  When compilation runs past the estimate the bar's total
grows with it.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from typing import Any, Iterator, Optional, Tuple, Union

__all__ = ["will_compile", "announce_compile", "compiling", "estimate_seconds",
           "COMPILE_CPU_S"]

#: CPU seconds to compile, in a fresh process, the fill of each sampler kind (with the
#: samplers it calls; ``"<kind>_sym"`` counts as its kind), ``"kernel"`` for the one
#: sampling kernel, and ``"user"`` (also used for additive-noise families) for a user's
#: fill, on one core of the reference machine (2-core Intel Xeon, Numba 0.68, measured
#: under load 13: an upper end).
COMPILE_CPU_S = {"gaussian": 1.5, "laplace": 1.5, "gg": 6.0, "two_point": 1.0,
                 "table": 1.0, "user": 2.0, "kernel": 1.0}

_announced: set[int] = set()


def _cached_on_disk(dispatcher: Any) -> bool:
    """True when Numba's on-disk cache holds a valid index for ``dispatcher``.

    Reads Numba's cache index the way Numba does (stale indices, whose source stamp
    does not match the file, count as absent).  Any failure counts as "not cached":
    the worst case is an unnecessary notice.
    """
    cache = getattr(dispatcher, "_cache", None)
    cache_file = getattr(cache, "_cache_file", None)
    if cache_file is None:          # NullCache: not cacheable, compiles in every process
        return False
    try:
        return bool(cache_file._load_index())
    except Exception:  # noqa: BLE001 - a private Numba API; be conservative
        return False


def will_compile(dispatcher: Any) -> bool:
    """True when the next call of the Numba ``dispatcher`` compiles (not loaded, not cached)."""
    if getattr(dispatcher, "signatures", None):       # already compiled in this process
        return False
    return not _cached_on_disk(dispatcher)


def _busy_factor() -> float:
    """How many times slower than on a free core: 1-minute load per core, at least 1."""
    try:
        load = os.getloadavg()[0]
    except (OSError, AttributeError):       # pragma: no cover - not on this platform
        return 1.0
    return max(1.0, load / max(1, os.cpu_count() or 1))


def estimate_seconds(key: str) -> float:
    """Expected wall seconds to compile the kernel ``key`` (a sampler kind or ``"user"``)
    on this machine now."""
    cpu = COMPILE_CPU_S.get(key)
    if cpu is None:                 # "<kind>_sym" as its kind; others as a user fill
        cpu = COMPILE_CPU_S.get(key.removesuffix("_sym"), COMPILE_CPU_S["user"])
    return cpu * _busy_factor()


def _show_bar(progress: Optional[bool]) -> bool:
    if progress is False:
        return False
    try:
        from tqdm import tqdm  # noqa: F401,PLC0415 - optional
    except ImportError:
        return False
    if progress:
        return True
    return bool(getattr(sys.stderr, "isatty", lambda: False)())


@contextlib.contextmanager
def compiling(dispatcher: Any, what: str, key: Union[str, Tuple[str, ...]], *,
              cached: bool = True, progress: Optional[bool] = None) -> Iterator[None]:
    """Context of a call that may compile ``dispatcher``: shows progress if it will.

    Parameters
    ----------
    dispatcher
        The Numba dispatcher about to be called, or a tuple of those the call needs.
    what : str
        What compiles, for the message (``"the gaussian sampling kernel"``).
    key : str or tuple of str
        Entry of :data:`COMPILE_CPU_S` giving the estimate; one per dispatcher for a
        tuple (the estimate adds those of the dispatchers that will compile).
    cached : bool
        Whether the result is cached on disk (said in the message).
    progress : bool or None
        ``True``/``False`` force the bar on/off; ``None``: a bar when ``stderr`` is a
        terminal, else one line.
    """
    many = isinstance(dispatcher, tuple)
    ds = dispatcher if many else (dispatcher,)
    keys = key if isinstance(key, tuple) else (key,) * len(ds)
    todo = [(d, k) for d, k in zip(ds, keys) if id(d) not in _announced and will_compile(d)]
    if not todo:
        yield
        return
    _announced.update(id(d) for d, _ in todo)
    est = sum(estimate_seconds(k) for _, k in todo)
    where = "cached on disk afterwards" if cached else "once per process"
    if not _show_bar(progress):
        print(f"sampledprv: compiling {what} (first use, about {est:.0f} s; {where})...",
              file=sys.stderr, flush=True)
        yield
        return
    from tqdm import tqdm  # noqa: PLC0415 - optional
    bar = tqdm(total=round(est, 1), desc=f"compiling {what} ({where})", unit="s",
               file=sys.stderr, bar_format="{desc}: {bar} {n:.0f}/{total:.0f} s (estimate)")
    stop = threading.Event()
    t0 = time.perf_counter()

    def tick() -> None:
        while not stop.wait(0.5):
            el = time.perf_counter() - t0
            if el > bar.total:
                bar.total = round(el * 1.25, 1)
            bar.n = round(el, 1)
            bar.refresh()

    th = threading.Thread(target=tick, name="sampledprv-compile-progress", daemon=True)
    th.start()
    try:
        yield
    finally:
        stop.set()
        th.join()
        el = time.perf_counter() - t0
        bar.total = max(bar.total, round(el, 1))
        bar.n = round(el, 1)
        bar.close()


def announce_compile(dispatcher: Any, what: str, expected: str) -> None:
    """Print ``sampledprv: compiling <what> (<expected>)...`` once, if a call will compile.

    Kept for callers outside the sampling kernels; those use :func:`compiling`.
    """
    key = id(dispatcher)
    if key in _announced or not will_compile(dispatcher):
        return
    _announced.add(key)
    print(f"sampledprv: compiling {what} ({expected})...", file=sys.stderr, flush=True)
