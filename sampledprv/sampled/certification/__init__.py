"""Certification: intervals that hold with probability ``1 - alpha``, from histograms.

The top layer of :mod:`sampledprv.sampled`: it imports from
:mod:`~sampledprv.sampled.histograms` and :mod:`~sampledprv.sampled.draws`.

* :mod:`.inputs` -- :class:`~.inputs.LogDensityPair` and
  :class:`~.inputs.PrivacyLossSampler`, the user descriptions the accountant accepts
  (checked by :mod:`.input_checks`);
* :mod:`.tails` -- :class:`~.tails.TailBound`, the unseen tail by Chernoff's inequality;
  :mod:`.tail_inputs` (Renyi bounds and loss ranges as given) and :mod:`.tail_sources`
  (combined per mechanism);
* :mod:`.envelopes` -- stochastic-dominance envelopes with Clopper-Pearson bounds;
* :mod:`.seed_method` -- the GG paper's SampledComposePRV (Theorem 6);
* :mod:`.twolevel` -- the bins rule and two-level composition of long runs;
* :mod:`.histogram_bank` -- the histograms of a composition: seeds, shards, cache;
* :mod:`.accountant` -- :class:`~.accountant.SampledAccountant`;
* :mod:`.floor` -- the sample floor (:func:`~.floor.min_samples`);
* :mod:`.prediction`, :mod:`.planner` -- the width and time of a run before doing it.
"""

from . import subsampled_inputs as _subsampled_inputs  # noqa: F401  (registers the user-pair hooks)
