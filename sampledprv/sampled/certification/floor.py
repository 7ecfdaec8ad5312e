r"""The sample floor of the envelope method, and when it does not apply.

Why there is a floor.  Every histogram leaves a tail it has not seen: even with no draw
above the window, the Clopper-Pearson upper bound on :math:`P[Y \ge t_b]` is
:math:`1 - a^{1/n} \approx \ln(1/a)/n`, ``a`` the per-test level.  That mass goes to
:math:`+\infty` in :math:`Y_{up}`, and atoms at infinity compose additively:
the composed atom is :math:`1 - \prod_i (1 - U_{b,i})^{c_i} \approx k \ln(1/a)/n`.  Since
:math:`\delta(\varepsilon) \ge` the atom for every :math:`\varepsilon`, a finite upper bound
on :math:`\varepsilon(\delta)` needs

.. math:: n > n_{min} = \frac{k \ln(1/a)}{\delta}, \qquad a = \frac{\alpha}{H (2b + 3)},

with ``k`` the total number of compositions, ``H`` the number of distinct histograms
(mechanisms times directions) sharing ``alpha`` and ``b`` the bins per histogram
(roughly :math:`n \gtrsim k \ln((b+1)/\alpha)/\delta`).

When the floor does not apply.  A Renyi bound or a bounded loss range
(:mod:`sampledprv.sampled.certification.tails`) bounds the unseen tail deterministically: the upper
envelope follows the Chernoff tail beyond the window and leaves only a negligible mass
(about ``1e-16`` over the whole composition) at :math:`+\infty`, so every ``n`` gives a
finite bound and the width alone decides ``n`` (:func:`~.planner.plan_samples`
extrapolates it from a pilot run that uses the same tail bound).
"""

from __future__ import annotations

import math
from typing import Optional

from .envelopes import tests_per_histogram
from .tail_sources import tail_bound

__all__ = ["min_samples", "tail_source"]


def min_samples(k: int, delta: float, *, alpha: float = 1e-9, bins: int = 2**14,
                histograms: int = 2) -> int:
    r"""The ``n`` below which the envelope method cannot certify a finite
    :math:`\varepsilon(\delta)` for a ``k``-fold composition.

    Solves :math:`1 - (1 - u)^k = \delta` with :math:`u = 1 - a^{1/n}` (the upper
    Clopper-Pearson bound for zero counts), ``a = alpha / (histograms * (2 bins + 3))``.
    """
    if not 0 < delta < 1:
        raise ValueError(f"delta must lie in (0, 1), got {delta!r}")
    a = alpha / (histograms * tests_per_histogram(bins))
    u = -math.expm1(math.log1p(-delta) / k)      # largest per-mechanism atom allowed
    # 1 - a^(1/n) < u  <=>  n > ln(a) / ln(1 - u)
    return int(math.ceil(math.log(a) / math.log1p(-u)))


def tail_source(mechanism: object, *, renyi: object = None,
                loss_range: object = None) -> Optional[str]:
    """What bounds ``mechanism``'s unseen tail in every direction (None: nothing, the
    sample floor :func:`min_samples` applies); see :mod:`sampledprv.sampled.certification.tails`."""
    symmetric = bool(getattr(mechanism, "symmetric", False))
    tbs = [tail_bound(mechanism, d, renyi=renyi, loss_range=loss_range, symmetric=symmetric)
           for d in (("remove",) if symmetric else ("remove", "add"))]
    if any(tb is None or not (tb.has_renyi or math.isfinite(tb.hi)) for tb in tbs):
        return None
    return " / ".join(dict.fromkeys(tb.source for tb in tbs if tb is not None))
