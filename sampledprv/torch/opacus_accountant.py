r"""``PrivacyEngine(accountant="sampledprv")``: an Opacus accountant with certified intervals.

:class:`SampledPrvOpacusAccountant` is registered with Opacus' accountant registry under
``"sampledprv"`` when :mod:`sampledprv.torch` is imported and Opacus is installed (this
module imports Opacus; ``import sampledprv.torch`` works without it).  Then::

    engine = PrivacyEngine(accountant="sampledprv")
    model, optimizer, loader = engine.make_private_with_epsilon(..., target_epsilon=2.0, ...)
    engine.get_epsilon(1e-5)                        # certified upper end
    engine.accountant.get_epsilon_interval(1e-5)    # the whole sampledprv.Interval

How Opacus' history becomes a composition is a *step model*
(:class:`PoissonSteps` by default): ``composition(history)`` returns the
``(spec, count)`` pairs that the history ``[(noise_multiplier, sample_rate, steps), ...]``
stands for, and ``accountant(steps)`` a fresh sampledprv accountant for them.  The
accountant keeps one sampledprv accountant and composes only what a new history adds
(each new step costs ``O(n)`` with the analytic accountant's online ``horizon`` path);
any other change of the history (Opacus' calibration sets it wholesale) starts a fresh
one.  A step model for another batch sampler (for example random allocation, whose spec
describes a whole epoch and is accounted by the sampled accountant) implements the same
two methods and is passed as ``SampledPrvOpacusAccountant(steps=...)``.

Noise: :class:`PoissonSteps` with ``beta = 2`` is Opacus' Gaussian DP-SGD
(``PoissonSubsampled(Gaussian(sigma), q)`` per step, exact PLD); ``beta != 2`` is
beta-DP-SGD with Generalized Gaussian noise of scale ``sqrt(2) sigma C`` (the convention
of :mod:`sampledprv.torch.opacus_integration`, accounted as the worst case over the
:math:`\ell_\beta` ball in ``dimension`` dimensions).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Any, Iterable, List, Optional, Sequence, Tuple

from opacus.accountants import IAccountant
from opacus.accountants.registry import register_accountant

from ..core.interval import Interval
from ..gg.dpsgd_accounting import step_spec
from ..analytic.accountant import Accountant
from ..gg.dpsgd_accounting import make_accountant
from ..mechanisms import Gaussian, Mechanism, PoissonSubsampled

__all__ = ["SampledPrvOpacusAccountant", "PoissonSteps", "register", "MECHANISM"]

#: the name under which the accountant is registered with Opacus
MECHANISM = "sampledprv"
#: smallest planned horizon of the online accountant (it starts at twice the steps of the
#: history it first sees and doubles when exceeded)
MIN_HORIZON = 64

History = Sequence[Tuple[float, float, int]]


@dataclass(frozen=True)
class PoissonSteps:
    r"""Opacus' default sampler: every step is Poisson-subsampled noise at the step's
    ``sample_rate`` (``q``) with the step's ``noise_multiplier`` (``sigma``).

    Parameters
    ----------
    beta : float
        2 (default): Gaussian noise :math:`N(0, \sigma^2 C^2)`, step spec
        ``PoissonSubsampled(Gaussian(sigma), q)``.  Otherwise Generalized Gaussian noise
        ``GG(beta, sqrt(2) sigma C)`` (beta-DP-SGD).
    dimension : int, optional
        Number of noisy coordinates (``beta != 2`` only; see
        :func:`sampledprv.torch.opacus_integration.step_mechanism`).
    eps_error, delta_error : float
        Accuracy of the analytic accountant (``beta = 2``).
    """

    beta: float = 2.0
    dimension: Optional[int] = None
    eps_error: float = 0.01
    delta_error: float = 1e-10

    def spec(self, noise_multiplier: float, sample_rate: float) -> Mechanism:
        """The spec of one step."""
        sigma, q = float(noise_multiplier), float(sample_rate)
        if self.beta == 2.0:
            if sigma <= 0:
                raise ValueError(f"noise_multiplier must be > 0 for a private step, got {sigma!r}")
            base: Mechanism = Gaussian(sigma=sigma, sensitivity=1.0)
            return base if q == 1.0 else PoissonSubsampled(base, q)
        return step_spec(self.beta, math.sqrt(2.0) * sigma, q, dimension=self.dimension)

    def composition(self, history: History) -> List[Tuple[Mechanism, int]]:
        """``(spec, count)`` pairs of a history ``[(sigma, q, steps), ...]``."""
        out: Counter = Counter()
        for sigma, q, n in history:
            if int(n) > 0 and float(q) > 0:
                out[self.spec(sigma, q)] += int(n)
        return list(out.items())

    def accountant(self, steps: int) -> Any:
        """A fresh accountant planned for about ``steps`` steps."""
        if self.beta == 2.0:
            return Accountant(self.eps_error, self.delta_error,
                              horizon=max(MIN_HORIZON, 2 * int(steps)))
        return make_accountant("vector", self.beta)


class SampledPrvOpacusAccountant(IAccountant):
    r"""Opacus ``IAccountant`` backed by a sampledprv accountant (module docstring).

    ``history`` holds ``(noise_multiplier, sample_rate, steps)`` like Opacus' own
    accountants.  :meth:`get_epsilon` returns the certified **upper** end,
    :meth:`get_epsilon_interval` the whole :class:`sampledprv.Interval`.

    Parameters
    ----------
    steps : step model, optional
        How the history becomes a composition (default :class:`PoissonSteps` built from
        ``beta`` and ``dimension``): any object with ``composition(history)`` and
        ``accountant(steps)``.
    beta, dimension : optional
        Shortcuts for ``PoissonSteps(beta, dimension)``.
    """

    def __init__(self, steps: Any = None, *, beta: float = 2.0,
                 dimension: Optional[int] = None) -> None:
        self.history: list = []
        if steps is None:
            steps = PoissonSteps(float(beta), dimension)
        elif not (hasattr(steps, "composition") and hasattr(steps, "accountant")):
            raise ValueError("steps must be a step model with composition(history) and "
                             f"accountant(steps) methods (e.g. PoissonSteps()), got {steps!r}")
        self.steps = steps
        self._acc: Any = None
        self._applied: Counter = Counter()

    @classmethod
    def mechanism(cls) -> str:
        return MECHANISM

    def step(self, *, noise_multiplier: float, sample_rate: float) -> None:
        if self.history and tuple(self.history[-1][:2]) == (noise_multiplier, sample_rate):
            sigma, q, n = self.history.pop()
            self.history.append((sigma, q, n + 1))
        else:
            self.history.append((noise_multiplier, sample_rate, 1))

    def __len__(self) -> int:
        return int(sum(n for _, _, n in self.history))

    def _current(self) -> Any:
        """The persistent accountant brought up to ``history``: what the history adds to
        the composition already accounted is composed into it; anything else (a
        history set wholesale, a lower count) starts a fresh one."""
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
        if not self.history or not self.steps.composition(self.history):
            return Interval(0.0, 0.0, 0.0, method="nothing composed yet")
        return self._current().epsilon(delta=delta)

    def get_epsilon(self, delta: float, *args: Any, **kwargs: Any) -> float:
        """Certified upper end of epsilon at ``delta`` (0 before any step)."""
        return float(self.get_epsilon_interval(delta).upper)

    def describe(self) -> str:
        """The underlying accountant's :meth:`describe` (how the interval is computed)."""
        acc = self._current() if self.history else None
        return acc.describe() if acc is not None and hasattr(acc, "describe") else \
            "SampledPrvOpacusAccountant: nothing composed yet"


def register(force: bool = True) -> None:
    """Register :class:`SampledPrvOpacusAccountant` with Opacus as ``"sampledprv"``."""
    register_accountant(MECHANISM, SampledPrvOpacusAccountant, force=force)


def composition_of(history: Iterable[Tuple[float, float, int]]) -> List[Tuple[Mechanism, int]]:
    """The default step model's composition of an Opacus history (for checks)."""
    return PoissonSteps().composition(list(history))
