r"""The sampled accountant: certified privacy curves from samples of the privacy loss.

``SampledAccountant`` has the contract of :class:`sampledprv.Accountant`: ``compose``
records mechanisms (chainable, callable again later), ``epsilon(delta=...)`` and
``delta(epsilon=...)`` return an :class:`~sampledprv.Interval` that holds with
probability at least ``1 - alpha`` over the sampling (``certification="probabilistic"``).

For each composed mechanism and direction the accountant draws ``n_samples`` privacy
losses (fused Numba kernel when available, numpy otherwise), on a window chosen from
the analytic tail when the law is known and from an independent pilot sample
otherwise.  Histograms are cached per mechanism and reused by later queries.  The
heterogeneous composition composes all "remove" PRVs together and all "add" PRVs
together (a symmetric mechanism contributes its one PRV to both);
:math:`\delta = \max` over the two directions.  ``alpha`` is split evenly over the
distinct histograms a query uses, and within each histogram over its tests
(:mod:`sampledprv.sampled.certification.envelopes`), so every returned interval is certified on its own.
"""

from __future__ import annotations

import math
import warnings
from typing import Optional

import numpy as np

from ... import _validation as v
from ...advice import AdvisedWarning, Remedy
from ...engine.compose import GridTooLargeError
from ...contract import PrivacyAccountant
from ...interval import PROBABILISTIC, Interval
from ...mechanisms import Mechanism
from ...mechanisms.base import Direction, NeighbouringRelation, as_direction, as_relation
from ..draws.torch_draws import default_device, torch_loss_sampler
from ..histograms import _numpy_histogram as _np_hist
from ..histograms._pypath import check_progress
from ..histograms.checkpoint import as_checkpoint
from ..histograms.empirical import EmpiricalPRV
from ..histograms.histogram import LossHistogram, coarsen
from ..histograms.sharding import (BACKENDS, DEFAULT_SHARD_SIZE, HistogramJob, check_executor,
                                   run_jobs)
from ..histograms.window import choose_window
from .envelopes import compose_bounds, cp_upper, envelope, lower_envelope
from .floor import min_samples
from .seed_method import circular_compose, seed_default_params, seed_pmf, seed_tau_eta
from .tails import TailBound, as_loss_range, as_renyi, tail_bound
from .twolevel import bins_for, compose_bounds_two_level

__all__ = ["SampledAccountant"]

#: Mass of the Chernoff tail left at +inf, summed over the composition (negligible
#: against the composition's aliasing and round-off budget).
_TAIL_FLOOR = 1e-16
#: Largest false-alarm probability of the premise check (per histogram).
CHECK_LEVEL = 1e-6


def _key(mech: object) -> object:
    try:
        hash(mech)
        return mech
    except TypeError:
        return ("id", id(mech))


#: smallest accepted ``max_grid`` (FFT length of the composed envelopes)
_MIN_GRID = 64


class SampledAccountant(PrivacyAccountant):
    r"""Privacy accounting from samples of the privacy loss, certified w.p. ``1 - alpha``.

    Parameters
    ----------
    n_samples : int
        Privacy-loss draws per mechanism and direction.  A finite bound on
        :math:`\varepsilon(\delta)` for ``k`` compositions needs roughly
        ``n > k ln((bins+1)/alpha) / delta`` (:func:`~sampledprv.sampled.certification.floor.min_samples`);
        the accountant warns before sampling when ``n`` is below it.
    alpha : float
        Failure probability of the certificate (``confidence = 1 - alpha``).
    seed : int
        Seed of the root :class:`numpy.random.SeedSequence`; every mechanism gets a child
        in order of first use.
    certify : {"envelope", "seed"}
        ``"envelope"`` (default): stochastic-dominance envelopes
        (:mod:`sampledprv.sampled.certification.envelopes`).
        ``"seed"``: the GG paper's SampledComposePRV with Theorem 6's ``tau``/``eta``.
    bins : int or "auto"
        Histogram bins per mechanism and direction (envelope method).  ``"auto"``
        (default): :func:`~sampledprv.sampled.certification.twolevel.bins_for` of the number ``k`` of
        compositions when the histograms are sampled, ``4096 sqrt(k)`` rounded up to a
        power of two in ``[2**15, 2**22]``, so that the rounding bias (about ``k h``)
        stays a small fraction of the width.  Compositions too large for one FFT grid of
        ``max_grid`` points are composed on two levels
        (:func:`~sampledprv.sampled.certification.twolevel.compose_bounds_two_level`).
    progress : bool or None
        Progress bars for long sampling runs (None: automatic).
    seed_params : dict, optional
        ``L, h, s, t`` for ``certify="seed"`` (defaults: :func:`~.seed_method.seed_default_params`).
    max_grid : int
        Largest FFT length (at least 64); the mesh is doubled until the composition
        fits.
    executor : None, dask.distributed.Client or concurrent.futures.Executor
        Where the shards of every histogram run (:mod:`sampledprv.sampled.histograms.sharding`):
        ``None`` in this process, a Dask client on its cluster, any executor on its
        workers.  The histograms, hence the intervals, are bit-identical for all of them.
    checkpoint : str or os.PathLike, optional
        Directory where each finished shard is written atomically; a run interrupted
        (Ctrl-C, crash) and started again with the same arguments resumes from it and
        ends bit-identical.  A checkpoint of a different mechanism, window, bins, seed or
        ``n`` is refused.
    backend : {"numba", "torch"}
        Sampling backend; ``"torch"`` draws and bins on a torch ``device``
        (:mod:`sampledprv.sampled.draws.torch_draws`: same law, different streams).
    device : str, optional
        Torch device for ``backend="torch"`` (default ``"cuda"`` when available, else
        ``"cpu"``).
    shard_size : int
        Draws per shard (the unit of work, of retries and of checkpoints).  Part of the
        definition of the random streams: keep it fixed to reproduce a run.
    threads_per_task : int
        Numba threads per shard on an executor (default 1: one task per core).
    neighbouring : {"add_remove", "substitute"} or NeighbouringRelation
        Neighbouring relation of the built-in specs (their worst-case pair under it is
        sampled).  User inputs (:class:`LogDensityPair`, :class:`PrivacyLossSampler`,
        :class:`EmpiricalPRV`) describe their own pair and are used as given.
    tail_bounds : bool
        Use what is known about each loss beyond its samples (default True): Renyi
        bounds and loss ranges supplied with a mechanism (``renyi=``, ``loss_range=``
        on :class:`LogDensityPair`, :class:`PrivacyLossSampler` or :meth:`compose`), and
        for built-in specs their exact Renyi divergences
        (:func:`sampledprv.rdp.renyi_divergence`) and the support of a bounded loss.
        They bound the unseen tail by Chernoff's inequality
        (:mod:`sampledprv.sampled.certification.tails`), which removes the sample floor; a supplied
        bound is a premise of the certificate and is checked against the samples.
        ``False``: samples only (the unseen tail goes to :math:`+\infty`).
    """

    def __init__(self, n_samples: int, alpha: float = 1e-9, seed: int = 0,
                 certify: str = "envelope", bins: "int | str" = "auto",
                 progress: Optional[bool] = None,
                 seed_params: Optional[dict] = None, max_grid: int = 2**23, *,
                 executor: object = None, checkpoint: object = None, backend: str = "numba",
                 device: Optional[str] = None, shard_size: int = DEFAULT_SHARD_SIZE,
                 threads_per_task: int = 1, neighbouring: object = "add_remove",
                 tail_bounds: bool = True) -> None:
        self.n_samples = v.positive_int("n_samples", n_samples)
        self.alpha = v.in_interval("alpha", alpha, 0.0, 1.0, low_open=True, high_open=True)
        if certify not in ("envelope", "seed"):
            raise ValueError(f"certify must be 'envelope' or 'seed', got {certify!r}")
        self.certify = certify
        if bins == "auto":
            self.bins: "int | str" = "auto"
        else:
            self.bins = v.positive_int("bins", bins)
            if self.bins < 16:
                raise ValueError(f"bins must be at least 16 or 'auto', got {bins!r}")
        check_progress(progress)   # True needs tqdm: say so now, not after sampling
        self.progress = progress
        self.seed_params = dict(seed_params or {})
        self.max_grid = v.positive_int("max_grid", max_grid)
        if self.max_grid < _MIN_GRID:
            raise ValueError(f"max_grid must be at least {_MIN_GRID} (the largest FFT length "
                             f"of the composed envelopes; default 2**23), got {max_grid!r}")
        if self.bins != "auto" and self.bins > self.max_grid:
            raise ValueError(f"bins={self.bins:,} exceeds max_grid={self.max_grid:,}: every "
                             "histogram is a grid of that many points; lower bins or raise "
                             "max_grid")
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

    # ---- composition --------------------------------------------------------------------
    def compose(self, mechanism: object, count: int = 1, *, renyi: object = None,
                loss_range: object = None) -> "SampledAccountant":
        """Record ``count`` runs of ``mechanism`` (a spec, :class:`LogDensityPair`,
        :class:`PrivacyLossSampler` or :class:`EmpiricalPRV`); returns ``self``.

        ``renyi`` (a callable ``renyi(order, direction)`` or a table ``{order: value}``)
        and ``loss_range`` (``(lo, hi)``) attach tail information to any mechanism,
        built-in specs included (combined with what the mechanism supplies itself; see
        :mod:`sampledprv.sampled.certification.tails`).  They are premises of the certificate.
        """
        count = v.positive_int("count", count)
        side = (as_renyi(renyi), as_loss_range(loss_range))
        if hasattr(mechanism, "check"):
            mechanism.check()  # type: ignore[union-attr]
        elif not isinstance(mechanism, EmpiricalPRV):
            # raises TypeError if unknown, ValueError for an unsupported relation
            _np_hist.numpy_loss_sampler(self._pair(mechanism), "remove")
        if self.backend == "torch" and not isinstance(mechanism, EmpiricalPRV):
            torch_loss_sampler(self._pair(mechanism), "remove")   # ValueError if torch cannot
        k = _key(mechanism)
        if side != (None, None):
            if self._side.get(k, side) != side:
                raise ValueError(f"{mechanism!r} was composed before with a different renyi/"
                                 "loss_range; give the same tail information every time")
            self._side[k] = side
            for hk in [hk for hk in self._tails if hk[0] == k]:
                del self._tails[hk]
                self._checked.discard(hk)
        if k in self._entries:
            self._entries[k][1] += count
        else:
            self._entries[k] = [mechanism, count]
        return self

    def _tail(self, key: object, mech: object, d: str) -> Optional[TailBound]:
        """Tail information of the histogram ``(key, d)`` (None: samples only)."""
        if not self.tail_bounds:
            return None
        hk = self._hist_key(key, mech, d)
        if hk not in self._tails:
            renyi, lr = self._side.get(key, (None, None))
            self._tails[hk] = tail_bound(self._pair(mech), hk[1], renyi=renyi,
                                         loss_range=lr, symmetric=self._symmetric(mech))
        return self._tails[hk]

    @property
    def composition(self) -> tuple[tuple[object, int], ...]:
        """The composed ``(mechanism, count)`` pairs, in order of first use."""
        return tuple((m, c) for m, c in self._entries.values())

    def _pair(self, mechanism: object) -> object:
        """What is sampled for ``mechanism``: a built-in spec's worst-case pair under the
        relation; user inputs as given."""
        if isinstance(mechanism, Mechanism):
            from ...prv import resolve_relation
            return resolve_relation(mechanism, self.neighbouring)
        return mechanism

    def supports(self, mechanism: object) -> bool:
        """True when :meth:`compose` accepts ``mechanism`` (nothing is sampled)."""
        if isinstance(mechanism, EmpiricalPRV):
            return True
        try:
            if hasattr(mechanism, "check"):
                mechanism.check()  # type: ignore[union-attr]
            else:
                _np_hist.numpy_loss_sampler(self._pair(mechanism), "remove")
        except (TypeError, ValueError):
            return False
        return True

    def describe(self) -> str:
        """How this accountant computes its intervals, in a few lines."""
        comp = self.composition
        lines = [f"SampledAccountant(n_samples={self.n_samples:,}, alpha={self.alpha:g}, "
                 f"certify={self.certify!r}, neighbouring={self.neighbouring.value!r}): "
                 f"{sum(c for _, c in comp):,} mechanisms, {len(comp)} distinct",
                 "method: privacy-loss samples per mechanism and direction; "
                 + ("stochastic-dominance envelopes with Clopper-Pearson bounds, composed "
                    "by FFT" if self.certify == "envelope"
                    else "SampledComposePRV (GG paper Alg. 5-6, Thm 6)"),
                 f"certified with probability >= {1.0 - self.alpha:.12g} over the sampling"]
        return "\n".join(lines)

    def settings(self) -> dict:
        """Type and settings (JSON-ready)."""
        return {"type": "sampled", "n_samples": self.n_samples, "alpha": self.alpha,
                "certify": self.certify, "bins": self.bins, "seed": self._seed_value,
                "neighbouring": self.neighbouring.value}

    def _children(self, key: object) -> list:
        if key not in self._seeds:
            self._index[key] = len(self._seeds)
            self._seeds[key] = self._root.spawn(1)[0].spawn(8)
        return self._seeds[key]

    def _job(self, key: object, mech: object, d: str, tag: str, n: int, lo: float, h: float,
             bins: int, seed: np.random.SeedSequence) -> HistogramJob:
        self._children(key)
        return HistogramJob(self._pair(mech), d, int(n), float(lo), float(h), int(bins), seed,
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
            lo, h, nb = choose_window(self._pair(mech), dd, self.n_samples, self._bins(),
                                      np.random.default_rng(ch[j]), lr)
            jobs.append(self._job(key, mech, dd, "env", self.n_samples, lo, h, nb, ch[j + 1]))
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

    def _symmetric(self, mech: object) -> bool:
        if isinstance(mech, EmpiricalPRV):
            return mech.symmetric
        return bool(getattr(self._pair(mech), "symmetric", False))

    def _directions(self) -> tuple[str, ...]:
        return ("remove",) if all(self._symmetric(m) for m, _ in self.composition) \
            else ("remove", "add")

    def _hist_key(self, key: object, mech: object, d: str) -> tuple:
        return (key, "remove" if self._symmetric(mech) else d)

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

    # ---- envelope method --------------------------------------------------------------------
    def _envelope_bounds(self, delta_hint: Optional[float],
                         alpha: Optional[float] = None) -> tuple[dict, dict]:
        if not self._entries:
            raise ValueError("nothing composed yet: call compose(mechanism, count) first")
        dirs = self._directions()
        used = {self._hist_key(k, m, d) for d in dirs for k, (m, _) in self._entries.items()}
        if delta_hint is not None and any(not isinstance(m, EmpiricalPRV)
                                          for m, _ in self.composition):
            self._check_n(delta_hint, len(used))
        self._sample_envelope_hists([(k, m, d) for d in dirs
                                     for k, (m, _) in self._entries.items()])
        hists = {d: [(self._envelope_hist(k, m, d), c, self._tail(k, m, d))
                     for k, (m, c) in self._entries.items()] for d in dirs}
        floor = _TAIL_FLOOR / sum(c for _, c in self.composition)
        a_h = (self.alpha if alpha is None else alpha) / len(used)
        h_q = max(hh.h for d in dirs for hh, _, _ in hists[d])
        two = {}
        while True:
            envs = {}
            for d in dirs:
                comps = []
                for hh, c, tb in hists[d]:
                    f = int(round(h_q / hh.h))
                    if abs(f * hh.h - h_q) > 1e-9 * h_q:
                        raise ValueError("histogram meshes must be power-of-two multiples "
                                         f"of each other, got {hh.h} and {h_q}")
                    comps.append((envelope(coarsen(hh, f), a_h, tail=tb, floor=floor), c))
                envs[d] = comps
            try:
                out = {d: compose_bounds(envs[d], max_size=self.max_grid) for d in dirs}
                break
            except GridTooLargeError as err:
                out = self._two_level(envs)   # coarse level only; fine mesh kept
                if out is not None:
                    two = next(iter(out.values())).details
                    break
                if all(h_q >= hh.h * hh.counts.size for d in dirs for hh, _, _ in hists[d]):
                    # every histogram is one bin already: a coarser mesh cannot help
                    raise ValueError(
                        f"max_grid={self.max_grid:,} is too small for this composition: even "
                        f"with every histogram merged into one bin the FFT needs "
                        f"{err.needed:,} points; raise max_grid") from None
                h_q *= 2.0
        k = sum(c for _, c in self.composition)
        width = k * h_q
        if two:   # each regridded variable adds at most one coarse mesh of rounding
            width += two["coarse_events"] * two["two_level_factor"] * h_q
        det = {"n_samples": self.n_samples, "alpha": self.alpha, "histograms": len(used),
               "mesh": h_q, "mesh_width": width, "directions": dirs,
               "compositions": k, "bins": self._bins(),
               "tail_bounds": {f"{m!r} ({d})": (tb.source if tb is not None else None)
                               for d in dirs for (m, _), (_, _, tb)
                               in zip(self.composition, hists[d])}}
        if two:
            det.update(two_level_factor=two["two_level_factor"],
                       coarse_events=two["coarse_events"])
        return out, det

    def _method(self, base: str) -> str:
        """``base`` plus the tail information the query used, in words."""
        srcs = {tb.source for (key, (m, _)) in self._entries.items() for d in self._directions()
                for tb in [self._tail(key, m, d)] if tb is not None}
        if not srcs:
            return base
        return (base + "; unseen tail bounded by Chernoff's inequality from "
                + " / ".join(sorted(srcs)) + " (conditional on these bounds)")

    def _two_level(self, envs: dict) -> Optional[dict]:
        """Two-level composition (:mod:`.twolevel`) at the smallest coarse factor that
        fits ``max_grid``; ``None`` if none up to 64 does."""
        for factor in (2, 4, 8, 16, 32, 64):
            try:
                return {d: compose_bounds_two_level(c, factor, max_size=self.max_grid)
                        for d, c in envs.items()}
            except GridTooLargeError:
                continue
        return None

    def _bins(self) -> int:
        """Bins per histogram: ``bins``, or :func:`~.twolevel.bins_for` of the current
        number of compositions when ``bins="auto"``."""
        if self.bins == "auto":
            return min(bins_for(max(1, sum(c for _, c in self.composition))), self.max_grid)
        return int(self.bins)

    # ---- seed method (GG paper, Algorithms 5-6) -----------------------------------------------
    def _seed_grid(self, L: float, h: float) -> int:
        """Half-width ``m`` (in cells) of the seed method's grid ``[-L, L]`` on mesh
        ``h``; a :class:`ValueError` when ``2m + 1`` exceeds ``max_grid``."""
        L = v.positive("seed_params['L']", L)
        h = v.positive("seed_params['h']", h)
        cells = L / h
        if not cells < self.max_grid:
            raise ValueError(
                f"certify='seed' needs a grid of 2L/h = {2 * cells + 1:,.0f} points (L={L:.4g}, "
                f"h={h:.4g}), above max_grid={self.max_grid:,}; pass a larger "
                "seed_params['h'] (or a smaller 'L') or raise max_grid")
        m = int(round(cells - 0.5))
        if 2 * m + 1 > self.max_grid:
            raise ValueError(
                f"certify='seed' needs a grid of 2L/h = {2 * m + 1:,} points (L={L:.4g}, "
                f"h={h:.4g}), above max_grid={self.max_grid:,}; pass a larger "
                "seed_params['h'] (or a smaller 'L') or raise max_grid")
        return m

    def _seed(self, delta_ref: float) -> tuple[dict, dict]:
        comp = self.composition
        if any(isinstance(m, EmpiricalPRV) for m, _ in comp):
            raise ValueError("certify='seed' samples on its own [-L, L] grid and cannot use "
                             "precomputed EmpiricalPRV histograms; use certify='envelope'")
        dirs = self._directions()
        k = sum(c for _, c in comp)
        keys = list(self._entries)
        used = sorted({self._hist_key(kk, self._entries[kk][0], d) for d in dirs for kk in keys},
                      key=repr)
        if "L" in self.seed_params and "h" in self.seed_params:   # size known: check first
            self._seed_grid(float(self.seed_params["L"]), float(self.seed_params["h"]))
        # alpha: half to the fine envelopes (bounding P[|sum Y| >= L - t]), half to the
        # Clopper-Pearson bounds on P[|Y_i| >= L] (one test per histogram)
        env_b, _ = self._envelope_bounds(None, alpha=self.alpha / 2)
        n_half = self.n_samples // 2
        target = max(delta_ref / 20.0, 1e-300)
        L = self.seed_params.get("L")
        if L is None:   # smallest L whose certified tail P[|sum Y| >= L] is below delta/20
            top = max(float(np.max(np.abs(b.up.values))) for b in env_b.values())
            lo_a, hi_a = 0.0, max(top, 1e-3)
            for _ in range(60):
                mid = 0.5 * (lo_a + hi_a)
                if max(b.tail_bound(mid) for b in env_b.values()) <= target:
                    hi_a = mid
                else:
                    lo_a = mid
            t0 = seed_default_params(k=k, n=n_half, L=hi_a, delta=delta_ref)["t"]
            L = hi_a + t0
        p = seed_default_params(k=k, n=n_half, L=float(L), delta=delta_ref)
        p.update({kk: vv for kk, vv in self.seed_params.items() if kk != "L"})
        h = float(p["h"])
        m = self._seed_grid(float(p["L"]), h)   # before any histogram is allocated
        L_eff = (m + 0.5) * h
        fine = max(1, min(64, int(2**22 // (2 * m + 1))))
        a_h = self.alpha / 2 / len(used)
        halves = {}
        jobs, sks = [], []
        for hk in used:
            kk, d = hk
            sk = (hk, "seed", h, m)
            if sk not in self._hists:
                mech = self._entries[kk][0]
                ch = self._children(kk)
                j = 4 if d == "remove" else 6
                jobs += [self._job(kk, mech, d, f"seed1-m{m}-h{h!r}", n_half, -L_eff, h, 2 * m + 1, ch[j]),
                         self._job(kk, mech, d, f"seed2-m{m}-h{h!r}", n_half, -L_eff, h / fine,
                                   (2 * m + 1) * fine, ch[j + 1])]
                sks.append(sk)
        if jobs:
            res = self._run(jobs)
            for i, sk in enumerate(sks):
                self._hists[sk] = (res[2 * i], res[2 * i + 1])  # type: ignore[assignment]
        for hk in used:
            h1, h2 = self._hists[(hk, "seed", h, m)]  # type: ignore[misc]
            c2 = np.asarray(h2.counts, dtype=np.float64)
            x2 = -L_eff + (np.arange(c2.size) + 0.5) * (h / fine)
            mean2 = float(np.dot(c2, x2) / max(c2.sum(), 1.0))
            out1 = h1.n - int(np.sum(h1.counts))
            n_in = int(min(np.sum(h1.counts), np.sum(h2.counts)))
            tail = float(cp_upper(np.array([out1]), h1.n, a_h)[0])
            halves[hk] = (seed_pmf(h1, mean2, L_eff, h), tail, n_in)
        n_eff = min(x[2] for x in halves.values())
        out = {}
        for d in dirs:
            comps = [(self._hist_key(kk, self._entries[kk][0], d), self._entries[kk][1])
                     for kk in keys]
            tail_sum = env_b[d].tail_bound(L_eff - p["t"])
            tails = [halves[hk][1] for hk, c in comps for _ in range(c)]
            tau, eta, parts = seed_tau_eta(k=k, n=n_eff, L=L_eff, h=h, s=p["s"], t=p["t"],
                                           tail_single=tails, tail_sum=tail_sum)
            tau += h / fine / 2.0   # the second half's mean is computed from bin midpoints
            y_hat = circular_compose([(halves[hk][0], c) for hk, c in comps], m)
            out[d] = (y_hat, tau, eta, parts)
        det = {"n_samples": self.n_samples, "alpha": self.alpha, "n_per_half": n_eff,
               "L": L_eff, "h": h, "s": p["s"], "t": p["t"], "directions": dirs,
               "tau": max(o[1] for o in out.values()), "eta": max(o[2] for o in out.values()),
               "eta_terms": {d: out[d][3] for d in dirs}, "compositions": k}
        return out, det

    # ---- queries ------------------------------------------------------------------------------
    @staticmethod
    def _pick(per_direction: dict, direction: object) -> dict:
        """Both directions (``None``) or one (a symmetric composition has one, the same
        in both directions)."""
        if direction is None:
            return per_direction
        d = as_direction(direction).value
        return {d: per_direction[d] if d in per_direction
                else per_direction[Direction.REMOVE.value]}

    def epsilon(self, delta: float, direction: object = None) -> Interval:
        r"""Certified bracket on :math:`\varepsilon(\delta)` (probability ``>= 1 - alpha``).

        ``direction="remove"`` / ``"add"`` answers one direction; ``None`` (default) the
        maximum over both."""
        from ...engine import eps_of_delta

        delta = v.in_interval("delta", delta, 0.0, 1.0, low_open=True, high_open=True)
        if direction is not None:
            as_direction(direction)
        if self.certify == "seed":
            res, det = self._seed(delta)
            lo = est = up = 0.0
            for y, tau, eta, _ in self._pick(res, direction).values():
                vals = y.values
                e_up = eps_of_delta(vals, y.probs, 0.0, delta - eta) + tau if delta > eta \
                    else math.inf
                e_lo = max(eps_of_delta(vals, y.probs, 0.0, min(delta + eta, 1.0)) - tau, 0.0)
                e_est = eps_of_delta(vals, y.probs, 0.0, delta)
                lo, up, est = max(lo, e_lo), max(up, e_up), max(est, e_est)
            return self._interval(lo, est, up, self._method(
                "SampledComposePRV (GG paper Alg. 5-6, Thm 6)"), det)
        bounds, det = self._envelope_bounds(delta)
        bounds = self._pick(bounds, direction)
        trip = [b.epsilon(delta) for b in bounds.values()]
        lo, est, up = (max(t[i] for t in trip) for i in range(3))
        det["per_direction"] = {d: b.epsilon(delta) for d, b in bounds.items()}
        det.update(next(iter(bounds.values())).details)
        return self._interval(lo, est, up, self._method(
            "stochastic-dominance envelopes, Clopper-Pearson union bound, exact FFT "
            "composition"), det)

    def delta(self, epsilon: float, direction: object = None) -> Interval:
        r"""Certified bracket on :math:`\delta(\varepsilon)` (probability ``>= 1 - alpha``).

        ``direction="remove"`` / ``"add"`` answers one direction; ``None`` (default) the
        maximum over both."""
        from ...engine import delta_of_eps

        epsilon = v.nonnegative("epsilon", epsilon)
        if direction is not None:
            as_direction(direction)
        if self.certify == "seed":
            res, det = self._seed(float(self.seed_params.get("delta_ref", 1e-6)))
            lo = est = up = 0.0
            for y, tau, eta, _ in self._pick(res, direction).values():
                vals = y.values
                lo = max(lo, delta_of_eps(vals, y.probs, 0.0, epsilon + tau) - eta)
                up = max(up, delta_of_eps(vals, y.probs, 0.0, max(epsilon - tau, 0.0)) + eta)
                est = max(est, delta_of_eps(vals, y.probs, 0.0, epsilon))
            return self._interval(max(lo, 0.0), est, min(up, 1.0), self._method(
                "SampledComposePRV (GG paper Alg. 5-6, Thm 6)"), det)
        bounds, det = self._envelope_bounds(None)
        bounds = self._pick(bounds, direction)
        trip = [b.delta(epsilon) for b in bounds.values()]
        lo, est, up = (max(t[i] for t in trip) for i in range(3))
        det.update(next(iter(bounds.values())).details)
        return self._interval(lo, est, up, self._method(
            "stochastic-dominance envelopes, Clopper-Pearson union bound, exact FFT "
            "composition"), det)

    def _interval(self, lo: float, est: float, up: float, method: str, det: dict) -> Interval:
        lo = min(lo, up)
        return Interval(float(lo), float(min(max(est, lo), up)), float(up),
                        certification=PROBABILISTIC, confidence=1.0 - self.alpha,
                        method=method, details=det)

    def empirical(self, mechanism: object) -> EmpiricalPRV:
        """The cached envelope histograms of a composed ``mechanism`` (sampling if needed)."""
        k = _key(mechanism)
        if k not in self._entries:
            raise ValueError(f"{mechanism!r} has not been composed")
        if isinstance(mechanism, EmpiricalPRV):
            return mechanism
        rem = self._envelope_hist(k, mechanism, "remove")
        add = None if self._symmetric(mechanism) else self._envelope_hist(k, mechanism, "add")
        return EmpiricalPRV(rem, add, name=repr(mechanism))

    def __repr__(self) -> str:
        parts = ", ".join(f"{m!r} x{c}" for m, c in self.composition)
        return (f"SampledAccountant(n_samples={self.n_samples:,}, alpha={self.alpha:g}, "
                f"certify={self.certify!r}; {parts or 'nothing composed'})")
