"""sampledprv: certified privacy accounting for any mechanism.

Analytic mechanisms are accounted deterministically (:class:`Accountant`); mechanisms
given by log-densities or samplers are accounted from samples of their privacy
loss with intervals valid with a stated probability (:class:`SampledAccountant`).
Conventions are those of ``shared/DESIGN.md``: privacy loss ``log p/q`` under ``P``,
add/remove neighbours with both directions accounted, ``GG(beta, scale)`` density
proportional to ``exp(-|x/scale|^beta)``.
"""

from .interval import Interval
from .mechanisms import (
    ApproxDP, GGNMax, Gaussian, GeneralizedGaussian, Laplace, Mechanism,
    PoissonSubsampled, PureDP, RandomizedResponse,
)

__version__ = "0.1.0"

# --- core accountant (issue 2) ---
from .accountant import Accountant
# --- sampled accountant (issue 3) ---
from .sampled import (EmpiricalPRV, LogDensityPair, PrivacyLossSampler, SampledAccountant,
                      ValidationReport, min_samples, plan_samples, validate)
# --- Generalized Gaussian tools (issue 4) ---
from .calibration import Calibration, calibrate, calibrate_generalized_gaussian
from .ggnmax import generalized_gaussian_noise, ggnmax
from .gg_tails import TailTable, calibrated_tail_weights, plot_tail_weights, tail_weight
from .gg_dimension import spread_epsilons, spread_lower_bound

__all__ = [
    # results and specs
    "Interval", "Mechanism", "Gaussian", "Laplace", "GeneralizedGaussian", "GGNMax",
    "RandomizedResponse", "PureDP", "ApproxDP", "PoissonSubsampled",
    # accountants
    "Accountant", "SampledAccountant",
    # sampled inputs and tools
    "LogDensityPair", "PrivacyLossSampler", "EmpiricalPRV", "ValidationReport", "validate",
    "min_samples", "plan_samples",
    # Generalized Gaussian tools
    "Calibration", "calibrate", "calibrate_generalized_gaussian", "ggnmax",
    "generalized_gaussian_noise", "TailTable", "tail_weight", "calibrated_tail_weights",
    "plot_tail_weights", "spread_epsilons", "spread_lower_bound",
]


def __getattr__(name: str):
    # ``sampledprv.torch`` is imported lazily: ``import sampledprv`` must not import torch.
    if name == "torch":
        import importlib
        return importlib.import_module(".torch", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
