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
# --- Generalized Gaussian tools (issue 4) ---
