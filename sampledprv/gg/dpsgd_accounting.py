r"""Accounting of beta-DP-SGD runs (torch-free; used by :mod:`sampledprv.torch`).

One step of beta-DP-SGD with Poisson rate ``q``, :math:`\ell_\beta` clip norm ``C`` and
i.i.d. :math:`GG(\beta, sC)` noise on each of the ``d`` parameters is
``PoissonSubsampled(GeneralizedGaussianVector(beta, s, d), q)`` (sensitivity 1 in units
of ``C``).  Two accountings are offered:

* ``accounting="vector"`` (default): the worst case over the :math:`\ell_\beta` ball in
  ``d`` dimensions, a certified interval (:class:`sampledprv.VectorGGAccountant`); exact
  PLD at ``beta = 2``;
* ``accounting="paper-1d"``: the GG paper's accounting (App. B.2), one 1-D GG per step.
  It is the exact value for a one-hot sensitivity vector, hence a *lower* bound on the
  worst case, and for ``beta != 2`` **not** a worst-case certificate; every interval it
  returns says so in its ``method``.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Optional

from ..calibration import Calibration, calibrate
from ..core.interval import Interval
from ..mechanisms import GeneralizedGaussian, Mechanism, PoissonSubsampled
from .vector import GeneralizedGaussianVector
from .vector import VectorGGAccountant
from ..analytic.accountant import Accountant

__all__ = ["ACCOUNTINGS", "check_accounting", "step_spec", "make_accountant",
           "label", "calibrate_scale", "PAPER_LABEL"]

ACCOUNTINGS = ("vector", "paper-1d")
PAPER_LABEL = ("GG paper 1-D accounting (one-hot sensitivity vector): NOT a worst-case "
               "certificate for beta != 2 in more than one dimension; ")


def check_accounting(accounting: str) -> str:
    """Validate ``accounting``."""
    if accounting not in ACCOUNTINGS:
        raise ValueError(f"accounting must be 'vector' (worst case over the l_beta ball, "
                         f"certified) or 'paper-1d' (the GG paper's 1-D number, not a "
                         f"worst-case certificate for beta != 2); got {accounting!r}")
    return accounting


def step_spec(beta: float, scale: float, sample_rate: float, *, dimension: Optional[int],
              accounting: str = "vector") -> Mechanism:
    """The spec of one step (sensitivity 1, ``scale`` in units of the clip norm).  At
    ``beta = 2`` both accountings give the 1-D ``GeneralizedGaussian`` (exact: the
    Gaussian is rotation invariant), which the online PLD accountant takes."""
    check_accounting(accounting)
    if accounting == "vector" and float(beta) != 2.0:
        base: Mechanism = GeneralizedGaussianVector(beta, scale, dimension, 1.0)
    else:
        base = GeneralizedGaussian(beta, scale)
    return base if float(sample_rate) == 1.0 else PoissonSubsampled(base, sample_rate)


def make_accountant(accounting: str, beta: float,
                    factory: Optional[Callable[[], Any]] = None, *,
                    upper_only: bool = False) -> Any:
    """A fresh accountant for the chosen accounting (``factory`` overrides).

    ``upper_only``: the caller reads only the upper end (calibration), so the vector
    accountant's lower end uses the one-hot vector alone instead of every spread."""
    if factory is not None:
        return factory()
    if check_accounting(accounting) == "vector" and float(beta) != 2.0:
        return VectorGGAccountant(spreads=(1,) if upper_only else None)
    return Accountant()


def label(interval: Interval, accounting: str, beta: float) -> Interval:
    """Mark a ``paper-1d`` interval for ``beta != 2`` as not a worst-case certificate."""
    if accounting == "paper-1d" and float(beta) != 2.0:
        return dataclasses.replace(interval, method=PAPER_LABEL + interval.method)
    return interval


def calibrate_scale(beta: float, *, epsilon: float, delta: float, steps: int,
                    sample_rate: float, dimension: Optional[int],
                    accounting: str = "vector", accountant: Any = None,
                    rtol: float = 5e-3) -> Calibration:
    """Smallest GG scale (units of the clip norm) whose certified upper epsilon after
    ``steps`` steps is at most ``epsilon`` (:func:`sampledprv.calibrate`).  With
    ``accounting="vector"`` the certificate covers the whole :math:`\\ell_\\beta` ball in
    ``dimension`` dimensions."""
    check_accounting(accounting)
    factory = accountant if accountant is not None else (
        lambda: make_accountant(accounting, beta, upper_only=True))
    return calibrate(lambda s: step_spec(beta, s, sample_rate, dimension=dimension,
                                         accounting=accounting),
                     count=steps, epsilon=epsilon, delta=delta, accountant=factory,
                     bracket=(0.5, 4.0), rtol=rtol)
