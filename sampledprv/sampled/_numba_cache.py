"""Numba's on-disk caches of the sampling kernels, invalidated as a whole.

Numba keys a cached kernel by the stamp of the file that defines it, not by the files of
the functions it inlines.  The fused kernels of :mod:`sampledprv.sampled` inline the
samplers of other modules, so after an edit of one of those (a ``git pull`` into an
editable install, a developer's change) the cached kernel would run the *old* sampler:
silently wrong numbers.  :func:`purge_stale` keeps one stamp, a hash of every source file
of the package, next to the caches; when it differs, every cached kernel of the package
is deleted and compiled again on first use.  Installs that rewrite every file (``pip
install``) change every file's stamp anyway.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

_STAMP = "sampledprv-sources.sha256"


def source_digest(root: Path) -> str:
    """SHA-256 of the relative paths and contents of every ``.py`` file under ``root``."""
    h = hashlib.sha256()
    for f in sorted(root.rglob("*.py")):
        h.update(str(f.relative_to(root)).encode())
        h.update(f.read_bytes())
    return h.hexdigest()


def cache_dirs(folder: Path) -> list[Path]:
    """Where Numba caches the kernels of the source files in ``folder``: its
    ``__pycache__`` and, when ``NUMBA_CACHE_DIR`` is set, the folder Numba derives from it
    (``<NUMBA_CACHE_DIR>/<name>_<sha1 of the folder path>``, as
    ``numba.core.caching._UserProvidedCacheLocator`` does)."""
    dirs = [folder / "__pycache__"]
    user = os.environ.get("NUMBA_CACHE_DIR", "")
    if user:
        sub = str(Path(os.path.abspath(folder)))
        dirs.append(Path(user) / "_".join([os.path.split(sub)[-1],
                                            hashlib.sha1(sub.encode()).hexdigest()]))
    return dirs


def purge_stale(root: Path) -> int:
    """Delete the Numba cache files (``*.nbi``, ``*.nbc``) of the source folders under
    ``root`` when the sources changed since they were written (or when they carry no
    stamp: written before this check existed); returns how many were deleted.

    The cache folders are those of :func:`cache_dirs` (``__pycache__``, and the one under
    ``NUMBA_CACHE_DIR`` when that is set).  Every source folder gets its cache folder and
    stamp up front, so kernels compiled from now on land next to a stamp.  The stamp is
    replaced atomically, after the deletions, so a process that starts meanwhile deletes
    the same files or finds none.  Read-only trees are left alone (Numba then caches in a
    user-wide folder keyed by the file stamps, which an install rewrites)."""
    digest = source_digest(root)
    deleted = 0
    folders = {f.parent for f in root.rglob("*.py")}
    for folder in sorted(folders):
        for cache in cache_dirs(folder):
            deleted += _purge_folder(cache, digest)
    return deleted


def _purge_folder(cache: Path, digest: str) -> int:
    stamp = cache / _STAMP
    try:
        if stamp.read_text() == digest:
            return 0
    except OSError:
        pass
    deleted = 0
    try:
        cache.mkdir(parents=True, exist_ok=True)
        for f in list(cache.glob("*.nbi")) + list(cache.glob("*.nbc")):
            try:
                f.unlink()
                deleted += 1
            except FileNotFoundError:      # another process purged it first
                pass
        tmp = cache / f"{_STAMP}.{os.getpid()}"
        tmp.write_text(digest)
        os.replace(tmp, stamp)
    except OSError:                        # not writable: Numba caches elsewhere
        pass
    return deleted
