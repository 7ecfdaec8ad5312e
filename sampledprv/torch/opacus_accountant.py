r"""``PrivacyEngine(accountant="sampledprv")``: an Opacus accountant with certified intervals.

:class:`SampledPrvOpacusAccountant` is registered with Opacus' accountant registry under
``"sampledprv"`` when :mod:`sampledprv.torch` is imported and Opacus is installed (this
module imports Opacus; ``import sampledprv.torch`` works without it).  Then::

    engine = PrivacyEngine(accountant="sampledprv")
    model, optimizer, loader = engine.make_private_with_epsilon(..., target_epsilon=2.0, ...)
    engine.get_epsilon(1e-5)                        # certified upper end
    engine.accountant.get_epsilon_interval(1e-5)    # the whole sampledprv.Interval

**The loader's batch sampler.**  How Opacus' history ``[(noise_multiplier, sample_rate,
steps), ...]`` becomes a privacy statement is a *step model*, chosen from the loader that
trains by :meth:`SampledPrvOpacusAccountant.use_loader` (after ``make_private``) or
:meth:`SampledPrvOpacusAccountant.for_loader` (before ``make_private_with_epsilon``, so
that Opacus' calibration uses it too; :mod:`.loader_steps`):

* :class:`PoissonSteps` (default; Opacus' ``DPDataLoader``): each step
  ``PoissonSubsampled(noise, q)``, composed online;
* :class:`AllocationSteps` (:class:`~.batch_samplers.BallsAndBinsBatchSampler`,
  :class:`~.batch_samplers.RandomAllocationBatchSampler`): each epoch one
  :class:`sampledprv.RandomAllocation`, composed by the sampled accountant; a partial
  epoch is bracketed (:mod:`.allocation_steps`);
* :class:`ShuffledSteps` (``shuffle=True``): certified lower end and the
  deterministic-batch upper end, with a warning at the first query
  (:mod:`.fixed_batch_steps`);
* :class:`DeterministicSteps` (``shuffle=False``): ``Gaussian(sigma)`` per epoch begun.

A step model speaks one of two protocols.  *Online*: ``composition(history)`` returns
the ``(spec, count)`` pairs the history stands for and ``accountant(steps)`` a fresh
sampledprv accountant; the Opacus accountant keeps one sampledprv accountant and composes
only what a new history adds (each new step costs ``O(n)`` with the analytic
accountant's ``horizon`` path); any other change of the history (Opacus' calibration
sets it wholesale) starts a fresh one.  *Whole history*: ``interval(history, delta)``
returns the interval itself (the epoch models, which cache their intervals).  A model
may add ``caveat(interval)``: a warning shown once, with the first interval.

Opacus' ``make_private_with_epsilon`` calibrates with an accountant it creates by name
(``accountant.mechanism()``).  :meth:`SampledPrvOpacusAccountant.for_loader` returns an
instance of a subclass registered under a name that carries its step model
(:func:`accountant_class`), so the calibration accounts the same sampler, and Opacus'
bisection keeps the noise whose certified upper end is below the target.

Noise: Gaussian (``beta = 2``, Opacus' DP-SGD) or beta-DP-SGD's Generalized Gaussian
noise of scale ``sqrt(2) sigma C`` (the convention of
:mod:`sampledprv.torch.opacus_integration`): with Poisson sampling the worst case over
the :math:`\ell_\beta` ball in ``dimension`` dimensions, with random allocation
one-dimensional queries only.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Dict, Iterable, List, Optional, Tuple, Type

from opacus.accountants import IAccountant
from opacus.accountants.registry import register_accountant

from ..core.advice import warn_user
from ..core.interval import Interval
from ..mechanisms import Mechanism
from .allocation_steps import AllocationSteps
from .fixed_batch_steps import DeterministicSteps, ShuffledSteps
from .loader_steps import options_of, steps_for_loader
from .poisson_steps import MIN_HORIZON, PoissonSteps

__all__ = ["SampledPrvOpacusAccountant", "PoissonSteps", "AllocationSteps", "ShuffledSteps",
           "DeterministicSteps", "accountant_class", "register", "MECHANISM", "MIN_HORIZON"]

#: the name under which the accountant is registered with Opacus
MECHANISM = "sampledprv"


def _is_step_model(steps: Any) -> bool:
    return hasattr(steps, "interval") or (hasattr(steps, "composition")
                                          and hasattr(steps, "accountant"))


class SampledPrvOpacusAccountant(IAccountant):
    r"""Opacus ``IAccountant`` backed by a sampledprv accountant (module docstring).

    ``history`` holds ``(noise_multiplier, sample_rate, steps)`` like Opacus' own
    accountants.  :meth:`get_epsilon` returns the certified **upper** end,
    :meth:`get_epsilon_interval` the whole :class:`sampledprv.Interval`.

    Parameters
    ----------
    steps : step model, optional
        How the history is accounted (module docstring): default :class:`PoissonSteps`
        built from ``beta`` and ``dimension`` (or the class's ``STEPS``, see
        :func:`accountant_class`).
    beta, dimension : optional
        Shortcuts for ``PoissonSteps(beta, dimension)``.
    """

    #: the step model of a class made by :func:`accountant_class` (None: Poisson)
    STEPS: Any = None

    def __init__(self, steps: Any = None, *, beta: float = 2.0,
                 dimension: Optional[int] = None) -> None:
        self.history: list = []
        if steps is None and self.STEPS is not None:
            if float(beta) != 2.0 or dimension is not None:
                raise ValueError(f"this accountant class accounts {self.STEPS!r}; beta and "
                                 "dimension belong to its step model, not to the accountant")
            steps = self.STEPS
        elif steps is None:
            steps = PoissonSteps(float(beta), dimension)
        elif not _is_step_model(steps):
            raise ValueError("steps must be a step model with interval(history, delta), or "
                             "with composition(history) and accountant(steps) (e.g. "
                             f"PoissonSteps()), got {steps!r}")
        self._set_steps(steps)

    def _set_steps(self, steps: Any) -> None:
        self.steps = steps
        self._acc: Any = None
        self._applied: Counter = Counter()
        self._warned = False

    # ---- the loader's batch sampler ------------------------------------------------------
    @classmethod
    def for_loader(cls, loader: Any, **options: Any) -> "SampledPrvOpacusAccountant":
        """An accountant for the batch sampler of ``loader``
        (:func:`~.loader_steps.steps_for_loader`; ``options``: ``beta``, ``dimension``,
        ``n_samples``, ``alpha``, ``seed``, ``shuffle_upper``), of a class registered with
        Opacus under a name that carries the step model, so that
        ``make_private_with_epsilon`` calibrates with it::

            engine.accountant = SampledPrvOpacusAccountant.for_loader(loader)
            engine.make_private_with_epsilon(..., data_loader=loader,
                                             poisson_sampling=False)
        """
        return accountant_class(steps_for_loader(loader, **options))()

    def use_loader(self, loader: Any, **options: Any) -> "SampledPrvOpacusAccountant":
        """Account the batch sampler of ``loader``, the loader that trains (the one
        ``make_private`` returned); returns ``self``.  ``options`` as :meth:`for_loader`;
        those not given keep the current step model's settings.

        Raises
        ------
        ValueError
            When steps were accounted already under another step model, or when this
            accountant was made for another sampler by :meth:`for_loader` (for example a
            balls-and-bins loader given to ``make_private`` without
            ``poisson_sampling=False``, which Opacus replaced by Poisson sampling).
        """
        steps = steps_for_loader(loader, **{**options_of(self.steps), **options})
        if steps == self.steps:
            return self
        if self.STEPS is not None:
            raise ValueError(
                f"this accountant was made for {self.STEPS!r} (its calibration used it), but "
                f"the loader trains with {steps!r}; if Opacus replaced your batch sampler, "
                "pass poisson_sampling=False to make_private / make_private_with_epsilon")
        if len(self):
            raise ValueError(f"{len(self)} steps were accounted with {self.steps!r} already; "
                             "call use_loader before training")
        self._set_steps(steps)
        return self

    # ---- Opacus' interface ---------------------------------------------------------------
    @classmethod
    def mechanism(cls) -> str:
        return MECHANISM if cls.STEPS is None else f"{MECHANISM}:{cls.STEPS!r}"

    def step(self, *, noise_multiplier: float, sample_rate: float) -> None:
        if self.history and tuple(self.history[-1][:2]) == (noise_multiplier, sample_rate):
            sigma, q, n = self.history.pop()
            self.history.append((sigma, q, n + 1))
        else:
            self.history.append((noise_multiplier, sample_rate, 1))

    def __len__(self) -> int:
        return int(sum(n for _, _, n in self.history))

    def _current(self) -> Any:
        """The persistent accountant brought up to ``history`` (online protocol): what the
        history adds to the composition already accounted is composed into it; anything
        else (a history set wholesale, a lower count) starts a fresh one."""
        target = Counter(dict(self.steps.composition(self.history)))
        grows = all(target[m] >= c for m, c in self._applied.items())
        if self._acc is None or not grows:
            self._acc, self._applied = self.steps.accountant(len(self)), Counter()
        for m, c in target.items():
            new = c - self._applied[m]
            if new > 0:
                self._acc = self._acc.compose(m, count=new) or self._acc
        self._applied = target
        return self._acc

    def get_epsilon_interval(self, delta: float) -> Interval:
        """Certified interval for epsilon at ``delta`` of everything in ``history``."""
        if hasattr(self.steps, "interval"):
            iv = self.steps.interval(self.history, delta)
        elif not self.history or not self.steps.composition(self.history):
            return Interval(0.0, 0.0, 0.0, method="nothing composed yet")
        else:
            iv = self._current().epsilon(delta=delta)
        caveat = getattr(self.steps, "caveat", None)
        if caveat is not None and not self._warned and len(self):
            text = caveat(iv)
            if text:
                self._warned = True
                warn_user(text, UserWarning)
        return iv

    def get_epsilon(self, delta: float, *args: Any, **kwargs: Any) -> float:
        """Certified upper end of epsilon at ``delta`` (0 before any step)."""
        return float(self.get_epsilon_interval(delta).upper)

    def describe(self) -> str:
        """How the intervals are computed: the step model, and the underlying
        accountant's :meth:`describe` where there is one."""
        head = self.steps.describe() if hasattr(self.steps, "describe") else repr(self.steps)
        if hasattr(self.steps, "interval") or not self.history:
            return head
        acc = self._current()
        return head + ("\n" + acc.describe() if hasattr(acc, "describe") else "")


_CLASSES: Dict[Any, Type[SampledPrvOpacusAccountant]] = {}


def accountant_class(steps: Any) -> Type[SampledPrvOpacusAccountant]:
    """A :class:`SampledPrvOpacusAccountant` subclass whose instances use the step model
    ``steps`` (a frozen, hashable step model), registered with Opacus under
    ``"sampledprv:<repr(steps)>"`` (Opacus' ``create_accountant`` then builds it, and its
    calibration accounts the same sampler)."""
    if not _is_step_model(steps):
        raise ValueError(f"steps must be a step model (e.g. AllocationSteps(100)), got {steps!r}")
    if steps not in _CLASSES:
        cls = type(f"SampledPrvOpacusAccountant_{type(steps).__name__}",
                   (SampledPrvOpacusAccountant,), {"STEPS": steps, "__module__": __name__})
        register_accountant(cls.mechanism(), cls, force=True)
        _CLASSES[steps] = cls
    return _CLASSES[steps]


def register(force: bool = True) -> None:
    """Register :class:`SampledPrvOpacusAccountant` with Opacus as ``"sampledprv"``."""
    register_accountant(MECHANISM, SampledPrvOpacusAccountant, force=force)


def composition_of(history: Iterable[Tuple[float, float, int]]) -> List[Tuple[Mechanism, int]]:
    """The default step model's composition of an Opacus history (for checks)."""
    return PoissonSteps().composition(list(history))
