r"""Step model of the Opacus accountant for Poisson sampling (Opacus' default loader).

Every step is Poisson-subsampled noise at the step's ``sample_rate`` :math:`q` with the
step's ``noise_multiplier`` :math:`\sigma`: ``PoissonSubsampled(Gaussian(sigma), q)``
(exact PLD, composed online by the analytic accountant's ``horizon`` path), or with
``beta != 2`` beta-DP-SGD's ``PoissonSubsampled(GG(beta, sqrt(2) sigma C), q)``,
accounted as the worst case over the :math:`\ell_\beta` ball in ``dimension``
dimensions.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Any, List, Optional, Sequence, Tuple

from ..analytic.accountant import Accountant
from ..gg.dpsgd_accounting import make_accountant, step_spec
from ..mechanisms import Gaussian, Mechanism, PoissonSubsampled

__all__ = ["PoissonSteps", "MIN_HORIZON"]

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

    def describe(self) -> str:
        noise = "Gaussian" if self.beta == 2.0 else f"Generalized Gaussian (beta={self.beta:g})"
        return (f"PoissonSteps: Poisson sampling, {noise} noise, each step "
                "PoissonSubsampled(noise, sample_rate), composed online")
