"""Generalized Gaussian tools (their public names are re-exported by ``sampledprv``).

* :mod:`~sampledprv.gg.vector` -- :class:`VectorGGAccountant` for
  :class:`GeneralizedGaussianVector` (Renyi upper bound, spread lower bounds);
* :mod:`~sampledprv.gg.vector_lower` -- the spread lower bound under Poisson subsampling;
* :mod:`~sampledprv.gg.dimension` -- how the sensitivity spreads over coordinates;
* :mod:`~sampledprv.gg.tails` -- tail weights of calibrated GG noise;
* :mod:`~sampledprv.gg.noisy_max` -- ``ggnmax`` (report-noisy-max with GG noise);
* :mod:`~sampledprv.gg.dpsgd_accounting` -- the DP-SGD helpers (step spec, accountant,
  scale calibration).

This ``__init__`` imports nothing, so ``import sampledprv`` (which needs ``ggnmax``) stays
cheap.
"""
