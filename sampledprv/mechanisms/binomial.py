r"""The binomial mechanism (Agarwal et al. 2018, as accounted by Koskela et al.,
"Computing differential privacy guarantees for heterogeneous compositions using FFT" /
"Tight differential privacy for discrete-valued mechanisms", Sec. 6.2): spec, exact law,
samplers, CLI.

``f(D) + Z`` with :math:`Z \sim \mathrm{Bin}(n, p)` on an integer query (centring by
:math:`np` and scaling the output are post-processing).  Canonical pair, as in the
paper: :math:`P_0 = Z + \Delta` (the dataset with the record) and :math:`Q_0 = Z`; the
loss :math:`\log\big(\binom{n}{o-\Delta} p^{-\Delta}(1-p)^{\Delta} / \binom{n}{o}\big)` is an
atom per output, :math:`+\infty` on the outputs :math:`o > n` that only :math:`P_0`
reaches (and :math:`-\infty` under :math:`Q_0` on :math:`o < \Delta`).  Exact, no
truncation: every mass is an exact log-space binomial term.

Conventions.  ``sensitivity`` is the per-record add/remove change, with the query
*larger* on the dataset with the record (counts, sums of non-negative values); ``remove``
is :math:`D(P_0 \| Q_0)`, ``add`` is :math:`D(Q_0 \| P_0)`.  For ``p = 1/2`` the noise
is symmetric and the sign of the change does not matter; for ``p != 1/2`` the maximum
over both directions is the worst case of a change of one fixed sign in every release.
Under substitution the sensitivity doubles (for counts of {0, 1} values a substitution
moves the count by 1 only, so the doubled value is conservative there).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Dict

import numpy as np

from ..core import validation as v
from ._finite import FINITE_HOOKS, mixture_pair_law
from .base import doubled_under_substitution, Mechanism
from .discrete_laplace import integer_sensitivity
from ..core.formatting import spec_number as _g
from .registry import CliKind, Family, register

__all__ = ["Binomial"]

#: largest number of trials tabulated (one atom per output)
MAX_TRIALS = 10 ** 7


@dataclass(frozen=True)
class Binomial(Mechanism):
    r"""Binomial mechanism: add :math:`\mathrm{Bin}(\text{trials}, p)` noise (module docstring).

    Parameters
    ----------
    trials : int
        Number of Bernoulli trials ``n`` (1 to 1e7).
    p : float
        Success probability, ``0 < p < 1``.
    sensitivity : int
        Per-record (add/remove) change of the integer query (``Delta``), 1 by default;
        doubled under substitution.
    """

    trials: int
    p: float
    sensitivity: int = 1

    def __post_init__(self) -> None:
        n = v.positive_int("trials", self.trials)
        if n > MAX_TRIALS:
            raise ValueError(f"trials must be at most {MAX_TRIALS:g} (one table entry per "
                             f"output), got {self.trials!r}")
        object.__setattr__(self, "trials", n)
        object.__setattr__(self, "p", v.in_interval(
            "p", self.p, 0.0, 1.0, low_open=True, high_open=True,
            hint="p is the success probability of each trial; p = 0.5 is the usual choice"))
        object.__setattr__(self, "sensitivity", integer_sensitivity(self.sensitivity))

    @property
    def symmetric(self) -> bool:  # type: ignore[override]
        return self.p == 0.5

    def noise_window(self, tail: float = 0.0):
        """``(log pmf on 0..trials, 0.0)``: the whole support, exactly."""
        from scipy import special

        n, p = self.trials, self.p
        k = np.arange(n + 1, dtype=np.float64)
        log_pmf = (special.gammaln(n + 1.0) - special.gammaln(k + 1.0)
                   - special.gammaln(n - k + 1.0) + k * math.log(p) + (n - k) * math.log1p(-p))
        return log_pmf, 0.0

    def noise_log_error(self, size: int = 0) -> float:
        r"""Bound on the absolute error of every entry of :meth:`noise_window`'s log pmf.

        :math:`\log\binom{n}{k} p^k (1-p)^{n-k}` is evaluated as
        ``gammaln(n+1) - gammaln(k+1) - gammaln(n-k+1) + k log p + (n-k) log1p(-p)``:
        each term is accurate to a few ulps of *itself*, and the terms cancel, so the
        error is a few ulps of :math:`2\log\Gamma(n+1) + n\max(|\log p|, |\log(1-p)|)`
        (about ``2e-12`` at ``n = 1000`` and ``4e-8`` at ``n = 1e7``, far above the
        ulps of the result).  We take 4 ulps of that sum (checked against 40-digit
        values in the tests)."""
        from scipy import special

        n, p = self.trials, self.p
        scale = 2.0 * float(special.gammaln(n + 1.0)) + n * max(abs(math.log(p)),
                                                                abs(math.log1p(-p)))
        return 4.0 * float(np.finfo(np.float64).eps) * (scale + 4.0)

    def law(self):
        """Loss atoms of the canonical pair ``(Z + Delta, Z)``."""
        log_pmf, _ = self.noise_window()
        return mixture_pair_law(log_pmf, [(self.sensitivity, 1.0)], [(0, 1.0)],
                                log_error=self.noise_log_error())



def _build(prm: Dict[str, Any]) -> Binomial:
    return Binomial(prm["trials"], prm.get("p", 0.5), prm.get("sensitivity", 1))


FAMILY = register(Family(
    name="binomial", types=(Binomial,),
    **FINITE_HOOKS,
    for_relation=doubled_under_substitution,
    cli=(CliKind("binomial", (("trials",),), ("p", "sensitivity"), (),
                 "binomial trials=1000 p=0.5",
                 "binomial mechanism, Bin(trials, p) noise (p default 0.5), integer "
                 "sensitivity (default 1)", _build, aliases=("binom",),
                 integers=("trials", "sensitivity")),),
    format=lambda m: f"binomial trials={m.trials} p={_g(m.p)}" + (
        "" if m.sensitivity == 1 else f" sensitivity={m.sensitivity}"),
    relations_note="P0 = Z + sensitivity; substitution doubles the sensitivity",
    extras={"integer_noise": True, "orientation": -1}))
