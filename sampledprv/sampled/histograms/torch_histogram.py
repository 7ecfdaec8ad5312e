r"""Torch sampling backend, the histograms: draw and bin on a torch device.

:func:`torch_loss_histogram` draws with
:func:`~sampledprv.sampled.draws.torch_draws.torch_loss_sampler` on ``device`` and bins
there (float64 throughout); only the ``bins + 5`` counts come back to the host.

Reproducibility.  A histogram of ``n`` draws with seed ``s`` is drawn in chunks of
``chunk`` draws from one :class:`torch.Generator` on ``device`` seeded from ``s``:
the same seed, device type and chunk size give the same counts.

Binning is the Numba kernels' rule: bin ``j`` holds ``lo + j h <= y < lo + (j+1) h``
with the edges computed in float64 as written (one correction step after the floor),
and the five extra counters (below, above, ``+inf``, ``-inf``, NaN).
"""

from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np

from ..draws.torch_draws import default_device, require_torch, torch_loss_sampler
from .histogram import LossHistogram
from .window import check_window

__all__ = ["torch_loss_histogram"]

#: draws per generator call (fixed per device type: part of the stream definition)
CHUNK = {"cpu": 1 << 18, "cuda": 1 << 24}


def _seed_int(seed: Any) -> int:
    ss = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    return int(ss.generate_state(1, np.uint64)[0] >> np.uint64(1))


def torch_loss_histogram(mechanism: Any, direction: str, *, n: int, lo: float, h: float,
                         bins: int, seed: Any = None, device: Optional[str] = None,
                         chunk: Optional[int] = None) -> LossHistogram:
    """Histogram of ``n`` privacy losses drawn and binned with torch on ``device``.

    Same :class:`~sampledprv.sampled.histograms.histogram.LossHistogram` contract and
    binning as :func:`sampledprv.sampled.histograms.kernels.loss_histogram`; memory is
    flat in ``n`` (about ten float64 tensors of ``chunk`` entries on the device).
    """
    torch = require_torch()
    n, lo, h, bins = check_window(n, lo, h, bins)
    dev = torch.device(device or default_device())
    chunk = int(chunk or CHUNK.get(dev.type, CHUNK["cuda"]))
    draw = torch_loss_sampler(mechanism, direction)
    gen = torch.Generator(device=dev).manual_seed(_seed_int(seed))
    total = torch.zeros(bins + 5, dtype=torch.int64, device=dev)
    hi = lo + bins * h
    inv_h = 1.0 / h
    done = 0
    while done < n:
        m = min(chunk, n - done)
        y = draw(gen, m).to(torch.float64)
        if y.shape != (m,):
            raise ValueError(f"the torch loss sampler of {mechanism!r} returned shape "
                             f"{tuple(y.shape)} for size {m}")
        jf = torch.nan_to_num(torch.floor((y - lo) * inv_h), nan=0.0).clamp(0.0, bins - 1)
        j = jf.to(torch.int64)
        j = j - (y < lo + j.to(torch.float64) * h).to(torch.int64)
        j = j + (y >= lo + (j + 1).to(torch.float64) * h).to(torch.int64)
        j = torch.where(y < lo, bins + 0, j)
        j = torch.where(y == -math.inf, bins + 3, j)
        j = torch.where(y >= hi, bins + 1, j)
        j = torch.where(y == math.inf, bins + 2, j)
        j = torch.where(torch.isnan(y), bins + 4, j)
        total += torch.bincount(j, minlength=bins + 5)
        done += m
    c = total.cpu().numpy()
    if c[bins + 4]:
        raise ValueError(f"privacy-loss source {mechanism!r} (direction {direction!r}) "
                         f"returned {int(c[bins + 4])} NaN losses on the torch backend; a "
                         "privacy loss must be a number or +-inf")
    return LossHistogram(c[:bins].copy(), int(c[bins]), int(c[bins + 1]), int(c[bins + 2]),
                         int(c[bins + 3]), n, lo, h)
