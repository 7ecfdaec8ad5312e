r"""Step model of the Opacus accountant for random allocation and balls-and-bins loaders.

:class:`AllocationSteps` accounts a training run whose loader draws its batches with
:class:`~sampledprv.torch.batch_samplers.RandomAllocationBatchSampler` (each record in
``selected`` = :math:`k` uniformly chosen of the :math:`T` steps of an epoch;
:math:`k = 1` is balls-and-bins).  Each completed epoch is one
:class:`sampledprv.RandomAllocation` (``selected = k``; :class:`sampledprv.BallsAndBins`
for :math:`k = 1`) with the epoch's noise multiplier, and the epochs are composed by
:class:`sampledprv.SampledAccountant`: ``E`` epochs at ``sigma`` give exactly the
interval of ``SampledAccountant(n_samples, alpha, seed, bins=bins).compose(spec,
count=E).epsilon(delta)``.

**A partial epoch.**  After :math:`ET + r` steps (:math:`0 < r < T`) the release is the
:math:`E` epochs plus the first :math:`r` steps of epoch :math:`E+1`.

* Upper end: the first :math:`r` steps are a post-processing of the whole epoch, so the
  certified upper end of :math:`E+1` epochs bounds the run from above.
* Lower end: the :math:`E` completed epochs are a post-processing of the run, and the
  dominating pair of random allocation is attained (one-dimensional contributions, the
  other records contributing 0), so the certified lower end of :math:`E` epochs bounds
  the run from below (0 before the first epoch ends).

The interval is ``[lower(E), upper(E+1)]`` with the estimate of :math:`E+1` epochs (an
upper estimate); its ``method`` says so.  The exact prefix (for balls-and-bins the
remove pair :math:`(r/T) P_r + (1 - r/T) Q` against :math:`Q`, Poisson subsampling of
balls-and-bins over :math:`r` steps) would need a new sampling run for every
:math:`r`, i.e. seconds for each ``get_epsilon`` inside an epoch; it is not used.
When the two ends come from compositions of different specs (the noise changed
at the start of the epoch in progress) they rest on different histograms and hold
together with probability :math:`1 - 2\alpha` (union bound); the ``confidence`` says so.

**Speed.**  The histograms of an epoch's spec are sampled once per setting and noise
multiplier (seconds, with a progress bar where the run is long), then every new epoch
count is a composition of the cached histograms, and every interval is cached: calls
of ``get_epsilon`` inside an epoch cost a dictionary look-up.  ``bins`` is fixed so that
the histograms do not depend on the epoch count at which they were first sampled
(``bins="auto"`` of the sampled accountant picks the same :math:`2^{15}` up to 64
epochs).
"""

from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..batch import BallsAndBins, RandomAllocation
from ..core import validation as v
from ..core.interval import PROBABILISTIC, Interval
from ..mechanisms import GeneralizedGaussian
from ..sampled import SampledAccountant
from .epoch_history import EpochHistory, epochs_of

__all__ = ["AllocationSteps"]

#: sampled accountants (with their histograms) kept between calls, over all settings
MAX_ACCOUNTANTS = 16
#: intervals kept between calls
MAX_INTERVALS = 4096

Composition = Tuple[Tuple[Any, int], ...]

_ACCOUNTANTS: "OrderedDict[tuple, SampledAccountant]" = OrderedDict()
_INTERVALS: "OrderedDict[tuple, Interval]" = OrderedDict()


def _extends(acc: SampledAccountant, target: Composition) -> bool:
    """Whether composing more into ``acc`` can give ``target`` with the same order of
    first use (hence the same seeds): ``acc``'s specs are a prefix of ``target``'s, each
    with a count not above the target's."""
    have = acc.composition
    if len(have) > len(target):
        return False
    return all(m == tm and c <= tc for (m, c), (tm, tc) in zip(have, target))


def _accountant_for(settings: tuple, target: Composition, make: Any) -> SampledAccountant:
    """A cached sampled accountant brought to exactly ``target`` (the one with the most
    compositions that extends to it), or a fresh one from ``make()``."""
    best, best_key = None, None
    for key, acc in _ACCOUNTANTS.items():
        if key[0] == settings and _extends(acc, target):
            if best is None or sum(c for _, c in acc.composition) > \
                    sum(c for _, c in best.composition):
                best, best_key = acc, key
    if best is None:
        best, best_key = make(), (settings, object())
    else:
        _ACCOUNTANTS.pop(best_key)
    have = dict(best.composition)
    for m, c in target:
        extra = c - have.get(m, 0)
        if extra > 0:
            best.compose(m, count=extra)
    _ACCOUNTANTS[best_key] = best
    while len(_ACCOUNTANTS) > MAX_ACCOUNTANTS:
        _ACCOUNTANTS.popitem(last=False)
    return best


def _merge(comp: Sequence[Tuple[Any, int]], spec: Any, count: int) -> Composition:
    out: Dict[Any, int] = dict(comp)
    out[spec] = out.get(spec, 0) + count
    return tuple(out.items())


@dataclass(frozen=True)
class AllocationSteps:
    r"""Opacus step model of random allocation (:math:`k` of :math:`T`) and
    balls-and-bins loaders (module docstring).

    Parameters
    ----------
    steps_per_epoch : int
        :math:`T`, the loader's length; Opacus' ``sample_rate`` must be :math:`1/T`.
    selected : int
        :math:`k`, steps per record and epoch (1: balls-and-bins).
    n_samples, alpha, seed, bins
        Settings of the :class:`~sampledprv.SampledAccountant` that composes the epochs
        (draws per histogram and direction, failure probability of the certificate,
        root seed, bins per histogram).
    beta : float
        2 (default): Gaussian noise :math:`N(0, \sigma^2 C^2)` per step.  Otherwise
        Generalized Gaussian steps ``GG(beta, sqrt(2) sigma C)`` (beta-DP-SGD's
        convention), for a one-dimensional query only (``dimension=1``): the
        random-allocation spec takes one-dimensional GG steps, which is not the worst
        case over the :math:`\ell_\beta` ball in more dimensions.
    dimension : int, optional
        Number of noisy coordinates (``beta != 2`` only; must be 1).
    progress : bool or None
        Progress bars of the sampling runs (None: automatic, shown where a run is long).
    """

    steps_per_epoch: int
    selected: int = 1
    n_samples: int = 10**6
    alpha: float = 1e-6
    seed: int = 0
    bins: int = 2**15
    beta: float = 2.0
    dimension: Optional[int] = None
    progress: Optional[bool] = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "steps_per_epoch",
                           v.positive_int("steps_per_epoch", self.steps_per_epoch))
        object.__setattr__(self, "selected", v.positive_int("selected", self.selected))
        if self.selected > self.steps_per_epoch:
            raise ValueError(f"selected must be at most steps_per_epoch="
                             f"{self.steps_per_epoch}, got {self.selected}")
        object.__setattr__(self, "n_samples", v.positive_int("n_samples", self.n_samples))
        object.__setattr__(self, "alpha", v.in_interval("alpha", self.alpha, 0.0, 1.0,
                                                        low_open=True, high_open=True))
        object.__setattr__(self, "bins", v.positive_int("bins", self.bins))
        object.__setattr__(self, "beta", float(self.beta))
        if self.beta != 2.0:
            GeneralizedGaussian(self.beta, 1.0)          # validates beta
            if self.dimension != 1:
                raise ValueError(
                    f"beta={self.beta!r} with dimension={self.dimension!r}: random "
                    "allocation is accounted with one-dimensional Generalized Gaussian steps, "
                    "which is the worst case only for a one-dimensional query; pass "
                    "dimension=1 for such a query, or use Gaussian noise (beta=2)")

    # ---- specs ------------------------------------------------------------------------
    def spec(self, noise_multiplier: float) -> RandomAllocation:
        """One epoch at ``noise_multiplier`` (``BallsAndBins`` for ``selected = 1``)."""
        sigma = v.positive("noise_multiplier", noise_multiplier)
        t, k = self.steps_per_epoch, self.selected
        if self.beta == 2.0:
            return BallsAndBins(sigma, t) if k == 1 else RandomAllocation(sigma, t, k)
        base = GeneralizedGaussian(self.beta, math.sqrt(2.0) * sigma)
        return BallsAndBins(None, t, base=base) if k == 1 else \
            RandomAllocation(None, t, k, base=base)

    def epochs(self, history: Sequence[Tuple[float, float, int]]) -> EpochHistory:
        """The completed epochs and the partial one (:func:`~.epoch_history.epochs_of`)."""
        return epochs_of(history, self.steps_per_epoch)

    def composition(self, epochs: EpochHistory, rounded_up: bool = False) -> Composition:
        """``(spec, count)`` of the completed epochs, in order of first use; with
        ``rounded_up`` the epoch in progress counts as a whole one."""
        comp: Composition = tuple((self.spec(s), e) for s, e in epochs.full)
        if rounded_up and epochs.partial is not None:
            comp = _merge(comp, self.spec(epochs.partial[0]), 1)
        return comp

    def accountant(self) -> SampledAccountant:
        """A fresh sampled accountant with this model's settings (what the epochs are
        composed into)."""
        return SampledAccountant(self.n_samples, alpha=self.alpha, seed=self.seed,
                                 bins=self.bins, progress=self.progress)

    # ---- intervals --------------------------------------------------------------------
    def _settings(self) -> tuple:
        return (self.n_samples, self.alpha, self.seed, self.bins)

    def composed_epsilon(self, comp: Composition, delta: float) -> Interval:
        """Certified interval of ``comp`` at ``delta`` (cached; the histograms of a spec
        are sampled once per setting)."""
        key = (self._settings(), comp, float(delta))
        if key in _INTERVALS:
            _INTERVALS.move_to_end(key)
            return _INTERVALS[key]
        iv = _accountant_for(self._settings(), comp, self.accountant).epsilon(delta)
        _INTERVALS[key] = iv
        while len(_INTERVALS) > MAX_INTERVALS:
            _INTERVALS.popitem(last=False)
        return iv

    def interval(self, history: Sequence[Tuple[float, float, int]], delta: float) -> Interval:
        """Certified interval for epsilon at ``delta`` of the steps in ``history``
        (module docstring: whole epochs exactly; a partial epoch between the epochs
        completed and the epochs begun)."""
        ep = self.epochs(history)
        if ep.steps == 0:
            return Interval(0.0, 0.0, 0.0, method="nothing composed yet")
        down = self.composition(ep)
        if ep.partial is None:
            return self.composed_epsilon(down, delta)
        low = self.composed_epsilon(down, delta) if down else None
        up = self.composed_epsilon(self.composition(ep, rounded_up=True), delta)
        lower = float(low.lower) if low is not None else 0.0
        lower = min(lower, float(up.upper))
        same = low is None or {m for m, _ in down} == {m for m, _ in
                                                        self.composition(ep, True)}
        confidence = 1.0 - self.alpha if same else 1.0 - 2.0 * self.alpha
        e, r = ep.completed, ep.partial[1]
        method = (f"partial epoch ({r} of {self.steps_per_epoch} steps after {e} completed "
                  f"epochs): upper end and estimate from {e + 1} epochs (the first {r} steps "
                  f"are a post-processing of the whole epoch), lower end from the {e} "
                  "completed epochs (a post-processing of the run)"
                  + ("" if same else "; the two ends rest on different histograms: "
                     "confidence 1 - 2 alpha by the union bound")
                  + f"; {up.method}")
        return Interval(lower, min(max(float(up.estimate), lower), float(up.upper)),
                        float(up.upper), PROBABILISTIC, confidence, method,
                        {"completed_epochs": e, "partial_steps": r,
                         "rounded_down": low, "rounded_up": up})

    def describe(self) -> str:
        k = "balls-and-bins" if self.selected == 1 else f"{self.selected}-of-T allocation"
        return (f"AllocationSteps: {k}, T = {self.steps_per_epoch} steps per epoch; epochs "
                f"composed by SampledAccountant(n_samples={self.n_samples:,}, "
                f"alpha={self.alpha:g}, seed={self.seed}, bins={self.bins}); a partial epoch "
                "is bracketed by the epochs completed and the epochs begun")
