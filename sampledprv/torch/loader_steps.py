r"""Which batch sampler does a data loader use?  :func:`steps_for_loader` answers with the
step model of :class:`~sampledprv.torch.opacus_accountant.SampledPrvOpacusAccountant`
that accounts it.

===============================================  ===========================================
the loader's ``batch_sampler``                   step model
===============================================  ===========================================
Opacus' ``UniformWithReplacementSampler``        :class:`~.opacus_accountant.PoissonSteps`
(``DPDataLoader``, ``make_private(...,           (Poisson, ``q = 1/len(loader)``)
poisson_sampling=True)``)
:class:`~.batch_samplers.RandomAllocationBatch`  :class:`~.allocation_steps.AllocationSteps`
``Sampler`` / ``BallsAndBinsBatchSampler``       (``selected`` of ``len(loader)`` steps)
``BatchSampler(RandomSampler)``                  :class:`~.fixed_batch_steps.ShuffledSteps`
(``shuffle=True``)                               (certified lower end, warning)
``BatchSampler(SequentialSampler)``              :class:`~.fixed_batch_steps.DeterministicSteps`
(``shuffle=False``)
===============================================  ===========================================

Anything else raises a ``ValueError`` naming the sampler: a sampler whose law is not
known cannot be accounted.  A shuffled loader must put every record in one batch of
every epoch (``RandomSampler`` without replacement over the whole dataset; with
``drop_last=True`` the dataset size a multiple of the batch size).
"""

from __future__ import annotations

from typing import Any, Dict, Optional

from torch.utils.data import BatchSampler, DataLoader, RandomSampler, SequentialSampler

from .allocation_steps import AllocationSteps
from .batch_samplers import RandomAllocationBatchSampler
from .fixed_batch_steps import DeterministicSteps, ShuffledSteps
from .poisson_steps import PoissonSteps

try:      # Opacus is optional: without it no loader is a Poisson loader
    from opacus.utils.uniform_sampler import (DistributedUniformWithReplacementSampler,
                                              UniformWithReplacementSampler)
    _POISSON: tuple = (UniformWithReplacementSampler, DistributedUniformWithReplacementSampler)
except ImportError:      # pragma: no cover - exercised only without opacus
    _POISSON = ()

__all__ = ["steps_for_loader", "sampler_kind", "options_of"]


def sampler_kind(loader: Any) -> str:
    """``"poisson"``, ``"allocation"``, ``"shuffled"`` or ``"deterministic"``: the batch
    sampler of ``loader`` (module docstring); ``ValueError`` for anything else."""
    if not isinstance(loader, DataLoader):
        raise ValueError(f"loader must be a torch.utils.data.DataLoader, got "
                         f"{type(loader).__name__}")
    bs = loader.batch_sampler
    if bs is None:
        raise ValueError("loader has no batch sampler (batch_size=None yields single "
                         "records): DP-SGD accounts batches; give batch_size= or "
                         "batch_sampler=")
    if _POISSON and isinstance(bs, _POISSON):
        return "poisson"
    if isinstance(bs, RandomAllocationBatchSampler):
        return "allocation"
    if type(bs) is BatchSampler:
        s = bs.sampler
        if type(s) is SequentialSampler:
            return "deterministic"
        if type(s) is RandomSampler:
            n = len(loader.dataset)
            if s.replacement or s.num_samples != n:
                raise ValueError(
                    f"the loader's RandomSampler draws {s.num_samples} records "
                    f"{'with' if s.replacement else 'without'} replacement from {n}: "
                    "shuffled batches are accounted when every record is in one batch per "
                    "epoch (RandomSampler(dataset) without replacement, num_samples=None)")
            if bs.drop_last and n % bs.batch_size:
                raise ValueError(
                    f"drop_last=True with {n} records and batch_size={bs.batch_size}: the "
                    f"{n % bs.batch_size} records left over each epoch are in no batch, and "
                    "no certified lower end is known for that; use drop_last=False or a "
                    "dataset size that is a multiple of the batch size")
            return "shuffled"
        raise ValueError(
            f"the loader's BatchSampler draws from a {type(s).__name__}, whose privacy "
            "cannot be accounted: use shuffle=True/False, a "
            "sampledprv.torch.BallsAndBinsBatchSampler, or Opacus' Poisson sampling")
    raise ValueError(
        f"unknown batch sampler {type(bs).__name__}: the accountant knows Opacus' Poisson "
        "sampler (make_private(..., poisson_sampling=True)), "
        "sampledprv.torch.RandomAllocationBatchSampler / BallsAndBinsBatchSampler, and "
        "torch's BatchSampler over a RandomSampler (shuffle=True) or SequentialSampler "
        "(shuffle=False)")


def steps_for_loader(loader: Any, *, beta: float = 2.0, dimension: Optional[int] = None,
                     n_samples: int = 10**6, alpha: float = 1e-6, seed: int = 0,
                     bins: int = 2**15, shuffle_upper: str = "deterministic") -> Any:
    r"""The step model that accounts the batches of ``loader`` (module docstring).

    Parameters
    ----------
    loader : torch.utils.data.DataLoader
        The loader that trains (for Opacus: the one ``make_private`` returned).
    beta, dimension
        Noise: 2 for Gaussian, else Generalized Gaussian (Poisson: any ``dimension``;
        allocation: ``dimension=1`` only; fixed batches: Gaussian only).
    n_samples, alpha, seed, bins
        Settings of the sampled accountant of random allocation
        (:class:`~.allocation_steps.AllocationSteps`).
    shuffle_upper : {"deterministic", "none"}
        Upper end reported for shuffled batches.
    """
    kind = sampler_kind(loader)
    steps = len(loader)
    if kind == "poisson":
        return PoissonSteps(float(beta), dimension)
    if kind == "allocation":
        return AllocationSteps(steps, loader.batch_sampler.selected, n_samples=n_samples,
                               alpha=alpha, seed=seed, bins=bins, beta=beta, dimension=dimension)
    if float(beta) != 2.0:
        raise ValueError(f"beta={beta!r}: {kind} fixed batches are accounted for Gaussian "
                         "noise only (beta=2); use Poisson sampling or random allocation "
                         "for Generalized Gaussian noise")
    if kind == "shuffled":
        return ShuffledSteps(steps, upper=shuffle_upper)
    return DeterministicSteps(steps)


def options_of(steps: Any) -> Dict[str, Any]:
    """The options of :func:`steps_for_loader` that rebuild ``steps``' settings (noise and
    sampled-accountant settings), so that a loader can be checked against a model
    without restating them."""
    if isinstance(steps, AllocationSteps):
        return dict(beta=steps.beta, dimension=steps.dimension, n_samples=steps.n_samples,
                    alpha=steps.alpha, seed=steps.seed, bins=steps.bins)
    if isinstance(steps, PoissonSteps):
        return dict(beta=steps.beta, dimension=steps.dimension)
    if isinstance(steps, ShuffledSteps):
        return dict(shuffle_upper=steps.upper)
    return {}
