"""Sampled privacy random variables: samplers, loss-histogram kernels, certified accounting."""

# --- accounting from samples (inputs, empirical PRVs, certification) ---
from .inputs import LogDensityPair, PrivacyLossSampler
from .empirical import EmpiricalPRV
from .planner import min_samples, plan_samples
from .accountant import SampledAccountant
