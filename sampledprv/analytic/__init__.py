"""The analytic accountant: exact privacy-loss laws discretized, composed by FFT, with
every error term certified (:class:`~sampledprv.analytic.accountant.Accountant`).

* :mod:`~sampledprv.analytic.accountant` -- :class:`Accountant` (planning, building,
  curves per direction and relation);
* :mod:`~sampledprv.analytic._online` -- online updates with a planned horizon;
* :mod:`~sampledprv.analytic._error_terms` -- the certified error terms of one curve.
"""

from .accountant import Accountant

__all__ = ["Accountant"]
