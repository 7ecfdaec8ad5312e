r"""Accounting of shuffled batches: :class:`ShuffleAccountant`.

:class:`~sampledprv.Shuffled` has no known dominating pair (no tight upper bound on its
privacy curve is known), so it has its own accountant with the usual contract
(:class:`~sampledprv.core.contract.PrivacyAccountant`):

* the **lower** end is the analytic accountant's certified lower end of the composition
  of the attained pairs (Chua et al., ICML 2024, through the slices of
  :math:`\max_t X_t`; :mod:`sampledprv.mechanisms.shuffled`): no mechanism of this form
  is more private;
* the **upper** end is, by default, the certified upper end of the same composition
  with deterministic batches (one Gaussian release per epoch with the sensitivity of
  the relation), which bounds shuffling under substitution and zero-out by joint
  convexity over the permutation (module docstring of :mod:`sampledprv.mechanisms.shuffled`).
  It is loose: the gap between the two ends is the open question of shuffled accounting.
  ``upper="none"`` reports ``+inf`` instead (no tight upper end is known);
* the estimate is the lower end (the largest privacy loss known to be attained).

``details["deterministic_batches"]`` always holds the deterministic-batch interval and
``details["lower_pair"]`` the interval of the attained pair's composition, so both sides
of the range are visible.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

from ..core import validation as v
from ..core.contract import PrivacyAccountant
from ..core.interval import DETERMINISTIC, Interval
from ..mechanisms import Gaussian
from ..mechanisms.base import as_direction, as_relation
from ..mechanisms.shuffled import Shuffled, ShuffleSlicePair
from .accountant import Accountant

__all__ = ["ShuffleAccountant"]

_UPPER = ("deterministic", "none")


class ShuffleAccountant(PrivacyAccountant):
    r"""Certified range of the privacy of DP-SGD with shuffled batches.

    Parameters
    ----------
    neighbouring : {"add_remove", "substitute"}
        ``"substitute"``: a record replaced; ``"add_remove"`` is read as zero-out (a
        record replaced by a null record contributing 0), the add/remove relation of
        fixed-size batches (:mod:`sampledprv.mechanisms.shuffled`).
    upper : {"deterministic", "none"}
        Upper end: the deterministic-batch bound (default; valid, loose) or ``+inf``.
    eps_error, delta_error : float
        Accuracy targets of the inner analytic accountants
        (:class:`sampledprv.Accountant`); the lower end uses ``eps_error / 10``.

    Examples
    --------
    >>> import sampledprv as sp
    >>> acc = sp.ShuffleAccountant().compose(sp.Shuffled(sigma=1.0, steps=100), count=10)
    >>> iv = acc.epsilon(1e-5)      # doctest: +SKIP
    """

    def __init__(self, neighbouring: object = "add_remove", upper: str = "deterministic",
                 eps_error: float = 0.01, delta_error: float = 1e-10) -> None:
        self.neighbouring = as_relation(neighbouring)
        if upper not in _UPPER:
            raise ValueError(f"upper must be one of {_UPPER}, got {upper!r}")
        self.upper = upper
        self.eps_error = v.positive("eps_error", eps_error)
        self.delta_error = v.positive("delta_error", delta_error)
        self._entries: Dict[Shuffled, int] = {}

    def compose(self, mechanism: Any, count: int = 1) -> "ShuffleAccountant":
        """Add ``count`` epochs of ``mechanism`` (a :class:`~sampledprv.Shuffled`)."""
        if not isinstance(mechanism, Shuffled):
            raise ValueError(f"ShuffleAccountant accounts sp.Shuffled specs only, got "
                             f"{mechanism!r}; compose other mechanisms with sp.Accountant")
        count = v.positive_int("count", count)
        self._entries[mechanism] = self._entries.get(mechanism, 0) + count
        return self

    @property
    def composition(self) -> Tuple[Tuple[Any, int], ...]:
        return tuple(self._entries.items())

    def supports(self, mechanism: Any) -> bool:
        return isinstance(mechanism, Shuffled)

    def settings(self) -> Dict[str, Any]:
        return {"type": "shuffle", "neighbouring": self.neighbouring.value,
                "upper": self.upper, "eps_error": self.eps_error,
                "delta_error": self.delta_error}

    def describe(self) -> str:
        rel = ("substitution" if self.neighbouring.value == "substitute"
               else "zero-out (add/remove with fixed batch sizes)")
        return "\n".join([
            f"ShuffleAccountant(neighbouring={self.neighbouring.value!r}, upper={self.upper!r}):"
            f" {sum(self._entries.values()):,} epochs, {len(self._entries)} distinct",
            f"lower end: Chua et al. (ICML 2024) attained pair under {rel}, max-statistic "
            "slices, analytic accountant's certified lower end",
            "upper end: " + ("deterministic batches (joint convexity over the permutation)"
                             if self.upper == "deterministic" else
                             "+inf (no dominating pair of shuffled batches is known)")])

    # ---- the two inner compositions ------------------------------------------------------
    def _accountants(self) -> Tuple[Any, Any]:
        if not self._entries:
            raise ValueError("nothing composed yet: call compose(sp.Shuffled(...), epochs)")
        low = Accountant(eps_error=self.eps_error / 10, delta_error=self.delta_error)
        det = Accountant(eps_error=self.eps_error, delta_error=self.delta_error)
        for spec, epochs in self._entries.items():
            m_p, m_q = spec.shifts(self.neighbouring)
            low.compose(ShuffleSlicePair(m_p / spec.sigma, m_q / spec.sigma, spec.steps), epochs)
            det.compose(Gaussian(spec.sigma, spec.deterministic_sensitivity(self.neighbouring)),
                        epochs)
        return low, det

    def _combine(self, low: Interval, det: Interval, cap: float) -> Interval:
        rel = self.neighbouring.value
        adj = ("substitution (a record replaced)" if rel == "substitute" else
               "zero-out (a record replaced by a null record; the fixed-batch form of "
               "add/remove)")
        lower = float(low.lower)
        if self.upper == "deterministic":
            upper = max(float(det.upper), lower)
            up_words = (f"upper end: deterministic batches, a proved but loose bound for "
                        f"shuffling under {adj} (joint convexity over the permutation); no "
                        "dominating pair of shuffled batches is known")
        else:
            upper = cap
            up_words = ("upper end: none (+inf): no dominating pair of shuffled batches is "
                        f"known; deterministic batches bound it under {adj}, see "
                        "details['deterministic_batches']")
        method = (f"lower end: certified lower end of the attained pair of Chua et al. "
                  f"(ICML 2024, arXiv 2403.17673) under {adj}, max-statistic slices "
                  f"({low.method}); {up_words}; estimate: the lower end")
        return Interval(lower, lower, upper, DETERMINISTIC, 1.0, method,
                        {"deterministic_batches": det, "lower_pair": low,
                         "neighbouring": rel})

    def epsilon(self, delta: float, direction: Optional[Any] = None) -> Interval:
        r"""Certified range of :math:`\varepsilon(\delta)` (module docstring)."""
        if direction is not None:
            as_direction(direction)
        low, det = self._accountants()
        return self._combine(low.epsilon(delta, direction), det.epsilon(delta, direction),
                             float("inf"))

    def delta(self, epsilon: float, direction: Optional[Any] = None) -> Interval:
        r"""Certified range of :math:`\delta(\varepsilon)` (module docstring)."""
        if direction is not None:
            as_direction(direction)
        low, det = self._accountants()
        return self._combine(low.delta(epsilon, direction), det.delta(epsilon, direction), 1.0)

    def __repr__(self) -> str:
        parts = ", ".join(f"{m!r} x{c}" for m, c in self._entries.items())
        return f"ShuffleAccountant({self.neighbouring.value!r}; {parts or 'nothing composed'})"
