r"""Checkpoints of sharded sampling runs: one file per finished shard, written atomically.

A checkpoint is a directory.  Each histogram of a run (one mechanism, one direction)
has a sub-directory holding

* ``manifest.json`` -- what is being sampled: a stable description of the mechanism,
  the direction, ``n``, the window ``(lo, h, bins)``, the seed (entropy and spawn key
  of the histogram's :class:`numpy.random.SeedSequence`), the shard size and the
  sampling backend;
* ``shard-000017.npz`` -- the counts of shard 17 (its ``counts`` and its ``below``,
  ``above``, ``+inf``, ``-inf`` and ``n``) and a SHA-256 ``digest`` of the manifest, the
  shard index and those counts.

Shard files are written to a temporary name in the same directory and renamed with
:func:`os.replace`, which is atomic on POSIX and Windows: a crash leaves either the
whole shard or nothing.  A resumed run loads the shards it finds and samples the
others; since shard ``i`` is a pure function of the manifest and ``i`` (its seed is
the child ``i`` of the histogram's seed), the merged histogram is bit-identical to an
uninterrupted run.  A manifest that differs from the run's refuses the checkpoint
with an error naming the fields that differ; shards are never merged across runs.

Every file is checked when a run resumes, and a bad one is refused with a
:class:`ValueError` that names it and says what to do (delete the file: its shard is
sampled again): a file that cannot be read (a flipped byte, a truncated or empty file),
a manifest that is not the JSON this module writes, and a shard whose digest does not
match its contents, its index or the manifest -- counts edited and saved again, or a
shard copied in from a run with another seed, mechanism or window.  The digest detects
accidents, not forgery: whoever recomputes it can make any counts pass.

User functions (``logp``, samplers, Renyi callables) enter the manifest as
``module.qualname`` plus a fingerprint (:func:`fingerprint`) of their byte code,
constants, default arguments and closure values: editing a function's body or a value
it closes over refuses the old checkpoint.  Not detected: changes to the module-level
globals a function reads, and to functions it calls by name.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import tempfile
import uuid
from pathlib import Path
from typing import Any, Optional

import numpy as np

__all__ = ["Checkpoint", "describe", "fingerprint"]

_FORMAT = 2
_ADDR = re.compile(r" at 0x[0-9a-fA-F]+")


def describe(obj: Any) -> str:
    """A description of ``obj`` that is the same in every process.

    Frozen dataclasses (the mechanism specs, :class:`LogDensityPair`, ...) are described
    field by field; functions by ``module.qualname`` and :func:`fingerprint`; arrays by
    dtype, shape and a hash of their bytes; anything else by its ``repr`` with memory
    addresses removed.
    """
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        parts = ", ".join(f"{f.name}={describe(getattr(obj, f.name))}"
                          for f in dataclasses.fields(obj))
        return f"{type(obj).__qualname__}({parts})"
    if isinstance(obj, np.ndarray):
        return f"array({obj.dtype}, {obj.shape}, {hashlib.sha1(obj.tobytes()).hexdigest()})"
    if isinstance(obj, (tuple, list)):
        return "(" + ", ".join(describe(o) for o in obj) + ")"
    if callable(obj) and hasattr(obj, "__qualname__"):
        inner = getattr(obj, "py_func", obj)   # numba dispatchers
        name = f"{getattr(inner, '__module__', '?')}.{getattr(inner, '__qualname__', '?')}"
        code = fingerprint(inner)
        return f"{name}#{code}" if code else name
    if isinstance(obj, float):
        return repr(obj)
    return _ADDR.sub("", repr(obj))


def fingerprint(func: Any, _depth: int = 0) -> str:
    """A short hash of a Python function's code, constants, defaults and closure values
    (``""`` for objects without ``__code__``, such as builtins).  Stable across
    processes of the same Python version."""
    code = getattr(func, "__code__", None)
    if code is None:
        return ""
    h = hashlib.sha256()

    def feed_code(c: Any) -> None:
        h.update(c.co_code)
        h.update(repr(c.co_names).encode())
        h.update(repr(c.co_varnames).encode())
        for const in c.co_consts:
            if hasattr(const, "co_code"):
                feed_code(const)
            else:
                h.update(_ADDR.sub("", repr(const)).encode())

    feed_code(code)
    if _depth < 3:
        try:
            for value in (getattr(func, "__defaults__", None) or ()):
                h.update(_value(value, _depth).encode())
            for cell in (getattr(func, "__closure__", None) or ()):
                try:
                    h.update(_value(cell.cell_contents, _depth).encode())
                except ValueError:              # an empty cell
                    h.update(b"<empty>")
        except RecursionError:                  # values that refer back to the function
            h.update(b"<cyclic>")
    return h.hexdigest()[:12]


def _value(value: Any, depth: int) -> str:
    """A closure value or default for :func:`fingerprint`."""
    if callable(value) and hasattr(getattr(value, "py_func", value), "__code__"):
        inner = getattr(value, "py_func", value)
        return f"{getattr(inner, '__qualname__', '?')}#{fingerprint(inner, depth + 1)}"
    return describe(value)


def shard_digest(manifest: dict, index: int, counts: np.ndarray, extra: np.ndarray) -> str:
    """SHA-256 of the manifest, the shard index and the shard's counts."""
    h = hashlib.sha256(json.dumps(dict(manifest, format=_FORMAT), sort_keys=True).encode())
    h.update(str(int(index)).encode())
    h.update(np.ascontiguousarray(counts, dtype=np.int64).tobytes())
    h.update(np.ascontiguousarray(extra, dtype=np.int64).tobytes())
    return h.hexdigest()


def _refuse(path: Path, problem: str, remedy: str) -> ValueError:
    return ValueError(f"checkpoint file {str(path)!r} {problem}; {remedy}")


_DELETE_SHARD = ("delete this file (its shard is sampled again on the next run, and the "
                 "result stays bit-identical)")


#: manifest fields and the words used to name them in errors
_FIELDS = {"mechanism": "mechanism", "direction": "direction", "n": "number of samples n",
           "lo": "window (lo)", "h": "window (bin width h)", "bins": "bins",
           "seed": "seed", "shard_size": "shard size", "backend": "sampling backend"}


class Checkpoint:
    """A checkpoint directory (created if missing; checked writable at once).

    Parameters
    ----------
    path : str or os.PathLike
        Directory.  Raises :class:`ValueError` at construction when it cannot be created
        or written, so a bad path fails before any sampling.
    """

    def __init__(self, path: "str | os.PathLike[str]") -> None:
        self.path = Path(path)
        self._manifests: dict[str, dict] = {}
        try:
            if self.path.exists() and not self.path.is_dir():
                raise OSError(f"{self.path} exists and is not a directory")
            self.path.mkdir(parents=True, exist_ok=True)
            probe = self.path / f".probe-{uuid.uuid4().hex}"
            with open(probe, "wb") as f:
                f.write(b"ok")
            os.replace(probe, self.path / ".writable")
        except OSError as e:
            raise ValueError(f"checkpoint path {str(path)!r} is not a writable directory "
                             f"({e}); pass checkpoint= a directory you can create and write "
                             "to") from None

    def __repr__(self) -> str:
        return f"Checkpoint({str(self.path)!r})"

    # ---- manifests ----------------------------------------------------------------------
    def open(self, label: str, manifest: dict) -> dict[int, tuple]:
        """Bind the sub-directory ``label`` to ``manifest``; return the finished shards.

        Writes the manifest on first use; otherwise compares it with the stored one and
        raises :class:`ValueError` naming every field that differs.  Returns
        ``{shard index: (counts, extra)}`` with ``extra = [below, above, +inf, -inf]``;
        a damaged or foreign file raises :class:`ValueError` naming it (module docstring).
        """
        d = self.path / label
        d.mkdir(parents=True, exist_ok=True)
        self._manifests[label] = dict(manifest)
        mf = d / "manifest.json"
        want = dict(manifest, format=_FORMAT)
        if mf.exists():
            have = self._read_manifest(mf)
            diff = [k for k in sorted(set(want) | set(have)) if want.get(k) != have.get(k)]
            if diff:
                lines = "; ".join(f"{_FIELDS.get(k, k)}: checkpoint has {have.get(k)!r}, this "
                                  f"run has {want.get(k)!r}" for k in diff)
                names = ", ".join(_FIELDS.get(k, k) for k in diff)
                raise ValueError(
                    f"checkpoint {str(d)!r} was written by a different run (different "
                    f"{names}): {lines}. Shards of different runs are never merged; pass a "
                    "new checkpoint path or restore the run's original settings")
        else:
            self._atomic_write(mf, json.dumps(want, indent=1, sort_keys=True).encode())
        done = {}
        for f in sorted(d.glob("shard-*.npz")):
            i, counts, extra = self._read_shard(f, manifest)
            done[i] = (counts, extra)
        return done

    @staticmethod
    def _read_manifest(mf: Path) -> dict:
        """The stored manifest; a file that is not a JSON object is refused by name."""
        try:
            have = json.loads(mf.read_text())
        except (OSError, UnicodeDecodeError, ValueError) as err:
            raise _refuse(mf, f"is not a readable manifest ({type(err).__name__}: {err})",
                          "delete this sub-directory of the checkpoint (its shards are "
                          "sampled again) or pass a new checkpoint path") from None
        if not isinstance(have, dict):
            raise _refuse(mf, f"holds a JSON {type(have).__name__}, not a manifest object",
                          "delete this sub-directory of the checkpoint (its shards are "
                          "sampled again) or pass a new checkpoint path")
        return have

    @staticmethod
    def _read_shard(f: Path, manifest: dict) -> tuple[int, np.ndarray, np.ndarray]:
        """Shard file ``f``: ``(index, counts, extra)``, each check failure refused by name."""
        try:
            i = int(f.stem.split("-")[1])
        except (IndexError, ValueError):
            raise _refuse(f, "is not named shard-<index>.npz", "delete or rename it") from None
        try:
            with np.load(f, allow_pickle=False) as z:
                counts, extra = z["counts"].copy(), z["extra"].copy()
                digest = str(z["digest"]) if "digest" in z.files else None
        except Exception as err:  # noqa: BLE001 - zip, zlib, EOF, key and format errors
            raise _refuse(f, f"cannot be read ({type(err).__name__}: {err}): it is "
                          "damaged (a flipped byte, a truncated or empty file)",
                          _DELETE_SHARD) from None
        if digest is None:
            raise _refuse(f, "has no content digest", _DELETE_SHARD)
        if counts.dtype.kind not in "iu" or extra.dtype.kind not in "iu" or \
                counts.ndim != 1 or extra.ndim != 1 or extra.size < 4:
            raise _refuse(f, f"holds arrays of the wrong type or shape ({counts.dtype} "
                          f"{counts.shape}, {extra.dtype} {extra.shape})", _DELETE_SHARD)
        if digest != shard_digest(manifest, i, counts, extra):
            raise _refuse(f, "does not match its digest: its counts were changed after it "
                          "was written, or it was copied in from another run (another "
                          "seed, mechanism or window) or from another shard index",
                          _DELETE_SHARD)
        return i, counts, extra

    def write_shard(self, label: str, index: int, counts: np.ndarray,
                    extra: np.ndarray, manifest: Optional[dict] = None) -> None:
        """Write shard ``index`` of ``label`` atomically (temporary file + ``os.replace``)
        with its digest (``manifest``: the one given to :meth:`open`, the default)."""
        d = self.path / label
        manifest = self._manifests[label] if manifest is None else manifest
        counts = np.asarray(counts, dtype=np.int64)
        extra = np.asarray(extra, dtype=np.int64)
        fd, tmp = tempfile.mkstemp(prefix=f".shard-{index:06d}-", suffix=".tmp", dir=d)
        try:
            with os.fdopen(fd, "wb") as f:
                np.savez(f, counts=counts, extra=extra,
                         digest=np.array(shard_digest(manifest, index, counts, extra)))
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, d / f"shard-{index:06d}.npz")
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise

    @staticmethod
    def _atomic_write(path: Path, data: bytes) -> None:
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)


def as_checkpoint(path: Optional["str | os.PathLike[str] | Checkpoint"]) -> Optional[Checkpoint]:
    """``None``, a :class:`Checkpoint`, or a path made into one (checked writable)."""
    if path is None or isinstance(path, Checkpoint):
        return path
    if not isinstance(path, (str, os.PathLike)):
        raise ValueError(f"checkpoint must be a directory path or None, got {path!r}")
    return Checkpoint(path)
