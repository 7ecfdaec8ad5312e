r"""Batch samplers for torch data loaders: random allocation and balls-and-bins.

:class:`RandomAllocationBatchSampler` is the sampler that
:class:`sampledprv.RandomAllocation` accounts: in each epoch of ``steps`` steps every
record takes part in exactly ``selected`` = :math:`k` steps, a uniformly random
:math:`k`-subset of :math:`\{0, \dots, T-1\}` drawn independently for each record and
afresh for each epoch (fixed within the epoch).  Step :math:`t` yields the records whose
subset contains :math:`t`, so batch sizes vary (mean :math:`nk/T`, binomial) and a batch
may be empty.  :class:`BallsAndBinsBatchSampler` is :math:`k = 1`
(:class:`sampledprv.BallsAndBins`).

Use them as a ``DataLoader``'s ``batch_sampler``; with Opacus pass
``poisson_sampling=False`` to ``PrivacyEngine.make_private`` so that Opacus keeps the
loader, and account it with
:meth:`sampledprv.torch.opacus_accountant.SampledPrvOpacusAccountant.for_loader`::

    sampler = BallsAndBinsBatchSampler(len(dataset), steps=100, generator=g)
    loader = torch.utils.data.DataLoader(dataset, batch_sampler=sampler)

Reproducibility: the draws come from ``generator`` (a CPU ``torch.Generator``) or, when
it is omitted, from a generator seeded with ``seed``; the sequence of epochs is then the
same in every run.  The indices are plain Python ints (the loader moves the data to any
device).

Two practical notes.  A step that no record drew yields an empty batch, which torch's
default ``collate_fn`` cannot stack; with :math:`n` records this happens in an epoch
with probability at most :math:`T(1 - k/T)^n` (below :math:`10^{-40}` for
:math:`n = 10^4`, :math:`T = 100`, :math:`k = 1`), so only tiny datasets need a
``collate_fn`` that handles it.  Opacus normalises a mean loss by its expected batch size
``len(dataset) / len(loader)``, which is the mean batch of balls-and-bins and
:math:`1/k` of the mean batch of :math:`k`-of-:math:`T` allocation (there the
averaged gradient is :math:`k` times larger: scale the learning rate).
"""

from __future__ import annotations

from typing import Iterator, List, Optional

import torch
from torch.utils.data import Sampler

from ..core import validation as v

__all__ = ["RandomAllocationBatchSampler", "BallsAndBinsBatchSampler", "uniform_subsets"]

#: records drawn per block when building an epoch (bounds the memory to O(block * k))
_BLOCK = 1 << 20


def uniform_subsets(n: int, steps: int, selected: int,
                    generator: Optional[torch.Generator] = None) -> torch.Tensor:
    r"""An ``(n, selected)`` tensor whose rows are independent, uniformly random
    ``selected``-subsets of ``range(steps)`` (distinct entries, in no particular order).

    Floyd's algorithm, vectorized over the rows: for :math:`j = T-k, \dots, T-1` draw
    :math:`u` uniform on :math:`\{0, \dots, j\}` and keep :math:`u`, or :math:`j` when
    :math:`u` was kept before.  Each :math:`k`-subset comes out with probability
    :math:`\binom Tk^{-1}` (induction on :math:`j`).  ``O(n k^2)`` work, ``O(n k)``
    memory.
    """
    out = torch.empty((n, selected), dtype=torch.int64)
    for j, top in enumerate(range(steps - selected, steps)):
        u = torch.randint(0, top + 1, (n,), generator=generator, dtype=torch.int64)
        if j:
            seen = (out[:, :j] == u[:, None]).any(dim=1)
            u = torch.where(seen, torch.full_like(u, top), u)
        out[:, j] = u
    return out


class RandomAllocationBatchSampler(Sampler[List[int]]):
    r"""Each record in exactly ``selected`` uniformly chosen steps of every epoch.

    Parameters
    ----------
    n_records : int
        Records in the dataset (``len(dataset)``).
    steps : int
        Steps (batches) per epoch, :math:`T`; ``len(sampler) == steps``.
    selected : int
        Steps each record takes part in per epoch, :math:`1 \le k \le T` (default 1:
        balls-and-bins).
    generator : torch.Generator, optional
        Source of the draws (CPU generator).  Default: a generator seeded with ``seed``.
    seed : int
        Seed of the default generator (ignored when ``generator`` is given).

    Notes
    -----
    The allocation of an epoch is drawn when its iteration starts: record :math:`i`
    gets a uniform :math:`k`-subset :math:`S_i \subseteq \{0,\dots,T-1\}`
    (:func:`uniform_subsets`), independently of the other records; step :math:`t`
    yields :math:`\{i : t \in S_i\}` in increasing order.  This is the batch sampler
    of :class:`sampledprv.RandomAllocation` (``selected=k``), accounted per epoch.
    """

    def __init__(self, n_records: int, steps: int, selected: int = 1, *,
                 generator: Optional[torch.Generator] = None, seed: int = 0) -> None:
        self.n_records = v.positive_int("n_records", n_records)
        self.steps = v.positive_int("steps", steps)
        self.selected = v.positive_int("selected", selected)
        if self.selected > self.steps:
            raise ValueError(f"selected must be at most steps={self.steps} (each record is in "
                             f"`selected` of the `steps` steps of an epoch), got {selected!r}")
        if generator is not None and (not isinstance(generator, torch.Generator)
                                      or generator.device.type != "cpu"):
            raise ValueError(f"generator must be a CPU torch.Generator (the indices are "
                             f"drawn on the CPU), got {generator!r}")
        if generator is None:
            generator = torch.Generator()
            generator.manual_seed(v.seed("seed", seed))
        self.generator = generator

    def __len__(self) -> int:
        return self.steps

    def allocation(self) -> torch.Tensor:
        """Draw one epoch's allocation: an ``(n_records, selected)`` tensor of steps."""
        parts = [uniform_subsets(min(_BLOCK, self.n_records - a), self.steps, self.selected,
                                 self.generator)
                 for a in range(0, self.n_records, _BLOCK)]
        return torch.cat(parts) if len(parts) > 1 else parts[0]

    def batches(self, allocation: torch.Tensor) -> List[List[int]]:
        """The ``steps`` batches of an allocation (record indices, increasing)."""
        step = allocation.reshape(-1)
        record = torch.arange(self.n_records).repeat_interleave(self.selected)
        order = torch.argsort(step * self.n_records + record)
        sizes = torch.bincount(step, minlength=self.steps).tolist()
        return [b.tolist() for b in torch.split(record[order], sizes)]

    def __iter__(self) -> Iterator[List[int]]:
        yield from self.batches(self.allocation())

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(n_records={self.n_records}, steps={self.steps}, "
                f"selected={self.selected})")


class BallsAndBinsBatchSampler(RandomAllocationBatchSampler):
    """Balls-and-bins: each record in one uniformly chosen step of every epoch
    (:class:`RandomAllocationBatchSampler` with ``selected=1``; the sampler of
    :class:`sampledprv.BallsAndBins`)."""

    def __init__(self, n_records: int, steps: int, *,
                 generator: Optional[torch.Generator] = None, seed: int = 0) -> None:
        super().__init__(n_records, steps, 1, generator=generator, seed=seed)

    def __repr__(self) -> str:
        return f"BallsAndBinsBatchSampler(n_records={self.n_records}, steps={self.steps})"
