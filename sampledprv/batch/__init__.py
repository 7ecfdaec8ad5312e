r"""Batch samplers of private training whose privacy loss has no closed form.

* :class:`RandomAllocation` -- every record takes part in exactly ``selected`` of the
  ``steps`` steps of an epoch (Feldman and Shenfeld, arXiv 2502.08202);
  :class:`BallsAndBins` is ``selected = 1`` (Chua et al., AISTATS 2025, arXiv 2412.16802).
  Accounted by :class:`~sampledprv.SampledAccountant` from their dominating pair, with
  proven Renyi bounds for the unseen tail (design notes, "Batch samplers").

The layer sits above :mod:`sampledprv.sampled` and :mod:`sampledprv.rdp`: a spec here
brings its own fused Numba sampler (:mod:`sampledprv.sampled.draws.allocation`), its
conditional sampler and its Renyi bounds (:mod:`sampledprv.rdp.allocation`), and
registers its family and command-line kinds when this package is imported; the registry
declares them (:data:`sampledprv.mechanisms.registry.DEFERRED`) and imports this package
on the first lookup that needs them (a listing of the families or kinds, one of its kind
names), so what was imported first does not matter.
* :class:`MatrixMechanism` -- a whole matrix-factorization (DP-FTRL, banded MF) run
  :math:`y = Cx + N(0, \sigma^2 I)` under :class:`FixedBin`, :class:`CyclicPoisson`,
  :class:`BMinSep` or :class:`EpochBin` sampling (design notes, "Matrix-factorization training").

Shuffled batches, which have no dominating pair, are :class:`sampledprv.Shuffled` with
:class:`sampledprv.ShuffleAccountant`.
"""

from .random_allocation import BallsAndBins, NoClosedFormError, RandomAllocation
from .matrix_mechanism import BMinSep, CyclicPoisson, EpochBin, FixedBin, MatrixMechanism

__all__ = ["RandomAllocation", "BallsAndBins", "NoClosedFormError", "MatrixMechanism",
           "FixedBin", "CyclicPoisson", "BMinSep", "EpochBin"]
