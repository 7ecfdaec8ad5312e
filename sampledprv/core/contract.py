r"""The accountant contract: what every accountant offers, checked by type, not by ``hasattr``.

Both :class:`sampledprv.Accountant` (deterministic certificates) and
:class:`sampledprv.SampledAccountant` (probabilistic certificates) subclass
:class:`PrivacyAccountant`; calibration, plotting and the command line accept any
instance of it.  A third-party accountant joins by subclassing (or by
``PrivacyAccountant.register(cls)``).

Queries
-------
``epsilon(delta, direction=None)`` and ``delta(epsilon, direction=None)`` return an
:class:`~sampledprv.Interval`.  With ``direction=None`` they answer the maximum over
both directions (the usual definition of :math:`(\varepsilon, \delta)`-DP);
``direction="remove"`` or ``"add"`` (or :class:`~sampledprv.Direction`) answers one
hockey-stick divergence only, as some papers report.
"""

from __future__ import annotations

import abc
from typing import Any, Dict, Optional, Tuple

from .interval import Interval

__all__ = ["PrivacyAccountant"]


class PrivacyAccountant(abc.ABC):
    """Abstract accountant: compose mechanisms, then ask for certified intervals."""

    @abc.abstractmethod
    def compose(self, mechanism: Any, count: int = 1) -> "PrivacyAccountant":
        """Add ``count`` runs of ``mechanism``; returns ``self`` so calls chain.

        Raises :class:`ValueError` (or :class:`TypeError` for objects of the wrong
        kind) when the accountant cannot account ``mechanism``."""

    @property
    @abc.abstractmethod
    def composition(self) -> Tuple[Tuple[Any, int], ...]:
        """The composed ``(mechanism, count)`` pairs, in order of first use."""

    @abc.abstractmethod
    def epsilon(self, delta: float, direction: Optional[Any] = None) -> Interval:
        r"""Certified interval on :math:`\varepsilon(\delta)`."""

    @abc.abstractmethod
    def delta(self, epsilon: float, direction: Optional[Any] = None) -> Interval:
        r"""Certified interval on :math:`\delta(\varepsilon)`."""

    @abc.abstractmethod
    def describe(self) -> str:
        """How this accountant computes its intervals, in a few human-readable lines."""

    @abc.abstractmethod
    def settings(self) -> Dict[str, Any]:
        """The accountant's type and settings as a JSON-ready dict (``{"type": ...}``)."""

    @abc.abstractmethod
    def supports(self, mechanism: Any) -> bool:
        """True when :meth:`compose` accepts ``mechanism`` under this accountant's
        neighbouring relation (no sampling or discretization is done)."""

    # ---- trade-off curves (f-DP), mu-GDP and audits: sampledprv/core/tradeoff.py -------------
    # Concrete methods built on ``delta(epsilon, direction)``; an accountant may override
    # them with a faster path.  Derivation: design notes, "Trade-off curves and audits".
    def tradeoff(self, fpr: Any, direction: Optional[Any] = None, **kwargs: Any) -> Any:
        """Certified intervals on the attacker's best true-positive rate at the
        false-positive rates ``fpr`` (:func:`sampledprv.core.tradeoff.tradeoff`)."""
        return _tradeoff_module().tradeoff(self, fpr, direction, **kwargs)

    def tradeoff_curve(self, fpr: Any = None, direction: Optional[Any] = None,
                       **kwargs: Any) -> Any:
        """Certified lower and upper trade-off functions on a grid
        (:func:`sampledprv.core.tradeoff.tradeoff_curve`)."""
        return _tradeoff_module().tradeoff_curve(self, fpr, direction, **kwargs)

    def gdp_mu(self, **kwargs: Any) -> Any:
        """Certified bracket on the mu-GDP parameter and the best-fit mu
        (:func:`sampledprv.core.tradeoff.gdp_mu`)."""
        return _tradeoff_module().gdp_mu(self, **kwargs)


def _tradeoff_module() -> Any:
    """:mod:`sampledprv.core.tradeoff`, imported on first use (it needs SciPy; the contract
    stays import-light)."""
    from . import tradeoff  # noqa: PLC0415
    return tradeoff
