r"""GGNMax: private argmax of vote histograms with Generalized Gaussian noise (numpy).

GG paper, Algorithm 2 and Theorem 2: release :math:`\arg\max_j (v_j + Z_j)` with
:math:`Z_j \overset{iid}{\sim} GG(\beta, s)` (density :math:`\propto e^{-|z/s|^\beta}`,
``scipy.stats.gennorm(beta, scale=s)``).

Which accounting applies depends on the neighbouring relation:

* neighbouring histograms differ in **one** count by at most 1 (a teacher added or
  removed): ``sampledprv.GGNMax(beta, scale)``, the 1-D GG mechanism with sensitivity 1
  (Theorem 2);
* a record changes one teacher's **vote** (PATE with disjoint partitions): two counts move
  by one each, :math:`\Delta = (-1, +1)`.  The 1-D accounting then *under-states* the
  loss (two classes, ``beta = 2``, ``s = 2``: the argmax release has
  :math:`\delta(0) = 0.383`, the 1-D bound says 0.280).  The histogram release with this
  :math:`\Delta` is exactly two independent 1-D GG mechanisms, so account each answer as
  ``GeneralizedGaussian(beta, scale)`` composed twice (post-processing covers the argmax).
"""

from __future__ import annotations

import math
from typing import Sequence, Union

import numpy as np

from ..mechanisms import GeneralizedGaussian

__all__ = ["ggnmax", "generalized_gaussian_noise"]

RngLike = Union[None, int, "np.random.Generator", "np.random.SeedSequence"]


def generalized_gaussian_noise(shape: Union[int, Sequence[int]], beta: float, scale: float,
                               rng: RngLike = None) -> np.ndarray:
    r"""I.i.d. ``GG(beta, scale)`` draws: :math:`X = s\,G^{1/\beta} R`,
    :math:`G \sim \Gamma(1/\beta, 1)`, :math:`R = \pm 1` uniform (exact).

    ``rng`` is anything :func:`numpy.random.default_rng` accepts.
    """
    spec = GeneralizedGaussian(beta, scale)  # validates beta >= 1, scale > 0
    rng = np.random.default_rng(rng)
    if spec.beta == 2.0:
        return rng.standard_normal(shape) * (spec.scale / math.sqrt(2.0))
    if spec.beta == 1.0:
        return rng.laplace(0.0, spec.scale, shape)
    g = rng.standard_gamma(1.0 / spec.beta, shape)
    sign = np.where(rng.random(shape) < 0.5, -1.0, 1.0)
    return spec.scale * np.power(g, 1.0 / spec.beta) * sign


def ggnmax(votes, beta: float, scale: float, rng: RngLike = None):
    """Noisy argmax of ``votes`` along the last axis.

    Parameters
    ----------
    votes : array_like, shape ``(classes,)`` or ``(n, classes)``
        Vote counts (one row per query).
    beta, scale : float
        GG noise shape (``>= 1``) and scale (``> 0``).
    rng : seed or numpy Generator, optional

    Returns
    -------
    int or numpy.ndarray of int
        The private label: an ``int`` for one histogram, an array of shape ``(n,)`` for
        ``n`` histograms.  Ties (probability 0) go to the lowest index.
    """
    v = np.asarray(votes, dtype=float)
    if v.ndim not in (1, 2) or v.shape[-1] < 1:
        raise ValueError(f"votes must have shape (classes,) or (n, classes), got {v.shape}")
    if not np.all(np.isfinite(v)):
        raise ValueError("votes must be finite numbers")
    noisy = v + generalized_gaussian_noise(v.shape, beta, scale, rng)
    idx = np.argmax(noisy, axis=-1)
    return int(idx) if v.ndim == 1 else idx
