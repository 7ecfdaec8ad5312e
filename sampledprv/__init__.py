"""sampledprv: certified privacy accounting for any mechanism.

Analytic mechanisms are accounted deterministically (:class:`Accountant`); mechanisms
given by log-densities or samplers are accounted from samples of their privacy
loss with intervals valid with a stated probability (:class:`SampledAccountant`).
Conventions are those of the design notes (``docs/design-notes.md``): privacy loss
``log p/q`` under ``P``, add/remove neighbours with both directions accounted,
``GG(beta, scale)`` density proportional to ``exp(-|x/scale|^beta)``.

``import sampledprv`` is cheap: the specs and :class:`Interval` are imported eagerly,
everything that needs SciPy's statistics/FFT modules or Numba (the accountants, the
sampling kernels, the Generalized Gaussian tools) is imported on first attribute access.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .core.interval import Interval
from . import mechanisms as _mechanisms
from .mechanisms import (
    ApproxDP, Direction, GGNMax, Gaussian, GeneralizedGaussian, Laplace, Mechanism,
    NeighbouringRelation, PoissonSubsampled, PureDP, RandomizedResponse,
)
# every spec of sampledprv.mechanisms (one module per family, found there) is sp.<Spec>
globals().update({_n: getattr(_mechanisms, _n) for _n in _mechanisms.SPECS})
from .core.contract import PrivacyAccountant
# eager (cheap: numpy only)
from .gg.noisy_max import generalized_gaussian_noise, ggnmax

from .core.version import __version__


def _no_terminal_reset_at_exit() -> None:
    """Keep Numba's colour library from writing ``ESC[0m`` to the terminal at exit.

    Numba colours its compiler errors with colorama, whose ``init()`` registers an exit
    hook that writes the reset code to ``stdout`` when it is a terminal: a stray
    ``ESC[0m`` after the output of every run that compiled a kernel.  sampledprv writes
    no colour, so the hook is marked as done (``init()`` then registers nothing) and
    removed if it was registered already.  Nothing happens without colorama."""
    try:
        import atexit
        import colorama.initialise as _ci
    except ImportError:
        return
    if hasattr(_ci, "reset_all"):
        atexit.unregister(_ci.reset_all)
        _ci.atexit_done = True


_no_terminal_reset_at_exit()

# Public name -> submodule that defines it (imported on first access, PEP 562).
_LAZY: dict[str, str] = {
    # accountants
    "Accountant": ".analytic",
    "SampledAccountant": ".sampled",
    # batch samplers without a closed-form loss (sampled accountant)
    "RandomAllocation": ".batch",
    "BallsAndBins": ".batch",
    "MatrixMechanism": ".batch",
    "FixedBin": ".batch",
    "CyclicPoisson": ".batch",
    "BMinSep": ".batch",
    "EpochBin": ".batch",
    "ShuffleAccountant": ".analytic.shuffle",
    # sampled inputs and tools
    "EmpiricalPRV": ".sampled",
    "LogDensityPair": ".sampled",
    "PrivacyLossSampler": ".sampled",
    "ValidationReport": ".sampled",
    "min_samples": ".sampled",
    "plan_samples": ".sampled",
    "validate": ".sampled",
    # Generalized Gaussian tools
    "Calibration": ".calibration",
    "calibrate": ".calibration",
    "calibrate_generalized_gaussian": ".calibration",
    "TailTable": ".gg.tails",
    "calibrated_tail_weights": ".gg.tails",
    "plot_tail_weights": ".gg.tails",
    "tail_weight": ".gg.tails",
    "spread_epsilons": ".gg.dimension",
    "spread_lower_bound": ".gg.dimension",
    "GeneralizedGaussianVector": ".gg.vector",
    "VectorGGAccountant": ".gg.vector",
    # trade-off curves and audits
    "TradeoffCurve": ".core.tradeoff",
    "GDPBracket": ".core.tradeoff",
    "Audit": ".core.auditing",
    "AuditResult": ".core.auditing",
    "audit": ".core.auditing",
    # claim checks, groups and filters
    "check_claim": ".claims",
    "ClaimResult": ".claims",
    "Group": ".mechanisms.group",
    "UserLevelReport": ".claims",
    "user_level": ".claims",
    "group_epsilon": ".claims",
    "RenyiFilter": ".rdp.filters",
    "IndividualRenyiFilter": ".rdp.filters",
    "GaussianDPFilter": ".rdp.filters",
    "RenyiOdometer": ".rdp.filters",
    # interoperability (dp-accounting events in and out)
    "from_dp_event": ".interop",
    "to_dp_event": ".interop",
}

if TYPE_CHECKING:  # static analysers and IDEs see the eager form
    from .analytic.accountant import Accountant
    from .calibration import Calibration, calibrate, calibrate_generalized_gaussian
    from .gg.dimension import spread_epsilons, spread_lower_bound
    from .gg.vector import GeneralizedGaussianVector, VectorGGAccountant
    from .gg.tails import TailTable, calibrated_tail_weights, plot_tail_weights, tail_weight
    from .analytic.shuffle import ShuffleAccountant
    from .batch import BallsAndBins, BMinSep, CyclicPoisson, EpochBin, FixedBin, \
        MatrixMechanism, RandomAllocation
    from .interop import from_dp_event, to_dp_event
    from .sampled import (EmpiricalPRV, LogDensityPair, PrivacyLossSampler,
                          SampledAccountant, ValidationReport, min_samples, plan_samples,
                          validate)

__all__ = [
    # results and specs
    "Interval", "Mechanism", "Gaussian", "Laplace", "GeneralizedGaussian", "GGNMax",
    "RandomizedResponse", "PureDP", "ApproxDP", "PoissonSubsampled",
    "Direction", "NeighbouringRelation",
    # accountants
    "PrivacyAccountant", "Accountant", "SampledAccountant", "ShuffleAccountant",
    # sampled inputs and tools
    "LogDensityPair", "PrivacyLossSampler", "EmpiricalPRV", "ValidationReport", "validate",
    "min_samples", "plan_samples",
    # Generalized Gaussian tools
    "Calibration", "calibrate", "calibrate_generalized_gaussian", "ggnmax",
    "generalized_gaussian_noise", "TailTable", "tail_weight", "calibrated_tail_weights",
    "plot_tail_weights", "spread_epsilons", "spread_lower_bound",
    "GeneralizedGaussianVector", "VectorGGAccountant",
    # trade-off curves and audits
    "TradeoffCurve", "GDPBracket", "Audit", "AuditResult", "audit",
    # claim checks
    "check_claim", "ClaimResult", "Group", "UserLevelReport", "user_level", "group_epsilon",
    "RenyiFilter", "IndividualRenyiFilter", "GaussianDPFilter", "RenyiOdometer",
    # interoperability
    "from_dp_event", "to_dp_event",
    # batch samplers
    "RandomAllocation", "BallsAndBins", "MatrixMechanism", "FixedBin", "CyclicPoisson",
    "BMinSep", "EpochBin",
]
__all__ += [_n for _n in _mechanisms.SPECS if _n not in __all__]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is not None:
        value = getattr(importlib.import_module(module, __name__), name)
        globals()[name] = value  # later accesses skip this hook
        return value
    # ``sampledprv.torch`` is imported lazily too: ``import sampledprv`` never imports torch.
    if name == "torch":
        return importlib.import_module(".torch", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
