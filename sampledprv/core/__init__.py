"""The bottom layer of sampledprv: types every other layer shares, importing nothing
from the rest of the package.

* :mod:`~sampledprv.core.interval` -- :class:`Interval`, the certified result;
* :mod:`~sampledprv.core.contract` -- :class:`PrivacyAccountant`, the accountant ABC;
* :mod:`~sampledprv.core.advice` -- errors and warnings that name their remedy;
* :mod:`~sampledprv.core.validation` -- argument checks (``ValueError`` naming the argument);
* :mod:`~sampledprv.core.law` -- :class:`LossDistribution` (the law of a privacy loss),
  mixtures, loss pairs;
* :mod:`~sampledprv.core.subsampled_law` -- the Poisson-subsampled pair of any loss pair.
"""
