"""Histograms: privacy-loss draws binned on a window, exactly and reproducibly.

The middle layer of :mod:`sampledprv.sampled`: it imports from
:mod:`~sampledprv.sampled.draws` only, never from
:mod:`~sampledprv.sampled.certification`.

* :mod:`.histogram` -- :class:`~.histogram.LossHistogram` and exact operations on it;
* :mod:`.window` -- choosing and checking the window ``[lo, lo + bins h)``;
* :mod:`.kernels` -- the fused draw -> loss -> bin -> count kernels (:mod:`._binning`,
  :mod:`._pypath` for the Python sources, :mod:`._compile_notice`);
* :mod:`._numpy_histogram` -- the pure-numpy path (pilots, checks, reference);
* :mod:`.torch_histogram` -- the torch backend's binning on the device;
* :mod:`.sharding`, :mod:`.checkpoint` -- a histogram as a sum of shards, run on an
  executor or a Dask cluster, each shard saved atomically;
* :mod:`.empirical` -- :class:`~.empirical.EmpiricalPRV`, histograms of both directions;
* :mod:`.validate` -- Monte Carlo validation of an analytic law against a histogram.
"""
