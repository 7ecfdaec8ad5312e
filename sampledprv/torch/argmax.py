r"""GGNMax in PyTorch: noisy argmax of vote histograms with GG noise (GG paper, Theorem 2).

:math:`\arg\max_j (v_j + Z_j)`, :math:`Z_j \overset{iid}{\sim} GG(\beta, s)`.  Accounting
depends on the neighbouring relation (see :mod:`sampledprv.gg.noisy_max`): one count changing by
1 is ``sampledprv.GGNMax(beta, scale)``; a teacher's vote moving between two classes is
``GeneralizedGaussian(beta, scale)`` composed twice per answer.
"""

from __future__ import annotations

from typing import Optional

import torch

from .noise import generalized_gaussian

__all__ = ["ggnmax"]


def ggnmax(votes: torch.Tensor, beta: float, scale: float, *,
           generator: Optional[torch.Generator] = None) -> torch.Tensor:
    """Private argmax over the last axis of ``votes`` (shape ``(classes,)`` or ``(n, classes)``).

    Noise is drawn on ``votes.device`` in float64 (float32 on devices without float64
    support is the caller's choice: pass float32 votes); returns int64 indices of shape
    ``votes.shape[:-1]``.
    """
    if votes.dim() not in (1, 2) or votes.shape[-1] < 1:
        raise ValueError(f"votes must have shape (classes,) or (n, classes), got {tuple(votes.shape)}")
    dtype = votes.dtype if votes.dtype.is_floating_point else torch.float64
    noise = generalized_gaussian(votes.shape, beta, scale, generator=generator,
                                 device=votes.device, dtype=dtype)
    return torch.argmax(votes.to(dtype) + noise, dim=-1)
