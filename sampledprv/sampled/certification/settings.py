r"""The settings of a :class:`~sampledprv.SampledAccountant`, as one frozen value.

:class:`SampledSettings` holds every constructor argument of the sampled accountant,
validated once (each bad value is a :class:`ValueError` naming the argument and the
fix).  The accountant, its query strategies (:mod:`.envelope_strategy`,
:mod:`.seed_strategy`), its histogram bank and its inner accountants (the two ends of a
bracketed composition, :mod:`.fixed_size_ends`; the dominating compositions,
:mod:`.alternatives`) read it; an inner accountant is
``SampledAccountant.from_settings(settings.replace(alpha=..., seed=...))``, so nothing is
copied by hand and no setting can be forgotten.  The executor is a resource, not state:
the accountant's pickle holds ``executor=None`` and a deep copy shares it
(``shared=("_settings.executor",)``, :mod:`sampledprv.core.concurrency`).

Units: ``n_samples`` counts privacy-loss draws per histogram (one mechanism, one
direction), ``alpha`` is a probability, ``bins`` and ``max_grid`` count grid points,
``shard_size`` counts draws per unit of work.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

from ...core import validation as v
from ...core.progress import check_progress
from ...mechanisms.base import as_relation
from ..histograms.sharding import BACKENDS, DEFAULT_SHARD_SIZE
from .sample_sizes import as_given, per_direction

__all__ = ["SampledSettings", "MIN_GRID", "setting"]

#: smallest accepted ``max_grid`` (FFT length of the composed envelopes)
MIN_GRID = 64


@dataclass(frozen=True)
class SampledSettings:
    r"""Every setting of a sampled accountant (the parameters of
    :class:`~sampledprv.SampledAccountant`, which documents each one).

    Attributes
    ----------
    n_samples : int or dict
        Draws per histogram: one int for both directions, or ``{"remove": n, "add": n}``
        (normal form of :func:`.sample_sizes.as_given`; given as an int, a pair or a
        mapping).
    alpha : float
        Failure probability of the certificate, in (0, 1).
    seed : int
        Seed of the root :class:`numpy.random.SeedSequence`.
    certify : {"envelope", "seed"}
    bins : int or "auto"
        Histogram bins (at least 16, at most ``max_grid``).
    progress : bool or None
    seed_params : dict
        ``L, h, s, t`` (and ``delta_ref``) of ``certify="seed"``.
    max_grid : int
        Largest FFT length, at least :data:`MIN_GRID`.
    executor : object
        ``None``, a Dask client or a :class:`concurrent.futures.Executor` (checked by the
        histogram bank, :func:`~sampledprv.sampled.histograms.sharding.check_executor`).
    checkpoint : str, os.PathLike or None
        Checkpoint directory (made writable by the histogram bank).
    backend : {"numba", "torch"}
    device : str or None
        Torch device; only with ``backend="torch"`` (``None``: chosen by the bank).
    shard_size : int
        Draws per shard (part of the definition of the random streams).
    threads_per_task : int
    neighbouring : NeighbouringRelation
        Given as a name or a relation.
    tail_bounds : bool
    join_directions : bool
        Join the two directions' envelopes of a user ``LogDensityPair`` by the change of
        measure (:mod:`.identity_envelopes`).
    """

    n_samples: Any
    alpha: float = 1e-9
    seed: int = 0
    certify: str = "envelope"
    bins: Any = "auto"
    progress: Optional[bool] = None
    seed_params: Mapping[str, Any] = field(default_factory=dict)
    max_grid: int = 2**23
    executor: object = None
    checkpoint: object = None
    backend: str = "numba"
    device: Optional[str] = None
    shard_size: int = DEFAULT_SHARD_SIZE
    threads_per_task: int = 1
    neighbouring: Any = "add_remove"
    tail_bounds: bool = True
    join_directions: bool = True

    def __post_init__(self) -> None:
        put = lambda name, value: object.__setattr__(self, name, value)  # noqa: E731
        put("n_samples", as_given(per_direction(self.n_samples)))
        put("alpha", v.in_interval("alpha", self.alpha, 0.0, 1.0, low_open=True,
                                   high_open=True))
        if self.certify not in ("envelope", "seed"):
            raise ValueError(f"certify must be 'envelope' or 'seed', got {self.certify!r}")
        if self.bins != "auto":
            put("bins", v.positive_int("bins", self.bins))
            if self.bins < 16:
                raise ValueError(f"bins must be at least 16 or 'auto', got {self.bins!r}")
        check_progress(self.progress)   # True needs tqdm: say so now, not after sampling
        if self.seed_params is not None and not isinstance(self.seed_params, Mapping):
            raise ValueError(f"seed_params must be a dict of L, h, s, t, got "
                             f"{self.seed_params!r}")
        put("seed_params", dict(self.seed_params or {}))
        put("max_grid", v.positive_int("max_grid", self.max_grid))
        if self.max_grid < MIN_GRID:
            raise ValueError(f"max_grid must be at least {MIN_GRID} (the largest FFT length "
                             f"of the composed envelopes; default 2**23), got {self.max_grid!r}")
        if self.bins != "auto" and self.bins > self.max_grid:
            raise ValueError(f"bins={self.bins:,} exceeds max_grid={self.max_grid:,}: every "
                             "histogram is a grid of that many points; lower bins or raise "
                             "max_grid")
        v.seed("seed", self.seed)
        if self.backend not in BACKENDS:
            raise ValueError(f"backend must be one of {BACKENDS}, got {self.backend!r}")
        if self.backend != "torch" and self.device is not None:
            raise ValueError("device= is a torch device and needs backend='torch'")
        put("shard_size", v.positive_int("shard_size", self.shard_size))
        put("threads_per_task", v.positive_int("threads_per_task", self.threads_per_task))
        put("neighbouring", as_relation(self.neighbouring))
        put("tail_bounds", bool(self.tail_bounds))
        put("join_directions", bool(self.join_directions))

    @property
    def sizes(self) -> dict:
        """Draws per histogram by direction, ``{"remove": n, "add": n}``."""
        return per_direction(self.n_samples)

    def replace(self, **changes: Any) -> "SampledSettings":
        """A copy with ``changes`` (validated again)."""
        return dataclasses.replace(self, **changes)

    def under(self, name: str) -> "SampledSettings":
        """The settings of an inner accountant whose shards go to ``checkpoint/name``
        (unchanged without a checkpoint)."""
        if self.checkpoint is None:
            return self
        return self.replace(checkpoint=os.path.join(os.fspath(self.checkpoint), name))


def setting(name: str, doc: str = "") -> property:
    """A read-only attribute of the accountant that reads its :class:`SampledSettings`."""
    return property(lambda self: getattr(self._settings, name),
                    doc=doc or f"The ``{name}`` setting (:class:`SampledSettings`).")
