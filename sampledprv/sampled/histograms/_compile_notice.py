"""One-line notice on stderr before a slow Numba compilation.

The built-in sampling kernel compiles once (about 20 s on a laptop core) and is cached on
disk; kernels of user fills compile once per process.  A silent 20-second pause looks
like a hang, so :func:`announce_compile` prints one line to ``stderr`` before a call that
will compile, and nothing when the compiled code is already loaded or cached.
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["will_compile", "announce_compile"]

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


def announce_compile(dispatcher: Any, what: str, expected: str) -> None:
    """Print ``sampledprv: compiling <what> (<expected>)...`` once, if a call will compile."""
    key = id(dispatcher)
    if key in _announced or not will_compile(dispatcher):
        return
    _announced.add(key)
    print(f"sampledprv: compiling {what} ({expected})...", file=sys.stderr, flush=True)
