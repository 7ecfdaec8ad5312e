r"""The histograms a sampled composition needs: seeded, sharded, cached, checked.

:class:`HistogramBank` is the sampling half of
:class:`~sampledprv.sampled.certification.accountant.SampledAccountant` (its base class):
for every composed mechanism and direction it chooses the window
(:func:`~sampledprv.sampled.histograms.window.choose_window`), draws ``n_samples``
privacy losses once, in shards on the accountant's executor
(:mod:`sampledprv.sampled.histograms.sharding`), and keeps the histogram for later
queries.  Seeds: the root ``SeedSequence(seed)`` gives each mechanism a child in order
of first use, and that child eight more (window pilot and envelope histogram per
direction, and the two halves of the seed method per direction), so the histograms of a
mechanism do not depend on which method was queried first.  A symmetric mechanism has one histogram
(its "remove" loss) for both directions.  Before a histogram is used, the tail
information of its mechanism (:mod:`.tail_sources`) is checked against it.
"""

from __future__ import annotations

import math
import warnings
from typing import Optional

import numpy as np

from ... import _validation as v
from ...advice import AdvisedWarning, Remedy
from ...mechanisms import Mechanism
from ...mechanisms.base import NeighbouringRelation, as_relation
from ..draws.torch_draws import default_device
from ..histograms.checkpoint import as_checkpoint
from ..histograms.empirical import EmpiricalPRV
from ..histograms.histogram import LossHistogram
from ..histograms.sharding import BACKENDS, HistogramJob, check_executor, run_jobs
from ..histograms.window import choose_window
from .envelopes import lower_envelope
from .floor import min_samples
from .tail_sources import tail_bound
from .tails import TailBound
from .twolevel import bins_for

__all__ = ["HistogramBank", "key_of", "CHECK_LEVEL"]

#: Largest false-alarm probability of the premise check (per histogram).
CHECK_LEVEL = 1e-6


def key_of(mech: object) -> object:
    """The cache key of a mechanism: itself when hashable, else its identity."""
    try:
        hash(mech)
        return mech
    except TypeError:
        return ("id", id(mech))


class HistogramBank:
    """Seeds, sampling runs and the cache of the histograms of a composition.

    The accountant sets ``n_samples``, ``alpha``, ``bins``, ``max_grid`` and
    ``progress``, calls :meth:`_init_bank` with the sampling settings and provides
    ``composition``; it records compositions in ``_entries``
    (``key -> [mechanism, count]``) and tail information given to ``compose`` in
    ``_side`` (``key -> (renyi, loss_range)``).
    """

    n_samples: int
    alpha: float
    bins: "int | str"
    max_grid: int
    progress: Optional[bool]

    def _init_bank(self, seed: int, neighbouring: object, backend: str,
                   device: Optional[str], shard_size: int, threads_per_task: int,
                   executor: object, checkpoint: object, tail_bounds: bool) -> None:
        """Validate and store the sampling settings (errors before anything is sampled)."""
        self._root = np.random.SeedSequence(v.seed("seed", seed))
        self.neighbouring: NeighbouringRelation = as_relation(neighbouring)
        self._seed_value = seed
        if backend not in BACKENDS:
            raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
        self.backend = backend
        if backend == "torch":
            device = device or default_device()
        elif device is not None:
            raise ValueError("device= is a torch device and needs backend='torch'")
        self.device = device
        self.shard_size = v.positive_int("shard_size", shard_size)
        self.threads_per_task = v.positive_int("threads_per_task", threads_per_task)
        self.executor = executor
        check_executor(executor, [])       # the type, before anything is sampled
        self.checkpoint = as_checkpoint(checkpoint)   # writable, before anything is sampled
        self._index: dict[object, int] = {}          # key -> order of first use (labels)
        self._entries: dict[object, list] = {}      # key -> [mechanism, count]
        self._seeds: dict[object, list] = {}        # key -> child seed sequences
        self._hists: dict[tuple, LossHistogram] = {}
        self.tail_bounds = bool(tail_bounds)
        self._side: dict[object, tuple] = {}        # key -> (renyi, loss_range) of compose
        self._tails: dict[tuple, Optional[TailBound]] = {}
        self._checked: set = set()                  # histogram keys checked against tails

    def _bins(self) -> int:
        """Bins per histogram: ``bins``, or :func:`~.twolevel.bins_for` of the current
        number of compositions when ``bins="auto"``."""
        if self.bins == "auto":
            return min(bins_for(max(1, sum(c for _, c in self.composition))), self.max_grid)
        return int(self.bins)

    def _pair(self, mechanism: object) -> object:
        """What is sampled for ``mechanism``: a built-in spec's worst-case pair under the
        relation; user inputs as given."""
        if isinstance(mechanism, Mechanism):
            from ...mechanisms.base import NeighbouringRelation, as_relation
            from ...mechanisms.substitution import FixedSizeSubsampled
            from ...prv import resolve_relation
            if isinstance(mechanism, FixedSizeSubsampled) and \
                    as_relation(self.neighbouring) is NeighbouringRelation.SUBSTITUTE:
                raise ValueError(
                    f"{mechanism!r} under the neighbouring relation 'substitute' has no single "
                    "worst-case pair: the accountant's epsilon() and delta() take its two "
                    "ends from two pairs (SampledAccountant._ends); empirical() and the "
                    "other single-pair views are not available for it")
            return resolve_relation(mechanism, self.neighbouring)
        return mechanism

    def _symmetric(self, mech: object) -> bool:
        if isinstance(mech, EmpiricalPRV):
            return mech.symmetric
        return bool(getattr(self._pair(mech), "symmetric", False))

    def _directions(self) -> tuple[str, ...]:
        return ("remove",) if all(self._symmetric(m) for m, _ in self.composition) \
            else ("remove", "add")

    def _hist_key(self, key: object, mech: object, d: str) -> tuple:
        return (key, "remove" if self._symmetric(mech) else d)

    def _conditional(self, mech: object, d: str) -> object:
        """The conditional sampler of ``mech``'s loss in direction ``d``, or None: a spec
        whose ``conditional(direction)`` returns one is sampled through a statistic and
        its envelopes built by it (:mod:`.conditional`)."""
        if isinstance(mech, EmpiricalPRV):
            return None
        hook = getattr(self._pair(mech), "conditional", None)
        return hook(d) if callable(hook) else None

    def _tail(self, key: object, mech: object, d: str) -> Optional[TailBound]:
        """Tail information of the histogram ``(key, d)`` (None: samples only)."""
        if not self.tail_bounds:
            return None
        hk = self._hist_key(key, mech, d)
        cond = self._conditional(mech, hk[1])
        if cond is not None:          # the sampled statistic's own (proven) tail bound
            if hk not in self._tails:
                self._tails[hk] = cond.statistic_tail
            return self._tails[hk]
        if hk not in self._tails:
            renyi, lr = self._side.get(key, (None, None))
            self._tails[hk] = tail_bound(self._pair(mech), hk[1], renyi=renyi,
                                         loss_range=lr, symmetric=self._symmetric(mech))
        return self._tails[hk]

    def _children(self, key: object) -> list:
        if key not in self._seeds:
            self._index[key] = len(self._seeds)
            self._seeds[key] = self._root.spawn(1)[0].spawn(8)
        return self._seeds[key]

    def _job(self, key: object, mech: object, d: str, tag: str, n: int, lo: float, h: float,
             bins: int, seed: np.random.SeedSequence, source: object = None) -> HistogramJob:
        self._children(key)
        src = self._pair(mech) if source is None else source
        return HistogramJob(src, d, int(n), float(lo), float(h), int(bins), seed,
                            shard_size=self.shard_size,
                            label=f"m{self._index[key]}-{tag}-{d}", backend=self.backend,
                            device=self.device)

    def _run(self, jobs: list) -> list:
        """Sample ``jobs`` (one progress bar, sharded on the executor, checkpointed)."""
        return run_jobs(jobs, self.executor, progress=self.progress,
                        checkpoint=self.checkpoint, threads_per_task=self.threads_per_task)

    def _sample_envelope_hists(self, needed: list) -> None:
        """Sample every missing envelope histogram of ``needed`` (``(key, mech, d)``) in
        one sharded run."""
        jobs, hks = [], []
        for key, mech, d in needed:
            if isinstance(mech, EmpiricalPRV):
                continue
            hk = self._hist_key(key, mech, d)
            if hk in self._hists or hk in hks:
                continue
            dd = hk[1]
            ch = self._children(key)
            j = 0 if dd == "remove" else 2
            tb = self._tail(key, mech, dd)
            lr = (-math.inf, math.inf) if tb is None else (tb.lo, tb.hi_eff)
            cond = self._conditional(mech, dd)
            src = self._pair(mech) if cond is None else cond.statistic
            lo, h, nb = choose_window(src, dd, self.n_samples, self._bins(),
                                      np.random.default_rng(ch[j]), lr)
            jobs.append(self._job(key, mech, dd, "env" if cond is None else "cond-env",
                                  self.n_samples, lo, h, nb, ch[j + 1], source=src))
            hks.append(hk)
        if not jobs:
            return
        for hk, hist in zip(hks, self._run(jobs)):
            self._hists[hk] = hist
            tb = self._tails.get(hk)
            if tb is not None:      # a draw outside a declared range: that error first
                tb.check_histogram(hist, repr(self._entries[hk[0]][0]), hk[1])
            if hist.above > 0.001 * hist.n or hist.below > 0.01 * hist.n:
                warnings.warn(f"{hist.above} draws fell above and {hist.below} below the "
                              f"sampling window of {self._entries[hk[0]][0]!r} ({hk[1]}); "
                              "the bounds stay valid but are loose. Pass an EmpiricalPRV "
                              "sampled on a wider window", RuntimeWarning, stacklevel=5)

    def _envelope_hist(self, key: object, mech: object, d: str) -> LossHistogram:
        hk = self._hist_key(key, mech, d)
        if isinstance(mech, EmpiricalPRV):
            hist = mech.histogram(d)
        else:
            if hk not in self._hists:
                self._sample_envelope_hists([(key, mech, d)])
            hist = self._hists[hk]
        tb = self._tail(key, mech, hk[1])
        if tb is not None and hk not in self._checked:
            self._check_premises(hist, tb, mech, hk[1])
            self._checked.add(hk)
        return hist

    def _check_premises(self, hist: LossHistogram, tb: TailBound, mech: object,
                        d: str) -> None:
        """Raise if the samples contradict the loss range or the Renyi bound: the range
        from the histogram (:meth:`TailBound.check_histogram`), the Renyi bound by a lower
        confidence bound on the moments (:meth:`TailBound.check_samples`, false-alarm
        probability at most :data:`CHECK_LEVEL` per histogram, or ``alpha`` if smaller)."""
        tb.check_histogram(hist, repr(mech), d)
        level = min(self.alpha, CHECK_LEVEL)
        tb.check_samples(lower_envelope(hist, level), d, level)

    def _check_n(self, delta: float, n_hist: int) -> None:
        k = sum(c for key, (m, c) in self._entries.items()
                if not isinstance(m, EmpiricalPRV)
                and any(self._tail(key, m, d) is None for d in self._directions()))
        if k == 0:
            return
        need = min_samples(k, delta, alpha=self.alpha, bins=self._bins(), histograms=n_hist)
        if self.n_samples < need:
            warnings.warn(AdvisedWarning(
                f"n_samples={self.n_samples:,} cannot give a finite upper bound on epsilon at "
                f"delta={delta:g} for {k} compositions (alpha={self.alpha:g}): the unseen tail "
                f"alone exceeds delta below n = {need:,} (a Renyi bound, renyi=, or a loss "
                "range, loss_range=, for the mechanisms without one removes the floor)",
                [Remedy("n_samples", "set", float(need), "SampledAccountant", "at least"),
                 Remedy("delta", "raise", note="query a larger delta")]), stacklevel=3)
