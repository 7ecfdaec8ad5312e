r"""Checkpoints of sharded sampling runs: one file per finished shard, written atomically.

A checkpoint is a directory.  Each histogram of a run (one mechanism, one direction)
has a sub-directory holding

* ``manifest.json`` -- what is being sampled: a stable description of the mechanism,
  the direction, ``n``, the window ``(lo, h, bins)``, the seed (entropy and spawn key
  of the histogram's :class:`numpy.random.SeedSequence`), the shard size and the
  sampling backend;
* ``shard-000017.npz`` -- the counts of shard 17 (its ``counts`` and its ``below``,
  ``above``, ``+inf``, ``-inf`` and ``n``).

Shard files are written to a temporary name in the same directory and renamed with
:func:`os.replace`, which is atomic on POSIX and Windows: a crash leaves either the
whole shard or nothing.  A resumed run loads the shards it finds and samples the
others; since shard ``i`` is a pure function of the manifest and ``i`` (its seed is
the child ``i`` of the histogram's seed), the merged histogram is bit-identical to an
uninterrupted run.  A manifest that differs from the run's refuses the checkpoint
with an error naming the fields that differ; shards are never merged across runs.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import tempfile
import uuid
from pathlib import Path
from typing import Any, Optional

import numpy as np

__all__ = ["Checkpoint", "describe"]

_FORMAT = 1
_ADDR = re.compile(r" at 0x[0-9a-fA-F]+")


def describe(obj: Any) -> str:
    """A description of ``obj`` that is the same in every process.

    Frozen dataclasses (the mechanism specs, :class:`LogDensityPair`, ...) are described
    field by field; functions by ``module.qualname``; arrays by dtype, shape and a hash
    of their bytes; anything else by its ``repr`` with memory addresses removed.
    """
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        parts = ", ".join(f"{f.name}={describe(getattr(obj, f.name))}"
                          for f in dataclasses.fields(obj))
        return f"{type(obj).__qualname__}({parts})"
    if isinstance(obj, np.ndarray):
        import hashlib
        return f"array({obj.dtype}, {obj.shape}, {hashlib.sha1(obj.tobytes()).hexdigest()})"
    if isinstance(obj, (tuple, list)):
        return "(" + ", ".join(describe(o) for o in obj) + ")"
    if callable(obj) and hasattr(obj, "__qualname__"):
        inner = getattr(obj, "py_func", obj)   # numba dispatchers
        return f"{getattr(inner, '__module__', '?')}.{getattr(inner, '__qualname__', '?')}"
    if isinstance(obj, float):
        return repr(obj)
    return _ADDR.sub("", repr(obj))


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
        ``{shard index: (counts, extra)}`` with ``extra = [below, above, +inf, -inf, n]``.
        """
        d = self.path / label
        d.mkdir(parents=True, exist_ok=True)
        mf = d / "manifest.json"
        want = dict(manifest, format=_FORMAT)
        if mf.exists():
            have = json.loads(mf.read_text())
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
        for f in d.glob("shard-*.npz"):
            i = int(f.stem.split("-")[1])
            with np.load(f) as z:
                done[i] = (z["counts"].copy(), z["extra"].copy())
        return done

    def write_shard(self, label: str, index: int, counts: np.ndarray,
                    extra: np.ndarray) -> None:
        """Write shard ``index`` of ``label`` atomically (temporary file + ``os.replace``)."""
        d = self.path / label
        fd, tmp = tempfile.mkstemp(prefix=f".shard-{index:06d}-", suffix=".tmp", dir=d)
        try:
            with os.fdopen(fd, "wb") as f:
                np.savez(f, counts=np.asarray(counts, dtype=np.int64),
                         extra=np.asarray(extra, dtype=np.int64))
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
