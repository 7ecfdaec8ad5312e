"""Sampled privacy random variables: samplers, loss histograms, certified accounting.

Three layers, each importing only from the ones before it:

* :mod:`~sampledprv.sampled.draws` -- random numbers and exact samplers (xoshiro RNG,
  ziggurat, GG and adaptive rejection samplers, the compiled privacy-loss draws of the
  built-in specs, the torch draws);
* :mod:`~sampledprv.sampled.histograms` -- draws binned into loss histograms (the fused
  kernels, the numpy path, the window, sharding and checkpoints, empirical PRVs,
  Monte Carlo validation of an analytic law);
* :mod:`~sampledprv.sampled.certification` -- certified intervals from histograms (tail
  bounds, envelopes, the seed method, two-level composition, the accountant, the sample
  floor, width prediction and planning, the user inputs it accepts).
"""

# --- stale compiled kernels (sources changed since they were cached) are dropped first ---
# (the whole package: the kernels inline the samplers of families from mechanisms/ too)
from pathlib import Path as _Path

from ._numba_cache import purge_stale as _purge_stale

_purge_stale(_Path(__file__).resolve().parent.parent)

# --- draws and histograms ---
from .histograms.histogram import LossHistogram
from .histograms.kernels import loss_histogram
from .draws.samplers import make_rejection_sampler
from .draws.ars import AdaptiveRejectionSampler

# --- accounting from samples (inputs, empirical PRVs, certification) ---
from .certification.inputs import LogDensityPair, PrivacyLossSampler
from .histograms.empirical import EmpiricalPRV
from .certification.floor import min_samples
from .certification.planner import plan_samples
from .certification.accountant import SampledAccountant
from .histograms.validate import ValidationReport, validate

__all__ = ["LossHistogram", "loss_histogram", "make_rejection_sampler",
           "AdaptiveRejectionSampler", "LogDensityPair", "PrivacyLossSampler", "EmpiricalPRV",
           "min_samples", "plan_samples", "SampledAccountant", "ValidationReport", "validate"]
