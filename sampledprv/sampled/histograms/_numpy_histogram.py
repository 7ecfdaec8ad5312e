r"""Pure-numpy loss histograms: the slow path.

Used for mechanisms the compiled kernels (:mod:`sampledprv.sampled.histograms.kernels`) do not
handle -- in particular user callables that are not Numba-jitted -- and as a
reference implementation in tests.  Same signature and same :class:`~.histogram.LossHistogram`
as the kernels; reproducible for a given ``seed`` and ``chunk_size`` (not bit-identical
to the compiled kernels).

Privacy losses of the analytic specs (conventions of ``docs/concepts.md``, "Directions and neighbouring datasets"):

* Gaussian: :math:`Y \sim N(\mu^2/2, \mu^2)`, :math:`\mu` = sensitivity/sigma;
* Laplace / GG: :math:`Y = (|x - D|^\beta - |x|^\beta)/s^\beta`, :math:`x \sim GG(\beta, s)`;
* randomized response / pure DP: :math:`\pm\varepsilon` w.p. ``p``, ``1-p``;
  approximate DP: ``+inf`` w.p. ``delta``, else randomized response;
* Poisson subsampling at rate ``q`` (pair :math:`((1-q)Q_0 + qP_0, Q_0)`):
  remove :math:`Y = \log(1 - q + q e^{\ell_0(w)})`, ``w`` from the mixture;
  add :math:`-\log(1 - q + q e^{\ell_0(w)})`, :math:`w \sim Q_0`.
"""

from __future__ import annotations

from typing import Callable, Optional

import numpy as np

from ...mechanisms.base import as_direction
from ...mechanisms.numpy_losses import spec_loss_sampler

__all__ = ["loss_histogram", "numpy_loss_sampler", "histogram_of_samples"]

from ...core.progress import check_progress, tqdm_or_none
from ..draws.hooks import NUMPY_LOSS_SAMPLER, find_hook
from .histogram import LossHistogram

Sampler = Callable[[np.random.Generator, int], np.ndarray]


def numpy_loss_sampler(mechanism: object, direction: str) -> Sampler:
    """``f(rng, size)`` drawing privacy losses of ``mechanism`` in ``direction``: the
    object's own ``numpy_loss_sampler`` hook, else the spec's family samplers
    (:func:`sampledprv.mechanisms.numpy_losses.spec_loss_sampler`)."""
    direction = as_direction(direction).value
    hook = find_hook(mechanism, NUMPY_LOSS_SAMPLER)
    if hook is not None:
        return hook(direction)
    return spec_loss_sampler(mechanism, direction)


def histogram_of_samples(y: np.ndarray, lo: float, h: float, bins: int) -> LossHistogram:
    """Bin the samples ``y`` (``+-inf`` counted separately, never dropped)."""
    y = np.asarray(y, dtype=np.float64)
    if np.isnan(y).any():
        raise ValueError("privacy-loss samples contain NaN")
    pos, neg = int(np.sum(y == np.inf)), int(np.sum(y == -np.inf))
    fin = y[np.isfinite(y)]
    idx = np.floor((fin - lo) / h)
    below = int(np.sum(idx < 0))
    above = int(np.sum(idx >= bins))
    inside = idx[(idx >= 0) & (idx < bins)].astype(np.int64)
    counts = np.bincount(inside, minlength=bins).astype(np.int64)
    return LossHistogram(counts, below, above, pos, neg, int(y.size), float(lo), float(h))


def loss_histogram(mechanism: object, *, direction: str, n: int, lo: float, h: float,
                   bins: int, seed: Optional[object] = None, chunk_size: int = 1 << 20,
                   n_threads: Optional[int] = None, progress: Optional[bool] = None
                   ) -> LossHistogram:
    """Histogram of ``n`` privacy-loss samples on ``bins`` bins of width ``h`` from ``lo``.

    Same contract as :func:`sampledprv.sampled.histograms.kernels.loss_histogram`; runs in numpy,
    chunk by chunk (memory flat in ``n``).  ``n_threads`` is ignored.
    """
    draw = numpy_loss_sampler(mechanism, direction)
    ss = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    rng = np.random.default_rng(ss)
    total = None
    done = 0
    bar = None
    check_progress(progress)
    tqdm = tqdm_or_none()   # None: tqdm missing, progress is then automatic (checked above)
    if tqdm is not None and (progress or (progress is None and n > 20 * chunk_size)):
        bar = tqdm(total=n, unit="samples", unit_scale=True, desc=f"sampling ({direction})")
    while done < n:
        m = min(chunk_size, n - done)
        hist = histogram_of_samples(draw(rng, m), lo, h, bins)
        total = hist if total is None else total + hist
        done += m
        if bar is not None:
            bar.update(m)
    if bar is not None:
        bar.close()
    assert total is not None
    return total
