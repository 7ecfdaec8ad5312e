"""Draws: random numbers and exact samplers, compiled with Numba (and the torch draws).

The bottom layer of :mod:`sampledprv.sampled`: it imports nothing from
:mod:`~sampledprv.sampled.histograms` or :mod:`~sampledprv.sampled.certification`.

* :mod:`.rng` -- xoshiro256++ streams seeded from a ``SeedSequence``; uniform, normal,
  exponential and gamma variates (ziggurat);
* :mod:`.samplers` -- exact Generalized Gaussian samplers and jitted rejection samplers;
  :mod:`.ars` -- adaptive rejection sampling of log-concave densities;
* :mod:`._fastpow`, :mod:`._ggblock` -- block-wise GG draws and powers (the GG hot path);
* :mod:`._mechloss` -- the compiled privacy-loss draws of the built-in specs;
* :mod:`.hooks` -- the methods a user source implements (``loss_sampler``, ...);
* :mod:`.user_fills` -- user samplers and log-densities in kernel form as fills;
* :mod:`.torch_draws` -- the same losses drawn with torch on any device.
"""
