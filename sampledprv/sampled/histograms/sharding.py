r"""Sharded sampling: one histogram = a sum of shards, run in-process, on a
:class:`concurrent.futures.Executor` or on a Dask cluster.

A :class:`HistogramJob` is ``n`` privacy-loss draws of one mechanism in one direction on
one window.  It is cut into ``ceil(n / shard_size)`` shards: shard ``i`` has
``shard_size`` draws (the last one the rest) and the seed

.. math:: \text{SeedSequence}(\text{entropy}, \text{spawn\_key} + (i,))

-- the child ``i`` of the job's seed, keyed by the index, not by the order in which
shards are handed out.  A shard is a pure function of ``(job, i)``
(:func:`run_shard`): the same counts on any worker, with any number of threads, however
often it is re-run.  The job's histogram is the integer sum of its shards, so it is
bit-identical for every executor, number of workers and completion order, and equal to
the in-process result, which runs the same shards one after the other.

Executors (:func:`run_jobs`):

* ``None`` -- in-process, every shard on all of Numba's threads;
* a :class:`dask.distributed.Client` -- shards are Dask tasks with deterministic keys;
  a worker that dies mid-shard costs that shard, which the scheduler re-runs elsewhere
  from the same seed.  Before sampling, every worker is asked (``client.run``) whether
  it can import ``sampledprv`` and ``numba`` (and ``torch`` for the torch backend);
* any :class:`concurrent.futures.Executor` (``ProcessPoolExecutor``,
  ``ThreadPoolExecutor``, ...).  A ``ProcessPoolExecutor`` pickles the mechanism with
  :mod:`pickle`, so it must be a module-level object (no lambdas): checked before
  sampling.

Shards run by executors use ``threads_per_task`` Numba threads (default 1: one task per
core, the layout of ``LocalCluster``, ``dask worker --nthreads`` and a default
``ProcessPoolExecutor``); one thread uses a serial kernel that never touches Numba's
threading layer.  One progress bar (draws, rate, time left) covers the whole run.
"""

from __future__ import annotations

import concurrent.futures as cf
import hashlib
import json
import math
import pickle
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

import numpy as np

from ._binning import _ABOVE, _BELOW, _NEG, _POS
from ...core.progress import Progress
from ..draws.torch_draws import require_torch
from .checkpoint import Checkpoint, describe
from .histogram import LossHistogram
from .kernels import loss_histogram
from .torch_histogram import torch_loss_histogram
from ...core.version import __version__

__all__ = ["HistogramJob", "run_shard", "run_jobs", "shard_seed", "executor_kind",
           "check_executor", "DEFAULT_SHARD_SIZE"]

DEFAULT_SHARD_SIZE = 1 << 27   #: draws per shard (about 0.5 s on one core)
BACKENDS = ("numba", "torch")


def shard_seed(seed: np.random.SeedSequence, index: int) -> np.random.SeedSequence:
    """Child ``index`` of ``seed``, keyed by the index (independent of spawn order)."""
    return np.random.SeedSequence(seed.entropy, spawn_key=tuple(seed.spawn_key) + (int(index),),
                                  pool_size=seed.pool_size)


@dataclass(frozen=True)
class HistogramJob:
    """``n`` draws of the privacy loss of ``mechanism`` in ``direction`` on the window
    ``[lo, lo + bins h)``, in shards of ``shard_size`` draws seeded by children of ``seed``.

    ``label`` names the job in checkpoints; ``backend`` is ``"numba"`` or ``"torch"``
    (``device`` is the torch device, e.g. ``"cpu"`` or ``"cuda:0"``).
    """

    mechanism: Any
    direction: str
    n: int
    lo: float
    h: float
    bins: int
    seed: np.random.SeedSequence
    shard_size: int = DEFAULT_SHARD_SIZE
    label: str = "job"
    backend: str = "numba"
    device: Optional[str] = None

    @property
    def n_shards(self) -> int:
        return max(1, -(-self.n // self.shard_size))

    def shard_n(self, i: int) -> int:
        """Draws of shard ``i``."""
        return min(self.shard_size, self.n - i * self.shard_size)

    def manifest(self) -> dict:
        """What the checkpoint of this job must match (see :mod:`.checkpoint`)."""
        backend = self.backend
        if backend == "torch":   # the torch streams depend on the device type
            backend += ":" + str(self.device or "cpu").split(":")[0]
        return {"mechanism": describe(self.mechanism), "direction": self.direction,
                "n": int(self.n), "lo": float(self.lo).hex(), "h": float(self.h).hex(),
                "bins": int(self.bins),
                "seed": [str(self.seed.entropy), [int(k) for k in self.seed.spawn_key]],
                "shard_size": int(self.shard_size), "backend": backend}

    def token(self) -> str:
        """A hash of the manifest (Dask task keys)."""
        return hashlib.sha1(json.dumps(self.manifest(), sort_keys=True).encode()).hexdigest()[:16]


def run_shard(job: HistogramJob, index: int,
              n_threads: Optional[int] = None) -> tuple[int, np.ndarray, np.ndarray]:
    """Sample shard ``index`` of ``job``: ``(index, counts, extra)``.

    ``extra = [below, above, +inf, -inf]``.  Pure: the result depends on ``job`` and
    ``index`` only (not on ``n_threads``), so re-running a lost shard is harmless.
    """
    m = job.shard_n(index)
    seed = shard_seed(job.seed, index)
    if job.backend == "torch":
        hist = torch_loss_histogram(job.mechanism, job.direction, n=m, lo=job.lo, h=job.h,
                                    bins=job.bins, seed=seed, device=job.device)
    else:
        hist = loss_histogram(job.mechanism, direction=job.direction, n=m, lo=job.lo,
                              h=job.h, bins=job.bins, seed=seed, progress=False,
                              n_threads=n_threads)
    extra = np.array([hist.below, hist.above, hist.pos_inf, hist.neg_inf], dtype=np.int64)
    return index, np.asarray(hist.counts, dtype=np.int64), extra


# ---- executors ------------------------------------------------------------------------------

def executor_kind(executor: Any) -> Optional[str]:
    """``None``, ``"dask"`` or ``"futures"``; :class:`ValueError` for anything else."""
    if executor is None:
        return None
    cls = type(executor)
    if any(c.__module__.split(".")[0] == "distributed" and c.__name__ == "Client"
           for c in cls.__mro__):
        return "dask"
    if isinstance(executor, cf.Executor):
        return "futures"
    raise ValueError(
        f"executor must be None (in-process), a dask.distributed.Client or a "
        f"concurrent.futures.Executor, got {cls.__module__}.{cls.__qualname__}; for a Dask "
        "cluster pass Client(address), for one machine ProcessPoolExecutor()")


_PROBE_SRC = '''
def probe(modules):
    import importlib
    out = {}
    for name in modules:
        try:
            mod = importlib.import_module(name)
            out[name] = str(getattr(mod, "__version__", "unknown"))
        except Exception as e:
            out[name] = None
    return out
'''


def _probe() -> Callable:
    """The worker probe, defined in ``__main__`` so that Dask ships it by value (workers
    without sampledprv can still run it)."""
    ns: dict = {"__name__": "__main__"}
    exec(_PROBE_SRC, ns)  # noqa: S102 - fixed source above
    return ns["probe"]


def _required_modules(backend: str) -> tuple[str, ...]:
    return ("sampledprv", "numba", "numpy") + (("torch",) if backend == "torch" else ())


def check_executor(executor: Any, jobs: Sequence[HistogramJob]) -> Optional[str]:
    """Check ``executor`` before any sampling; return its kind.

    Dask: the client must have workers, and each must import ``sampledprv`` (same
    version), ``numba`` and ``numpy`` (and ``torch`` for the torch backend).
    ``ProcessPoolExecutor``: every mechanism must pickle.
    """
    kind = executor_kind(executor)
    backends = {j.backend for j in jobs} or {"numba"}
    if kind == "dask":
        mods = tuple(dict.fromkeys(m for b in backends for m in _required_modules(b)))
        try:
            found = executor.run(_probe(), mods)
        except Exception as e:  # noqa: BLE001 - report any failure to reach the workers
            raise ValueError(f"cannot run a check on the workers of {executor!r}: {e}") from e
        if not found:
            raise ValueError(f"the Dask client {executor!r} has no workers; start some "
                             "(`dask worker ADDRESS`) or wait for them "
                             "(client.wait_for_workers(n))")
        for addr, have in sorted(found.items()):
            missing = [m for m in mods if have.get(m) is None]
            if missing:
                raise ValueError(
                    f"Dask worker {addr} cannot import {', '.join(missing)}; install them "
                    "on every worker (pip install 'sampledprv[distributed]' in the workers' "
                    "environment) before sampling")
            if have.get("sampledprv") != __version__:
                raise ValueError(
                    f"Dask worker {addr} runs sampledprv {have.get('sampledprv')} but this "
                    f"process runs {__version__}; install the same version on "
                    "the workers (shards of different versions may differ)")
    elif isinstance(executor, cf.ProcessPoolExecutor):
        ctx = getattr(executor, "_mp_context", None)
        if ctx is not None and ctx.get_start_method() == "fork":
            raise ValueError(
                "a ProcessPoolExecutor that forks cannot run Numba kernels once this process "
                "has used Numba's OpenMP threads (fork is unsafe there and the workers "
                "abort); pass ProcessPoolExecutor(mp_context=multiprocessing.get_context("
                "'forkserver')) or 'spawn'")
        for j in jobs:
            try:
                pickle.dumps(j)
            except Exception as e:  # noqa: BLE001 - any pickling failure
                raise ValueError(
                    f"a ProcessPoolExecutor must pickle the mechanism {j.mechanism!r}, which "
                    f"fails ({type(e).__name__}: {e}); use module-level functions instead "
                    "of lambdas or closures, or a dask.distributed.Client (cloudpickle)"
                ) from None
    if "torch" in backends and kind is None:
        require_torch()
    return kind


# ---- the run --------------------------------------------------------------------------------

class _Acc:
    """Integer accumulator of one job."""

    def __init__(self, job: HistogramJob) -> None:
        self.job = job
        self.counts = np.zeros(job.bins, dtype=np.int64)
        self.extra = np.zeros(4, dtype=np.int64)
        self.done: set[int] = set()

    def add(self, i: int, counts: np.ndarray, extra: np.ndarray) -> None:
        if i in self.done:   # a shard that ran twice (retry after a lost result)
            return
        if counts.shape != (self.job.bins,) or int(counts.sum() + extra[:4].sum()) \
                != self.job.shard_n(i):
            raise ValueError(f"shard {i} of {self.job.label} has {int(counts.sum())} draws "
                             f"in {counts.shape} bins, expected {self.job.shard_n(i)} in "
                             f"({self.job.bins},): corrupt checkpoint file?")
        self.counts += counts
        self.extra += extra[:4]
        self.done.add(i)

    def histogram(self):  # -> LossHistogram
        e = self.extra
        j = self.job
        return LossHistogram(self.counts, int(e[0]), int(e[1]), int(e[2]), int(e[3]),
                             int(j.n), float(j.lo), float(j.h))


assert (_BELOW, _ABOVE, _POS, _NEG) == (0, 1, 2, 3)   # the order of ``extra`` in run_shard


def run_jobs(jobs: Sequence[HistogramJob], executor: Any = None, *,
             progress: Optional[bool] = None, checkpoint: Optional[Checkpoint] = None,
             threads_per_task: int = 1,
             on_shard: Optional[Callable[[HistogramJob, int], None]] = None) -> list:
    """Run every shard of ``jobs``; return their :class:`LossHistogram`\\ s in order.

    Parameters
    ----------
    jobs : sequence of HistogramJob
    executor : None, dask.distributed.Client or concurrent.futures.Executor
        Where shards run (module docstring); checked before any sampling.
    progress : bool or None
        One bar for all jobs (draws, rate, time left); ``None``: shown for runs expected
        to last more than about 2 seconds.
    checkpoint : Checkpoint, optional
        Finished shards are written there as they arrive and skipped when found.
    threads_per_task : int
        Numba threads per shard on executors (in-process shards use all threads).
    on_shard : callable, optional
        Called as ``on_shard(job, index)`` after each shard is merged (tests, logging).
    """
    jobs = list(jobs)
    kind = check_executor(executor, jobs)
    accs = [_Acc(j) for j in jobs]
    if checkpoint is not None:
        labels = [j.label for j in jobs]
        if len(set(labels)) != len(labels):
            raise ValueError(f"jobs need distinct labels for a checkpoint, got {labels}")
        for a in accs:
            for i, (c, e) in checkpoint.open(a.job.label, a.job.manifest()).items():
                if i < a.job.n_shards:
                    a.add(i, c, e)
    todo = [(a, i) for a in accs for i in range(a.job.n_shards) if i not in a.done]
    total = sum(j.n for j in jobs)
    workers = ""
    if kind == "dask":
        workers = f" on {len(executor.scheduler_info().get('workers', {}))} Dask workers"
    elif kind == "futures":
        workers = f" on {type(executor).__name__}"
    bar = Progress(progress, total, f"sampling {len(jobs)} histogram(s){workers}")
    bar.count = sum(j.shard_n(i) for a in accs for j in [a.job] for i in a.done)

    def merge(a: _Acc, i: int, counts: np.ndarray, extra: np.ndarray) -> None:
        if i in a.done:
            return
        a.add(i, counts, extra)
        if checkpoint is not None:
            checkpoint.write_shard(a.job.label, i, counts, extra)
        bar.update(a.job.shard_n(i))
        if on_shard is not None:
            on_shard(a.job, i)

    try:
        if kind is None:
            for a, i in todo:
                _, c, e = run_shard(a.job, i, None)
                merge(a, i, c, e)
        elif kind == "dask":
            _run_dask(executor, todo, merge, threads_per_task)
        else:
            _run_futures(executor, todo, merge, threads_per_task)
    finally:
        bar.close()
    return [a.histogram() for a in accs]


def _run_futures(executor: cf.Executor, todo: list, merge: Callable,
                 threads: int) -> None:
    futs = {executor.submit(run_shard, a.job, i, threads): a for a, i in todo}
    try:
        for f in cf.as_completed(futs):
            i, c, e = f.result()
            merge(futs[f], i, c, e)
    finally:
        for f in futs:
            f.cancel()


#: resubmissions of one shard whose future was cancelled (``client.restart()``, a lost
#: scheduler state) before the run gives up
_CANCELLED_RETRIES = 5


def _run_dask(client: Any, todo: list, merge: Callable, threads: int) -> None:
    """Run the shards as Dask tasks.  A shard whose future comes back cancelled (for
    example after ``client.restart()``, which cancels every running future) is submitted
    again, up to :data:`_CANCELLED_RETRIES` times: a shard is a pure function of its
    job and index, so the merged histogram stays bit-identical.  A shard that failed
    raises its error."""
    from distributed import as_completed

    def submit(a: "_Acc", i: int, attempt: int) -> Any:
        key = f"sampledprv-shard-{a.job.token()}-{i}" + (f"-retry{attempt}" if attempt else "")
        fut = client.submit(run_shard, a.job, i, threads, key=key, pure=False, retries=2)
        owner[fut.key] = (a, i, attempt)
        return fut

    owner: dict[str, tuple] = {}
    futures = [submit(a, i, 0) for a, i in todo]
    pending = as_completed(futures)
    try:
        for fut in pending:
            a, i, attempt = owner[fut.key]
            try:
                j, c, e = fut.result()      # raises the shard's own error
            except Exception as err:  # noqa: BLE001 - cancellations are retried below
                if not (fut.status == "cancelled" or _is_cancellation(err)):
                    raise
                if attempt >= _CANCELLED_RETRIES:
                    raise RuntimeError(
                        f"shard {i} of {a.job.label} was cancelled {attempt + 1} times "
                        "(client.restart() or a lost scheduler?); run again (with a "
                        "checkpoint= directory the finished shards are kept)") from err
                new = submit(a, i, attempt + 1)
                futures.append(new)
                pending.add(new)
                continue
            merge(a, j, c, e)
    except BaseException:   # Ctrl-C or a failed shard: stop the rest of the job
        client.cancel(futures)
        raise


def _is_cancellation(err: BaseException) -> bool:
    """True for a cancelled future's error (``FutureCancelledError`` of Dask,
    :class:`concurrent.futures.CancelledError`)."""
    return isinstance(err, cf.CancelledError) or type(err).__name__ in (
        "FutureCancelledError", "CancelledError")


def plan_shards(n: int, shard_size: int) -> int:
    """Number of shards of an ``n``-draw job."""
    return max(1, math.ceil(n / shard_size))
