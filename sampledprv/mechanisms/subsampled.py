r"""Poisson subsampling of any registered mechanism (the spec; its laws live in
:mod:`sampledprv.core.subsampled_law` and the samplers' subsampled modes)."""

from __future__ import annotations

import sys
from dataclasses import dataclass

from ..core import validation as v
from .base import Mechanism

__all__ = ["PoissonSubsampled", "is_user_pair"]


def is_user_pair(obj: object) -> bool:
    """True for a :class:`~sampledprv.LogDensityPair` or :class:`~sampledprv.PrivacyLossSampler`
    (sampled accountant only; their module is loaded once the user has built one)."""
    mod = sys.modules.get("sampledprv.sampled.certification.inputs")
    return mod is not None and isinstance(obj, (mod.LogDensityPair, mod.PrivacyLossSampler))


#: How subsampled user pairs meet the neighbouring relations: ``"for_relation"`` and
#: ``"fixed_size_bounds"``, registered by :mod:`sampledprv.sampled.certification.subsampled_inputs`
#: (a higher layer, loaded with :mod:`sampledprv.sampled`, hence before any user pair exists).
USER_PAIR_HOOKS: dict = {}


def user_pair_hook(name: str):
    """The registered user-pair hook ``name`` (see :data:`USER_PAIR_HOOKS`)."""
    try:
        return USER_PAIR_HOOKS[name]
    except KeyError:
        raise TypeError("subsampled user pairs are accounted by sampledprv.SampledAccountant; "
                        "import sampledprv.sampled first") from None


def refuse_batch_scheme(wrapper: str, mechanism: object) -> None:
    """Raise when ``mechanism`` is itself a batch-sampling scheme (its class sets
    ``batch_scheme``, e.g. random allocation): a second subsampling on top of it is a
    scheme no accountant here certifies, and it would fail only when accounted."""
    scheme = getattr(type(mechanism), "batch_scheme", None)
    if scheme:
        raise ValueError(
            f"{wrapper}({type(mechanism).__name__}(...)): {type(mechanism).__name__} is "
            f"already a batch-sampling scheme ({scheme}), and {wrapper} of it is not a "
            f"scheme these accountants certify. Compose {type(mechanism).__name__} alone "
            f"(its steps already sample the batches), or use {wrapper} of the step's "
            "noise (e.g. sp.PoissonSubsampled(sp.Gaussian(sigma), q)) for that batching")


@dataclass(frozen=True)
class PoissonSubsampled(Mechanism):
    r"""``mechanism`` run on a Poisson subsample: each record kept with probability ``q``.

    Under add/remove neighbours with :math:`P_0, Q_0` the base mechanism's pair,
    the subsampled pair is :math:`((1-q) Q_0 + q P_0,\ Q_0)`; its privacy loss is
    :math:`\log(1 - q + q e^{\ell})` and is not symmetric, so both directions are
    accounted.

    ``mechanism`` may also be a :class:`~sampledprv.LogDensityPair` or
    :class:`~sampledprv.PrivacyLossSampler` (add/remove, :class:`~sampledprv.SampledAccountant`
    only: the loss is drawn from the pair's own samplers,
    :mod:`sampledprv.sampled.certification.subsampled_inputs`).
    """

    mechanism: Mechanism
    q: float

    def __post_init__(self) -> None:
        if not isinstance(self.mechanism, Mechanism) and not is_user_pair(self.mechanism):
            raise ValueError(
                f"mechanism must be a sampledprv mechanism spec, a LogDensityPair or a "
                f"PrivacyLossSampler, got {self.mechanism!r}")
        if isinstance(self.mechanism, PoissonSubsampled):
            raise ValueError("mechanism is already PoissonSubsampled; combine the rates "
                             "into one q = q1 * q2 instead of nesting")
        refuse_batch_scheme("PoissonSubsampled", self.mechanism)
        object.__setattr__(self, "q", v.in_interval(
            "q", self.q, 0.0, 1.0, low_open=True, high_open=False,
            hint="q is the Poisson sampling rate (batch size / dataset size)"))

    @property
    def symmetric(self) -> bool:  # type: ignore[override]
        return self.q == 1.0 and bool(getattr(self.mechanism, "symmetric", False))
