r"""Per-record (individual) Renyi accounting for DP gradient descent with Opacus' per-sample
gradients: records whose clipped gradients are small spend less of their budget.

Feldman and Zrnic (arXiv 2008.11193, Sec. 4) account a noisy gradient step per record:
with noise :math:`N(0, \sigma^2 C^2 I)` (``sigma`` = Opacus' ``noise_multiplier``, ``C`` =
``max_grad_norm``) and record ``i``'s clipped gradient of norm :math:`g_i \le C` at the
current parameters, the step is a Gaussian mechanism of sensitivity :math:`g_i` for that
record: Renyi cost :math:`\alpha g_i^2 / (2\sigma^2 C^2)`.  The costs depend on the
parameters, hence on earlier outputs, so they are charged through an
:class:`~sampledprv.rdp.filters.IndividualRenyiFilter`: a record whose next cost would take
it over its budget is left out of the step (its gradient is dropped), which the
individual-filter theorem covers.  Every record ends :math:`(\alpha, B)`-RDP, and records
with small gradients keep contributing after the worst-case record has stopped.

:func:`individual_dp_step` is one full-batch (or fixed-batch) step on a module wrapped in
Opacus' ``GradSampleModule`` after ``loss.backward()``: it reads ``p.grad_sample``, clips,
charges the filter, sums the admitted gradients, adds the noise and writes ``p.grad``
(the mean over the batch).  Records not in the batch (chosen without looking at the data,
e.g. a fixed schedule) are charged nothing.  Poisson-subsampled batches are not handled
here: their per-record cost is charged to every record at every step, which needs every
record's gradient norm (use :func:`sampledprv.rdp.filters.gaussian_record_costs` with
``q`` on norms you compute).

Importing this module imports torch, never Opacus.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np
import torch

from ..core import validation as v
from ..rdp.filters import IndividualRenyiFilter, gaussian_record_costs

__all__ = ["per_sample_grad_norms", "individual_dp_step"]


def per_sample_grad_norms(module: Any) -> torch.Tensor:
    """L2 norms of the per-sample gradients (``p.grad_sample`` of every trainable
    parameter, as Opacus' ``GradSampleModule`` leaves them), shape ``(batch,)``."""
    sq = None
    for p in module.parameters():
        if not p.requires_grad:
            continue
        gs = getattr(p, "grad_sample", None)
        if gs is None:
            raise ValueError("a trainable parameter has no grad_sample: wrap the model in "
                             "opacus.GradSampleModule and call loss.backward() first")
        s = gs.reshape(gs.shape[0], -1).pow(2).sum(1)
        sq = s if sq is None else sq + s
    if sq is None:
        raise ValueError("the module has no trainable parameters")
    return sq.sqrt()


def individual_dp_step(module: Any, filt: IndividualRenyiFilter, indices: Sequence[int],
                       noise_multiplier: float, max_grad_norm: float,
                       generator: Optional[torch.Generator] = None) -> np.ndarray:
    r"""One DP gradient step with per-record budgets (module docstring).

    Parameters
    ----------
    module : opacus.GradSampleModule
        After ``loss.backward()`` on the batch, with per-sample gradients in
        ``grad_sample`` (``GradSampleModule(model, loss_reduction="sum")`` with a summed
        loss; Opacus rescales them to per-sample gradients for ``"mean"`` too).
    filt : IndividualRenyiFilter
        One budget per record of the dataset.
    indices : sequence of int
        Dataset index of each row of the batch.
    noise_multiplier, max_grad_norm : float
        :math:`\sigma` and :math:`C` (noise standard deviation :math:`\sigma C`).
    generator : torch.Generator, optional
        For the noise.

    Returns
    -------
    numpy.ndarray of bool
        Which rows of the batch took part (the others were over budget).
    """
    sigma = v.positive("noise_multiplier", noise_multiplier)
    clip = v.positive("max_grad_norm", max_grad_norm)
    idx = np.asarray(indices, dtype=np.int64).ravel()
    norms = per_sample_grad_norms(module).detach()
    if norms.shape[0] != idx.size:
        raise ValueError(f"indices has {idx.size} entries for a batch of {norms.shape[0]}")
    if idx.size and (idx.min() < 0 or idx.max() >= filt.n or np.unique(idx).size != idx.size):
        raise ValueError(f"indices must be distinct dataset indices in [0, {filt.n})")
    factor = torch.clamp(clip / (norms + 1e-12), max=1.0)
    clipped = (norms * factor).cpu().numpy().astype(np.float64)
    costs = np.zeros((filt.n, len(filt.orders)))
    costs[idx] = gaussian_record_costs(np.minimum(clipped, clip), sigma * clip, filt.orders)
    admitted = filt.admit(costs)[idx]
    weight = factor * torch.as_tensor(admitted, dtype=factor.dtype, device=factor.device)
    batch = max(1, idx.size)
    for p in module.parameters():
        if not p.requires_grad:
            continue
        gs = p.grad_sample
        summed = torch.einsum("b,b...->...", weight.to(gs.dtype), gs)
        noise = torch.normal(0.0, sigma * clip, size=summed.shape, generator=generator,
                             dtype=summed.dtype, device=summed.device)
        p.grad = (summed + noise) / batch
    return admitted
