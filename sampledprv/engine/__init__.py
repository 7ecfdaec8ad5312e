"""Numerical engine: lattice distributions, FFT composition, privacy curves."""

from .lattice import LatticePMF
from .compose import ComposedPMF, compose_lattices
from .curve import delta_of_eps, eps_of_delta

__all__ = ["LatticePMF", "ComposedPMF", "compose_lattices", "delta_of_eps", "eps_of_delta"]
