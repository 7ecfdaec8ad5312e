r"""Opacus' step history read as epochs of a fixed-length batch sampler.

Opacus records ``history = [(noise_multiplier, sample_rate, steps), ...]``, one entry per
run of equal steps, with ``sample_rate = 1 / len(data_loader)``.  A batch sampler whose
privacy is accounted per epoch (random allocation, shuffling, deterministic batches)
has ``T = len(data_loader)`` steps per epoch, so ``sample_rate`` must be :math:`1/T`
(one optimizer step per batch), and the noise can only change between epochs (the
accounted mechanism of an epoch has one noise level).  :func:`epochs_of` checks both
and returns the completed epochs per noise multiplier and the steps of the epoch in
progress.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence, Tuple

__all__ = ["EpochHistory", "epochs_of"]

#: relative tolerance of ``sample_rate * T == 1``
_RATE_RTOL = 1e-9


@dataclass(frozen=True)
class EpochHistory:
    """The epochs of a history.

    Attributes
    ----------
    full : tuple of (float, int)
        ``(noise_multiplier, completed epochs)`` per noise multiplier, in order of first
        use.
    partial : (float, int) or None
        ``(noise_multiplier, r)`` of the epoch in progress, ``1 <= r < T`` steps done; None
        when the steps are a whole number of epochs.
    steps : int
        All steps of the history.
    """

    full: Tuple[Tuple[float, int], ...]
    partial: Optional[Tuple[float, int]]
    steps: int

    @property
    def completed(self) -> int:
        """Completed epochs (all noise multipliers)."""
        return sum(e for _, e in self.full)


def epochs_of(history: Sequence[Tuple[float, float, int]], steps_per_epoch: int) -> EpochHistory:
    r"""Split ``history`` into epochs of ``steps_per_epoch`` steps (module docstring).

    Raises
    ------
    ValueError
        When a ``sample_rate`` is not ``1 / steps_per_epoch``, or the noise multiplier
        changes inside an epoch.
    """
    t = int(steps_per_epoch)
    full: dict = {}
    pos, cur = 0, None             # steps so far; noise of the epoch in progress
    for sigma, q, n in history:
        sigma, q, n = float(sigma), float(q), int(n)
        if n <= 0:
            continue
        if abs(q * t - 1.0) > _RATE_RTOL:
            raise ValueError(
                f"sample_rate={q!r} in the accountant's history is not 1/{t} (the loader's "
                f"{t} steps per epoch): this step model accounts one optimizer step per batch "
                "of the loader it was built for. Build the accountant from the loader that "
                "trains (SampledPrvOpacusAccountant.for_loader(loader)), without gradient "
                "accumulation over several batches")
        if pos % t and cur != sigma:
            raise ValueError(
                f"noise_multiplier changed from {cur!r} to {sigma!r} inside an epoch (after "
                f"step {pos % t} of {t}); an epoch of this batch sampler is accounted as one "
                "mechanism with one noise level: change the noise only between epochs")
        cur = sigma
        end = pos + n
        done = end // t - pos // t         # epochs that end inside (pos, end]
        if done > 0:
            full[sigma] = full.get(sigma, 0) + done
        pos = end
    r = pos % t
    return EpochHistory(tuple(full.items()), (cur, r) if r else None, pos)
