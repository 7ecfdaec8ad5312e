r"""The histograms a sampled composition needs: seeded, sharded, cached, checked.

:class:`HistogramBank` is the sampling half of
:class:`~sampledprv.sampled.certification.accountant.SampledAccountant`, which holds one
(composition, not inheritance: the accountant uses the bank's public methods only, and
the bank knows nothing of the accountant):
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
from typing import Optional

import numpy as np

from ...core import validation as v
from ...core.advice import AdvisedWarning, Remedy, warn_user
from ...mechanisms import Mechanism
from ...mechanisms.base import NeighbouringRelation, as_relation
from ..draws.hooks import find_hook
from ..draws.torch_draws import default_device
from ..histograms.checkpoint import as_checkpoint
from ..histograms.empirical import EmpiricalPRV
from ..histograms.histogram import LossHistogram
from ..histograms.sharding import HistogramJob, check_executor, run_jobs
from ..histograms.window import choose_window
from .envelopes import lower_envelope
from .floor import min_samples
from ...core.concurrency import guarded
from .loss_identity import from_histogram, identity_violation
from .settings import SampledSettings
from .tail_sources import tail_bound
from .tails import TailBound
from .twolevel import bins_for
from ...mechanisms.substitution import FixedSizeSubsampled
from ...mechanisms.relations import resolve_relation

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


def _no_upper_tail(tb: Optional[TailBound]) -> bool:
    """True when ``tb`` says nothing about the upper tail (none at all, or only a lower
    end of the range, as the remove loss of a Poisson-subsampled user pair without a
    Renyi bound has): the sample floor then decides the upper end, as without a bound."""
    return tb is None or (not tb.has_renyi and not math.isfinite(tb.hi))


@guarded(shared=("executor",))
class HistogramBank:
    """Seeds, sampling runs and the cache of the histograms of a composition.

    The bank records the composition (:meth:`record`: ``entries`` maps a mechanism's key
    to ``[mechanism, count]``, ``side`` to the ``(renyi, loss_range)`` given to
    ``compose``), samples each mechanism's histograms when first needed and keeps them
    (``hists``).  The executor and the checkpoint directory are checked here, before
    anything is sampled.

    Parameters
    ----------
    settings : SampledSettings
        The accountant's settings (:mod:`.settings`, validated there).
    """

    def __init__(self, settings: SampledSettings) -> None:
        #: draws per histogram, by direction (``{"remove": n, "add": n}``)
        self.n_samples = settings.sizes
        self.alpha = settings.alpha
        self.bins = settings.bins
        self.max_grid = settings.max_grid
        self.progress = settings.progress
        self.root = np.random.SeedSequence(v.seed("seed", settings.seed))
        self.neighbouring: NeighbouringRelation = settings.neighbouring
        self.seed_value = settings.seed
        self.backend = settings.backend
        self.device = (settings.device or default_device()) if settings.backend == "torch" \
            else None
        self.shard_size = settings.shard_size
        self.threads_per_task = settings.threads_per_task
        self.executor = settings.executor
        check_executor(self.executor, [])       # the type, before anything is sampled
        # writable, before anything is sampled
        self.checkpoint = as_checkpoint(settings.checkpoint)
        self.index: dict[object, int] = {}          # key -> order of first use (labels)
        self.entries: dict[object, list] = {}      # key -> [mechanism, count]
        self.seeds: dict[object, list] = {}        # key -> child seed sequences
        self.hists: dict[tuple, LossHistogram] = {}
        self.tail_bounds = settings.tail_bounds
        self.side: dict[object, tuple] = {}        # key -> (renyi, loss_range) of compose
        self.tails: dict[tuple, Optional[TailBound]] = {}
        self.checked: set = set()                  # histogram keys checked against tails

    # ---- the composition ----------------------------------------------------------------
    def record(self, mechanism: object, count: int, side: tuple) -> None:
        """Add ``count`` runs of ``mechanism`` with the tail information ``side``
        (``(renyi, loss_range)``, ``(None, None)`` when none was given); new tail
        information drops the tail bounds (and premise checks) computed without it.

        Raises
        ------
        ValueError
            When ``mechanism`` was recorded before with different tail information.
        """
        k = key_of(mechanism)
        if side != (None, None):
            if self.side.get(k, side) != side:
                raise ValueError(f"{mechanism!r} was composed before with a different renyi/"
                                 "loss_range; give the same tail information every time")
            self.side[k] = side
            for hk in [hk for hk in self.tails if hk[0] == k]:
                del self.tails[hk]
                self.checked.discard(hk)
        if k in self.entries:
            self.entries[k][1] += count
        else:
            self.entries[k] = [mechanism, count]

    @property
    def composition(self) -> tuple[tuple[object, int], ...]:
        """The recorded ``(mechanism, count)`` pairs, in order of first use."""
        return tuple((m, c) for m, c in self.entries.values())

    def bins_now(self) -> int:
        """Bins per histogram: ``bins``, or :func:`~.twolevel.bins_for` of the current
        number of compositions when ``bins="auto"``."""
        if self.bins == "auto":
            return min(bins_for(max(1, sum(c for _, c in self.composition))), self.max_grid)
        return int(self.bins)

    def pair(self, mechanism: object) -> object:
        """What is sampled for ``mechanism``: a built-in spec's worst-case pair under the
        relation; user inputs as given."""
        if isinstance(mechanism, Mechanism):
            if isinstance(mechanism, FixedSizeSubsampled) and \
                    as_relation(self.neighbouring) is NeighbouringRelation.SUBSTITUTE:
                raise ValueError(
                    f"{mechanism!r} under the neighbouring relation 'substitute' has no single "
                    "worst-case pair: the accountant's epsilon() and delta() take its two "
                    "ends from two pairs (the accountant's bracketed ends); empirical() and the "
                    "other single-pair views are not available for it")
            return resolve_relation(mechanism, self.neighbouring)
        return mechanism

    def symmetric(self, mech: object) -> bool:
        if isinstance(mech, EmpiricalPRV):
            return mech.symmetric
        return bool(getattr(self.pair(mech), "symmetric", False))

    def directions(self) -> tuple[str, ...]:
        return ("remove",) if all(self.symmetric(m) for m, _ in self.composition) \
            else ("remove", "add")

    def hist_key(self, key: object, mech: object, d: str) -> tuple:
        return (key, "remove" if self.symmetric(mech) else d)

    def conditional(self, mech: object, d: str) -> object:
        """The conditional sampler of ``mech``'s loss in direction ``d``, or None: a spec
        whose ``conditional(direction)`` returns one is sampled through a statistic and
        its envelopes built by it (:mod:`.conditional`)."""
        if isinstance(mech, EmpiricalPRV):
            return None
        hook = find_hook(self.pair(mech), "conditional")
        return hook(d) if hook is not None else None

    def tail(self, key: object, mech: object, d: str) -> Optional[TailBound]:
        """Tail information of the histogram ``(key, d)`` (None: samples only)."""
        if not self.tail_bounds:
            return None
        hk = self.hist_key(key, mech, d)
        cond = self.conditional(mech, hk[1])
        if cond is not None:          # the sampled statistic's own (proven) tail bound
            if hk not in self.tails:
                self.tails[hk] = cond.statistic_tail
            return self.tails[hk]
        if hk not in self.tails:
            renyi, lr = self.side.get(key, (None, None))
            self.tails[hk] = tail_bound(self.pair(mech), hk[1], renyi=renyi,
                                         loss_range=lr, symmetric=self.symmetric(mech))
        return self.tails[hk]

    def children(self, key: object) -> list:
        if key not in self.seeds:
            self.index[key] = len(self.seeds)
            self.seeds[key] = self.root.spawn(1)[0].spawn(8)
        return self.seeds[key]

    def job(self, key: object, mech: object, d: str, tag: str, n: int, lo: float, h: float,
             bins: int, seed: np.random.SeedSequence, source: object = None) -> HistogramJob:
        self.children(key)
        src = self.pair(mech) if source is None else source
        return HistogramJob(src, d, int(n), float(lo), float(h), int(bins), seed,
                            shard_size=self.shard_size,
                            label=f"m{self.index[key]}-{tag}-{d}", backend=self.backend,
                            device=self.device)

    def run(self, jobs: list) -> list:
        """Sample ``jobs`` (one progress bar, sharded on the executor, checkpointed)."""
        return run_jobs(jobs, self.executor, progress=self.progress,
                        checkpoint=self.checkpoint, threads_per_task=self.threads_per_task)

    def sample_envelope_hists(self, needed: list) -> None:
        """Sample every missing envelope histogram of ``needed`` (``(key, mech, d)``) in
        one sharded run."""
        jobs, hks = [], []
        for key, mech, d in needed:
            if isinstance(mech, EmpiricalPRV):
                continue
            hk = self.hist_key(key, mech, d)
            if hk in self.hists or hk in hks:
                continue
            dd = hk[1]
            ch = self.children(key)
            j = 0 if dd == "remove" else 2
            tb = self.tail(key, mech, dd)
            lr = (-math.inf, math.inf) if tb is None else (tb.lo, tb.hi_eff)
            cond = self.conditional(mech, dd)
            src = self.pair(mech) if cond is None else cond.statistic
            lo, h, nb = choose_window(src, dd, self.n_for(dd), self.bins_now(),
                                      np.random.default_rng(ch[j]), lr)
            jobs.append(self.job(key, mech, dd, "env" if cond is None else "cond-env",
                                  self.n_for(dd), lo, h, nb, ch[j + 1], source=src))
            hks.append(hk)
        if not jobs:
            return
        for hk, hist in zip(hks, self.run(jobs)):
            self.hists[hk] = hist
            self._check_identities(hk[0])
            tb = self.tails.get(hk)
            if tb is not None:      # a draw outside a declared range: that error first
                tb.check_histogram(hist, repr(self.entries[hk[0]][0]), hk[1])
            if hist.above > 0.001 * hist.n or hist.below > 0.01 * hist.n:
                warn_user(f"{hist.above} draws fell above and {hist.below} below the "
                          f"sampling window of {self.entries[hk[0]][0]!r} ({hk[1]}); "
                          "the bounds stay valid but are loose. Pass an EmpiricalPRV "
                          "sampled on a wider window", RuntimeWarning)

    def _check_identities(self, key: object) -> None:
        """Refuse a user pair whose loss samples contradict the change-of-measure
        identities (:mod:`.loss_identity`), once both of its histograms are sampled (one
        for a pair declared symmetric); false-alarm probability at most
        :data:`CHECK_LEVEL` (or ``alpha`` if smaller).  Built-in specs are exact and
        skipped."""
        from .inputs import LogDensityPair, PrivacyLossSampler
        mech = self.entries[key][0] if key in self.entries else None
        tag = (key, "identities")
        if not isinstance(mech, (LogDensityPair, PrivacyLossSampler)) or tag in self.checked:
            return
        symmetric = self.symmetric(mech)
        rem = self.hists.get((key, "remove"))
        add = None if symmetric else self.hists.get((key, "add"))
        if rem is None or (add is None and not symmetric):
            return
        level = min(self.alpha, CHECK_LEVEL)
        found = identity_violation(from_histogram(rem),
                                   None if add is None else from_histogram(add), level)
        self.checked.add(tag)
        if found is None:
            return
        left, right = found["left"], found["right"]
        what = ("the loss samples of a pair declared symmetric=True" if symmetric
                else "the remove and add loss samples")
        raise ValueError(
            f"{getattr(mech, 'name', type(mech).__name__)}: {what} contradict {found['identity']} at t = {found['t']:.3g}, "
            f"which holds for every privacy loss (Y = log p/q under P, Y' = log q/p under Q): "
            f"the two sides lie in [{left[0]:.3g}, {left[1]:.3g}] and [{right[0]:.3g}, "
            f"{right[1]:.3g}] (false-alarm probability <= {level:g}). A sampler that is "
            "narrower than its density, truncated, shifted or scaled does this, and would "
            "give an optimistic certificate. Check that sample_p draws from exp(logp) and "
            "sample_q from exp(logq) (same location and scale, no truncation)"
            + ("; and drop symmetric=True unless the pair is symmetric (the add loss then "
               "is sampled and checked too)" if symmetric else ""))

    def envelope_hist(self, key: object, mech: object, d: str) -> LossHistogram:
        hk = self.hist_key(key, mech, d)
        if isinstance(mech, EmpiricalPRV):
            hist = mech.histogram(d)
        else:
            if hk not in self.hists:
                self.sample_envelope_hists([(key, mech, d)])
            hist = self.hists[hk]
        tb = self.tail(key, mech, hk[1])
        if tb is not None and hk not in self.checked:
            self._check_premises(hist, tb, mech, hk[1])
            self.checked.add(hk)
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

    def n_for(self, direction: str) -> int:
        """Draws per histogram of ``direction``."""
        return self.n_samples[direction]

    def check_n(self, delta: float, n_hist: int) -> None:
        k = sum(c for key, (m, c) in self.entries.items()
                if not isinstance(m, EmpiricalPRV)
                and any(_no_upper_tail(self.tail(key, m, d)) for d in self.directions()))
        if k == 0:
            return
        need = min_samples(k, delta, alpha=self.alpha, bins=self.bins_now(), histograms=n_hist)
        n_least = min(self.n_for(d) for d in self.directions())
        if n_least < need:
            warn_user(AdvisedWarning(
                f"n_samples={n_least:,} cannot give a finite upper bound on epsilon at "
                f"delta={delta:g} for {k} compositions (alpha={self.alpha:g}): the unseen tail "
                f"alone exceeds delta below n = {need:,} (a Renyi bound, renyi=, or a loss "
                "range, loss_range=, for the mechanisms without one removes the floor)",
                [Remedy("n_samples", "set", float(need), "SampledAccountant", "at least"),
                 Remedy("delta", "raise", note="query a larger delta")]))
