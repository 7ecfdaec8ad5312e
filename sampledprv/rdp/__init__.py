"""Renyi differential privacy: divergence bounds of built-in specs, subsampling
amplification, composition and conversion to ``(epsilon, delta)``.

Every number is a certified **upper** bound (floating-point results rounded up):

* :func:`renyi_divergence` -- ``D_alpha`` of a spec in direction ``"remove"``
  (``D(P||Q)``) or ``"add"`` (``D(Q||P)``);
* :func:`epsilon_from_rdp`, :func:`delta_from_rdp` -- conversion (Canonne, Kamath &
  Steinke 2020, Prop. 12 / Balle et al. 2020, Thm 21);
* :class:`RdpAccountant` -- composition over a grid of orders.
"""

from .accountant import DEFAULT_ORDERS, RdpAccountant, rdp_curve
from .conversion import delta_from_rdp, epsilon_from_rdp
from .divergence import DIRECTIONS, register_divergence, renyi_divergence
from .gg_quadrature import gg_renyi_bounds
from .sampled_gaussian import sampled_gaussian_renyi
from .subsampled import subsampled_general_bound, subsampled_remove_bound

__all__ = [
    "renyi_divergence", "register_divergence", "DIRECTIONS", "epsilon_from_rdp",
    "delta_from_rdp", "RdpAccountant", "DEFAULT_ORDERS", "rdp_curve", "gg_renyi_bounds",
    "subsampled_remove_bound", "subsampled_general_bound", "sampled_gaussian_renyi",
]
