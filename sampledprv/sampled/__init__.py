"""Sampled privacy random variables: samplers, loss-histogram kernels, certified accounting."""

# --- sampling hot path (xoshiro RNG, exact samplers, fused loss-histogram kernels) ---
from .kernels import LossHistogram, loss_histogram
from .samplers import make_rejection_sampler
from .ars import AdaptiveRejectionSampler

# --- accounting from samples (inputs, empirical PRVs, certification) ---
from .inputs import LogDensityPair, PrivacyLossSampler
from .empirical import EmpiricalPRV
from .planner import min_samples, plan_samples
from .accountant import SampledAccountant
from .validate import ValidationReport, validate
