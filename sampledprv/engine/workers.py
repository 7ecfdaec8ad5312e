"""Worker threads inside one direction's composition (the fused tree levels' row blocks
and the four-step column transforms).

numpy's transforms and large ufuncs release the GIL, so independent pieces of one
transform run on several cores. The two directions of a build already run in two
threads (:mod:`sampledprv.analytic.build`); on a machine with more cores than that,
each direction's levels share the rest: ``cores // directions`` threads each.

Every threaded piece computes exactly what the one-thread loop computes, on the same
data, and the sums over pieces (spectral norms) are added in the pieces' order, so the
results are the same bit for bit whatever the thread count
(``tests/test_engine_threads.py``).
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Callable, Iterator, Sequence, TypeVar

__all__ = ["available_cores", "level_threads", "using_threads", "map_ordered", "chunks",
           "CoreShare"]

T = TypeVar("T")
R = TypeVar("R")

#: most threads one direction uses (the row blocks of a level are a few hundred)
MAX_THREADS = 32

class CoreShare:
    """The cores of one machine shared by the builds at work: each member gets
    ``cores // members`` threads, re-read at every threaded call, so a build that is left
    alone takes the cores the others gave back (the pieces compute the same floats
    whatever the thread count)."""

    def __init__(self, cores: int) -> None:
        self.cores = max(1, int(cores))
        self._members = 0
        self._lock = threading.Lock()

    @contextmanager
    def member(self) -> Iterator[None]:
        """Count the calling build as at work for the block."""
        with self._lock:
            self._members += 1
        try:
            yield
        finally:
            with self._lock:
                self._members -= 1

    def threads(self) -> int:
        return max(1, min(MAX_THREADS, self.cores // max(1, self._members)))


_THREADS: ContextVar["int | CoreShare"] = ContextVar("sampledprv_level_threads", default=1)


def available_cores() -> int:
    """Cores this process may run on (its CPU affinity where the platform tells it)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - platforms without affinity
        return max(1, os.cpu_count() or 1)


def level_threads() -> int:
    """Threads the current direction's levels may use (1 outside :func:`using_threads`)."""
    n = _THREADS.get()
    return n.threads() if isinstance(n, CoreShare) else n


@contextmanager
def using_threads(n: "int | CoreShare") -> Iterator[None]:
    """Let the code run in this block (in this thread) use ``n`` worker threads (a
    :class:`CoreShare`: its members' share of the cores, re-read at each call)."""
    token = _THREADS.set(n if isinstance(n, CoreShare) else max(1, min(int(n), MAX_THREADS)))
    try:
        yield
    finally:
        _THREADS.reset(token)


def map_ordered(fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
    """``[fn(item) for item in items]``, on :func:`level_threads` threads when there are
    more than one (results in the items' order)."""
    n = min(level_threads(), len(items))
    if n <= 1:
        return [fn(item) for item in items]
    with ThreadPoolExecutor(max_workers=n) as pool:
        return list(pool.map(fn, items))


def chunks(size: int, min_width: int = 64) -> list[tuple[int, int]]:
    """``[(i0, i1), ...]`` covering ``0 .. size`` (columns, rows, blocks of a spectrum):
    one chunk per thread, none narrower than ``min_width``; the whole range on one
    thread (where the threaded loops then make the single call they always made)."""
    n = max(1, min(level_threads(), size // max(min_width, 1)))
    edges = [round(i * size / n) for i in range(n + 1)]
    return [(edges[i], edges[i + 1]) for i in range(n) if edges[i + 1] > edges[i]]
