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
(:mod:`.envelopes`), so every returned interval is certified on its own.  A composed
spec with dominating compositions (``k``-of-``T`` random allocation) gets the best of
every valid bound instead, ``alpha`` split over them (:mod:`.alternatives`).
"""

from __future__ import annotations

import copy
from typing import Optional

from ...core import validation as v
from ...core.concurrency import guarded
from ...core.contract import PrivacyAccountant
from ...core.interval import PROBABILISTIC, Interval
from ...mechanisms.base import as_direction
from ..draws.torch_draws import torch_loss_sampler
from ..histograms import _numpy_histogram as _np_hist
from ..histograms.empirical import EmpiricalPRV
from ..histograms.sharding import DEFAULT_SHARD_SIZE
from .settings import SampledSettings, setting
from .alternatives import Alternatives, alternatives_for
from .envelope_strategy import EnvelopeMethod, bounds_of_state, pick
from .fixed_size_ends import bracketed, end_pairs, ends
from .histogram_bank import HistogramBank, key_of
from .sample_sizes import describe as describe_n
from .seed_strategy import SeedMethod
from .tail_inputs import as_loss_range, as_renyi

__all__ = ["SampledAccountant"]

@guarded("compose", "composition", "epsilon", "delta", "describe", "empirical", "__repr__",
         shared=("_settings.executor",), transient=("_bounds_cache", "_alt_cache"))
class SampledAccountant(PrivacyAccountant):
    r"""Privacy accounting from samples of the privacy loss, certified w.p. ``1 - alpha``.

    Parameters
    ----------
    n_samples : int, pair or mapping
        Privacy-loss draws per mechanism and direction: one int for both directions, or
        ``(n_remove, n_add)`` / ``{"remove": n_remove, "add": n_add}``
        (:mod:`.sample_sizes`; :func:`~.planner.plan_samples` proposes both).  A finite bound on
        :math:`\varepsilon(\delta)` for ``k`` compositions needs roughly
        ``n > k ln((2 bins + 3) H / alpha) / delta`` with ``H`` the number of
        histograms (one per mechanism and sampled direction)
        (:func:`~sampledprv.sampled.certification.floor.min_samples`); the accountant
        warns before sampling when ``n`` is below it.
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
        (default): :func:`~sampledprv.sampled.certification.twolevel.bins_for` of the
        number ``k`` of compositions when the histograms are sampled, ``4096 sqrt(k)``
        rounded up to a power of two in ``[2**15, 2**22]``, so that the rounding bias
        (about ``k h``) stays a small fraction of the width.  Compositions too large for one FFT grid of
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
        :class:`EmpiricalPRV`) describe their own pair and are used as given.  Fixed-size
        batches (:class:`~sampledprv.FixedSizeSubsampled`) under substitution have no
        single worst-case pair: their upper end is sampled from the symmetric dominating
        pair and their lower end from the attained member pair, in two inner accountants
        at ``alpha / 2`` each (union bound; :mod:`sampledprv.mechanisms.substitution`).
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
    join_directions : bool
        Tighten both ends with the change of measure between the two directions of a
        user :class:`LogDensityPair` (default True; :mod:`.identity_envelopes`): each
        end is the better of the envelopes' and the joined one's, on the same event,
        and ``method`` names the join where it set an end.  ``False`` keeps the plain
        envelopes (the epsilon query is then about a third faster).
    """

    def __init__(self, n_samples: int, alpha: float = 1e-9, seed: int = 0,
                 certify: str = "envelope", bins: "int | str" = "auto",
                 progress: Optional[bool] = None,
                 seed_params: Optional[dict] = None, max_grid: int = 2**23, *,
                 executor: object = None, checkpoint: object = None, backend: str = "numba",
                 device: Optional[str] = None, shard_size: int = DEFAULT_SHARD_SIZE,
                 threads_per_task: int = 1, neighbouring: object = "add_remove",
                 tail_bounds: bool = True, join_directions: bool = True) -> None:
        self._setup(SampledSettings(
            n_samples, alpha, seed, certify, bins, progress, seed_params, max_grid,
            executor=executor, checkpoint=checkpoint, backend=backend, device=device,
            shard_size=shard_size, threads_per_task=threads_per_task,
            neighbouring=neighbouring, tail_bounds=tail_bounds,
            join_directions=join_directions))

    @classmethod
    def from_settings(cls, settings: SampledSettings) -> "SampledAccountant":
        """An accountant with ``settings`` (e.g. an inner accountant:
        ``from_settings(acc._settings.replace(alpha=...))``)."""
        acc = cls.__new__(cls)
        acc._setup(settings)
        return acc

    def _setup(self, settings: SampledSettings) -> None:
        #: every setting, validated (one frozen value: :mod:`.settings`)
        self._settings = settings
        self._bank = HistogramBank(settings)
        self._ends_cache: Optional[tuple] = None
        # composed envelopes of the current composition by (alpha, bins, max_grid): queries
        # of one state share them (cleared by compose; not pickled)
        self._bounds_cache: Optional[dict] = None
        self._alt_cache: "Alternatives | bool | None" = None   # False: none (decided)
        #: how queries are answered: EnvelopeMethod or SeedMethod (stateless strategies)
        self._strategy = EnvelopeMethod() if settings.certify == "envelope" else SeedMethod()

    #: one int (both directions) or ``{"remove": ..., "add": ...}``
    n_samples = setting("n_samples")
    alpha = setting("alpha")
    certify = setting("certify")
    bins = setting("bins")
    progress = setting("progress")
    seed_params = setting("seed_params")
    max_grid = setting("max_grid")
    neighbouring = setting("neighbouring", "The neighbouring relation (``NeighbouringRelation``).")
    backend = setting("backend")
    shard_size = setting("shard_size")
    threads_per_task = setting("threads_per_task")
    executor = setting("executor")
    tail_bounds = setting("tail_bounds")
    join_directions = setting("join_directions")

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
        parts = getattr(mechanism, "composition_parts", None)
        if callable(parts) and parts() is not None:     # a spec that is a composition
            if renyi is not None or loss_range is not None:
                raise ValueError(f"{mechanism!r} is composed as its parts: give renyi= and "
                                 "loss_range= to the parts (spec.composition_parts())")
            for part, k in parts():
                self.compose(part, k * count)
            return self
        side = (as_renyi(renyi), as_loss_range(loss_range))
        for pair in end_pairs(self, mechanism):
            if hasattr(pair, "check"):
                pair.check()  # type: ignore[union-attr]
            elif not isinstance(pair, EmpiricalPRV):
                # raises TypeError if unknown, ValueError for an unsupported relation
                _np_hist.numpy_loss_sampler(pair, "remove")
            if self.backend == "torch" and not isinstance(pair, EmpiricalPRV):
                torch_loss_sampler(pair, "remove")   # ValueError if torch cannot
        self._ends_cache = None
        self._bounds_cache = None
        self._alt_cache = None
        self._bank.record(mechanism, count, side)
        return self

    def n_for(self, direction: str) -> int:
        """Draws per histogram of ``direction`` (``"remove"`` or ``"add"``)."""
        return self._bank.n_for(as_direction(direction).value)

    @property
    def composition(self) -> tuple[tuple[object, int], ...]:
        """The composed ``(mechanism, count)`` pairs, in order of first use."""
        return self._bank.composition

    # ---- the sampling settings ------------------------------------------------------------
    @property
    def device(self) -> Optional[str]:
        """The torch device (the default one resolved by the histogram bank)."""
        return self._bank.device

    @property
    def checkpoint(self) -> object:
        """The checkpoint directory (as made writable by the histogram bank)."""
        return self._bank.checkpoint

    def supports(self, mechanism: object) -> bool:
        """True when :meth:`compose` accepts ``mechanism`` (nothing is sampled)."""
        if isinstance(mechanism, EmpiricalPRV):
            return True
        try:
            for pair in end_pairs(self, mechanism):
                if hasattr(pair, "check"):
                    pair.check()  # type: ignore[union-attr]
                else:
                    _np_hist.numpy_loss_sampler(pair, "remove")
        except (TypeError, ValueError):
            return False
        return True

    def _alternatives(self) -> Optional[Alternatives]:
        """The other certified bounds (:mod:`.alternatives`) when a composed spec has a
        dominating composition (envelope method), else ``None``; the own envelopes are
        then certified at its ``alpha_each``."""
        if self.certify != "envelope":
            return None
        if self._alt_cache is None:      # decided once per composition (False: none)
            settings = self._settings.under("reduction")   # its own shards: reduction/
            self._alt_cache = alternatives_for(self, lambda a: SampledAccountant.from_settings(
                settings.replace(alpha=a, seed=int(self._bank.seed_value)))) or False
        return self._alt_cache or None

    def describe(self) -> str:
        """How this accountant computes its intervals, in a few lines."""
        comp = self.composition
        lines = [f"SampledAccountant(n_samples={describe_n(self._bank.n_samples)}, alpha={self.alpha:g}, "
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
                "certify": self.certify, "bins": self.bins, "seed": self._bank.seed_value,
                "neighbouring": self.neighbouring.value}

    # ---- envelope method --------------------------------------------------------------------
    def _envelope_bounds(self, delta_hint: Optional[float],
                         alpha: Optional[float] = None) -> tuple[dict, dict]:
        if not self._bank.entries:
            raise ValueError("nothing composed yet: call compose(mechanism, count) first")
        dirs = self._bank.directions()
        used = {self._bank.hist_key(k, m, d) for d in dirs for k, (m, _) in self._bank.entries.items()}
        if delta_hint is not None and any(not isinstance(m, EmpiricalPRV)
                                          for m, _ in self.composition):
            self._bank.check_n(delta_hint, len(used))
        # everything below is a function of the composition (compose clears the cache)
        # and of these settings; the details are copied, callers add to them
        key = (self.alpha if alpha is None else float(alpha), self._bank.bins_now(),
               self.max_grid)
        if self._bounds_cache is not None and key in self._bounds_cache:
            out, det = self._bounds_cache[key]
            return dict(out), copy.deepcopy(det)
        out, det = bounds_of_state(self, dirs, used, alpha)
        if self._bounds_cache is None:
            self._bounds_cache = {}
        self._bounds_cache[key] = (out, det)
        return dict(out), copy.deepcopy(det)

    # ---- queries ------------------------------------------------------------------------------
    def epsilon(self, delta: float, direction: object = None) -> Interval:
        r"""Certified bracket on :math:`\varepsilon(\delta)` (probability ``>= 1 - alpha``).

        ``direction="remove"`` / ``"add"`` answers one direction; ``None`` (default) the
        maximum over both."""
        delta = v.in_interval("delta", delta, 0.0, 1.0, low_open=True, high_open=True)
        if direction is not None:
            as_direction(direction)
        two_ends = bracketed(self, "epsilon", delta, direction)
        if two_ends is not None:
            return two_ends
        return self._strategy.epsilon(self, delta, direction)

    def delta(self, epsilon: float, direction: object = None) -> Interval:
        r"""Certified bracket on :math:`\delta(\varepsilon)` (probability ``>= 1 - alpha``).

        ``direction="remove"`` / ``"add"`` answers one direction; ``None`` (default) the
        maximum over both."""
        epsilon = v.nonnegative("epsilon", epsilon)
        if direction is not None:
            as_direction(direction)
        two_ends = bracketed(self, "delta", epsilon, direction)
        if two_ends is not None:
            return two_ends
        return self._strategy.delta(self, epsilon, direction)

    # ---- trade-off curves (sampledprv/core/tradeoff.py) ---------------------------------------
    def tradeoff_simultaneous(self) -> bool:
        """True with ``certify="envelope"``: every ``delta`` query reads the same
        stochastic-dominance envelopes of the same histograms, which hold for every
        threshold (so every epsilon and both directions) on one event of probability
        ``>= 1 - alpha``; the seed method bounds each epsilon on its own."""
        return self.certify == "envelope"

    def tradeoff_delta_source(self):
        """A function ``(direction, eps) -> (lower, estimate, upper)`` giving the numbers of
        :meth:`delta` from envelopes composed once (``delta`` recomposes them per query);
        ``None`` where :meth:`delta` must be asked (seed method, bracketed pairs)."""
        if self.certify != "envelope" or ends(self) is not None:
            return None
        bounds, _ = self._envelope_bounds(None)

        def read(direction: str, eps: float) -> tuple:
            b = pick(bounds, direction)
            lo, est, up = next(iter(b.values())).delta(eps)
            lo = min(lo, up)
            return float(lo), float(min(max(est, lo), up)), float(up)
        return read

    def _interval(self, lo: float, est: float, up: float, method: str, det: dict) -> Interval:
        lo = min(lo, up)
        return Interval(float(lo), float(min(max(est, lo), up)), float(up),
                        certification=PROBABILISTIC, confidence=1.0 - self.alpha,
                        method=method, details=det)

    def empirical(self, mechanism: object) -> EmpiricalPRV:
        """The cached envelope histograms of a composed ``mechanism`` (sampling if needed)."""
        k = key_of(mechanism)
        if k not in self._bank.entries:
            raise ValueError(f"{mechanism!r} has not been composed")
        if isinstance(mechanism, EmpiricalPRV):
            return mechanism
        if any(self._bank.conditional(mechanism, d) is not None for d in ("remove", "add")):
            raise ValueError(f"{mechanism!r} is sampled through a conditional statistic, not "
                             "its privacy loss, so it has no loss histogram to export")
        rem = self._bank.envelope_hist(k, mechanism, "remove")
        add = None if self._bank.symmetric(mechanism) else self._bank.envelope_hist(k, mechanism, "add")
        return EmpiricalPRV(rem, add, name=repr(mechanism))

    def __repr__(self) -> str:
        parts = ", ".join(f"{m!r} x{c}" for m, c in self.composition)
        return (f"SampledAccountant(n_samples={describe_n(self._bank.n_samples)}, alpha={self.alpha:g}, "
                f"certify={self.certify!r}; {parts or 'nothing composed'})")
