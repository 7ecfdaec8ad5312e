r"""Step models of the Opacus accountant for fixed-batch loaders: shuffled and sequential.

A loader with ``batch_size=B`` cuts each epoch into :math:`T` = ``len(loader)`` batches
that hold every record once (the last batch smaller when :math:`B` does not divide the
dataset size :math:`n` and ``drop_last=False``).  Batch sizes are fixed, so the
neighbouring relation is **zero-out** (a record replaced by a null record contributing
0), the add/remove relation of fixed batches; the sensitivity of a batch sum is the clip
norm :math:`C`.

* :class:`ShuffledSteps` (``shuffle=True``, a fresh permutation each epoch): no
  dominating pair is known.  :class:`sampledprv.ShuffleAccountant` gives the certified
  **lower** end (the worst pair known, Chua et al., ICML 2024) and, as upper end,
  the deterministic-batch bound (one Gaussian of sensitivity :math:`C` per epoch: each
  record is in one batch per epoch, joint convexity over the permutation), which is
  valid but loose; ``upper="none"`` reports ``+inf`` instead.  With a smaller last batch
  the lower end stays valid: the record's batch then has law :math:`w_t = b_t/n`, and
  the uniform mixture of the lower pair is the average of the :math:`T` cyclic shifts
  of the :math:`w`-mixture, so by joint convexity its hockey-stick divergence is at most
  that of the loader's own pair.
* :class:`DeterministicSteps` (a sequential loader): the batches are the same every
  epoch, so the record of the first batch is released once per epoch begun, with
  Gaussian noise of standard deviation :math:`\sigma C`: the run is exactly
  ``Gaussian(sigma)`` composed over the epochs begun (the worst record is in the first
  batch, which every begun epoch has released).

A partial epoch of shuffled batches is bracketed like random allocation
(:mod:`.allocation_steps`): lower end from the completed epochs, upper end from the
epochs begun.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, List, Optional, Sequence, Tuple

from ..analytic.accountant import Accountant
from ..analytic.shuffle import ShuffleAccountant
from ..core import validation as v
from ..core.interval import Interval
from ..mechanisms import Gaussian
from ..mechanisms.shuffled import Shuffled
from .epoch_history import epochs_of

__all__ = ["ShuffledSteps", "DeterministicSteps", "SHUFFLE_CAVEAT"]

#: intervals kept between calls
MAX_INTERVALS = 1024
_INTERVALS: "OrderedDict[tuple, Interval]" = OrderedDict()

#: the warning of a shuffled loader (formatted with the interval's ends)
SHUFFLE_CAVEAT = (
    "shuffled batches have no known tight upper bound on their privacy: epsilon is at "
    "least {lower:.4g} (certified lower end, the worst pair known, Chua et al. ICML 2024), "
    "and get_epsilon() returns {upper:.4g}, the deterministic-batch upper bound (valid, "
    "loose). For a tight certified epsilon, train with Poisson sampling or with "
    "sampledprv.torch.BallsAndBinsBatchSampler")


@dataclass(frozen=True)
class ShuffledSteps:
    r"""Opacus step model of a shuffled fixed-batch loader (module docstring).

    Parameters
    ----------
    steps_per_epoch : int
        :math:`T`, the loader's length; Opacus' ``sample_rate`` must be :math:`1/T`.
    upper : {"deterministic", "none"}
        Upper end: the deterministic-batch bound (default) or ``+inf``.
    eps_error, delta_error : float
        Accuracy of the inner analytic accountants.
    """

    steps_per_epoch: int
    upper: str = "deterministic"
    eps_error: float = 0.01
    delta_error: float = 1e-10

    def __post_init__(self) -> None:
        object.__setattr__(self, "steps_per_epoch",
                           v.positive_int("steps_per_epoch", self.steps_per_epoch))
        ShuffleAccountant(upper=self.upper, eps_error=self.eps_error,
                          delta_error=self.delta_error)          # validates the settings

    def _epsilon(self, comp: Tuple[Tuple[float, int], ...], delta: float) -> Interval:
        key = (self, comp, float(delta))
        if key not in _INTERVALS:
            acc = ShuffleAccountant(upper=self.upper, eps_error=self.eps_error,
                                    delta_error=self.delta_error)
            for sigma, epochs in comp:
                acc.compose(Shuffled(sigma, self.steps_per_epoch), count=epochs)
            _INTERVALS[key] = acc.epsilon(delta)
            while len(_INTERVALS) > MAX_INTERVALS:
                _INTERVALS.popitem(last=False)
        return _INTERVALS[key]

    def interval(self, history: Sequence[Tuple[float, float, int]], delta: float) -> Interval:
        """Certified range of epsilon at ``delta`` (module docstring)."""
        ep = epochs_of(history, self.steps_per_epoch)
        if ep.steps == 0:
            return Interval(0.0, 0.0, 0.0, method="nothing composed yet")
        if ep.partial is None:
            return self._epsilon(ep.full, delta)
        up_comp = dict(ep.full)
        up_comp[ep.partial[0]] = up_comp.get(ep.partial[0], 0) + 1
        up = self._epsilon(tuple(up_comp.items()), delta)
        lower = float(self._epsilon(ep.full, delta).lower) if ep.full else 0.0
        lower = min(lower, float(up.upper))
        e, r = ep.completed, ep.partial[1]
        return Interval(lower, min(max(float(up.estimate), lower), float(up.upper)),
                        float(up.upper), up.certification, up.confidence,
                        f"partial epoch ({r} of {self.steps_per_epoch} steps after {e} "
                        f"completed epochs): lower end from the {e} completed epochs, upper "
                        f"end and estimate from {e + 1} epochs; {up.method}",
                        {"completed_epochs": e, "partial_steps": r, "rounded_up": up,
                         "deterministic_batches": up.details.get("deterministic_batches")})

    def caveat(self, interval: Interval) -> Optional[str]:
        """The warning shown with the first interval of a run."""
        return SHUFFLE_CAVEAT.format(lower=interval.lower, upper=interval.upper)

    def describe(self) -> str:
        return (f"ShuffledSteps: shuffled fixed batches, T = {self.steps_per_epoch} steps per "
                "epoch, zero-out neighbours; certified lower end (Chua et al.), upper end "
                + ("from deterministic batches" if self.upper == "deterministic" else "+inf"))


@dataclass(frozen=True)
class DeterministicSteps:
    r"""Opacus step model of a sequential fixed-batch loader: ``Gaussian(sigma)`` once per
    epoch begun (module docstring), composed online by the analytic accountant.

    Parameters
    ----------
    steps_per_epoch : int
        :math:`T`, the loader's length; Opacus' ``sample_rate`` must be :math:`1/T`.
    eps_error, delta_error : float
        Accuracy of the analytic accountant.
    """

    steps_per_epoch: int
    eps_error: float = 0.01
    delta_error: float = 1e-10

    def __post_init__(self) -> None:
        object.__setattr__(self, "steps_per_epoch",
                           v.positive_int("steps_per_epoch", self.steps_per_epoch))

    def composition(self, history: Sequence[Tuple[float, float, int]]) -> List[Tuple[Any, int]]:
        """``(Gaussian(sigma), epochs begun)`` per noise multiplier."""
        ep = epochs_of(history, self.steps_per_epoch)
        out = dict(ep.full)
        if ep.partial is not None:
            out[ep.partial[0]] = out.get(ep.partial[0], 0) + 1
        return [(Gaussian(sigma=s, sensitivity=1.0), e) for s, e in out.items()]

    def accountant(self, steps: int) -> Accountant:
        """A fresh analytic accountant."""
        return Accountant(self.eps_error, self.delta_error)

    def describe(self) -> str:
        return (f"DeterministicSteps: sequential fixed batches, T = {self.steps_per_epoch} "
                "steps per epoch, zero-out neighbours; Gaussian(sigma) per epoch begun")
