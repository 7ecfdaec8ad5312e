"""Python side of the sampling loop: the numpy fallback path."""

from __future__ import annotations

from typing import Callable, Optional

import numpy as np

from ._binning import bin_losses

__all__ = ["python_histogram", "FALLBACK_BLOCK"]

FALLBACK_BLOCK = 1 << 16   #: draws per numpy Generator in the Python fallback path


def python_histogram(mechanism, sample, direction: str, n: int, lo: float, h: float,
                     bins: int, root: np.random.SeedSequence,
                     on_draws: Optional[Callable[[int], None]] = None
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Counts and extra counters of ``n`` losses from a Python ``sample(rng, size)``.

    Fixed blocks of :data:`FALLBACK_BLOCK` draws, block ``b`` from
    ``default_rng(SeedSequence(seed) child b)``, so results do not depend on any chunk
    size; shapes and NaN are checked block by block.  ``on_draws(k)`` is called after
    each block with its number of draws (the caller's progress bar, if any).
    """
    hist = np.zeros((1, bins), dtype=np.int64)
    extra = np.zeros((1, 5), dtype=np.int64)
    name = getattr(sample, "__qualname__", repr(sample))
    b = 0
    start = 0
    while start < n:
        size = min(FALLBACK_BLOCK, n - start)
        child = np.random.SeedSequence(root.entropy,
                                       spawn_key=tuple(root.spawn_key) + (b,),
                                       pool_size=root.pool_size)
        y = np.asarray(sample(np.random.default_rng(child), size))
        if y.shape != (size,):
            raise ValueError(
                f"loss sampler {name} of {mechanism!r} returned shape {y.shape} for "
                f"size={size}; it must return a 1-D array of {size} privacy losses")
        y = np.ascontiguousarray(y, dtype=np.float64)
        first_nan = bin_losses(y, lo, h, hist, extra)
        if first_nan >= 0:
            raise ValueError(
                f"loss sampler {name} of {mechanism!r} (direction {direction!r}) "
                f"returned NaN at draw {start + first_nan}; a privacy loss must be a "
                "number or +-inf")
        start += size
        b += 1
        if on_draws is not None:
            on_draws(size)
    return hist[0].copy(), extra[0].copy()
