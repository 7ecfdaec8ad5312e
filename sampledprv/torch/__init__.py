"""PyTorch tools for the Generalized Gaussian mechanism (optional extra: ``torch``).

* :func:`generalized_gaussian` -- exact, generator-reproducible GG noise on any device;
* :func:`clip_per_sample`, :func:`privatize_gradients`, :class:`BetaDPSGD` -- beta-DP-SGD
  (GG paper, Algorithm 3) on per-sample gradients from ``torch.func``;
* :func:`ggnmax` -- noisy argmax of vote histograms;
* :mod:`sampledprv.torch.opacus_integration` -- Opacus optimizer/accountant/engine
  (imports opacus only when used);
* :class:`SampledPrvOpacusAccountant` (:mod:`sampledprv.torch.opacus_accountant`) --
  registered with Opacus as ``"sampledprv"`` on import when Opacus is installed, so
  ``PrivacyEngine(accountant="sampledprv")`` works; it accounts the loader's batch
  sampler (Poisson, balls-and-bins, k-of-T allocation, shuffled, sequential);
* :class:`BallsAndBinsBatchSampler`, :class:`RandomAllocationBatchSampler`
  (:mod:`sampledprv.torch.batch_samplers`) -- batch samplers for data loaders: each
  record in ``selected`` uniformly chosen steps of every epoch.

Importing :mod:`sampledprv` never imports torch; this subpackage does.
"""

try:
    import torch as _torch  # noqa: F401 - fail here, with the install hint
except ImportError as exc:
    raise ImportError("sampledprv.torch needs PyTorch: pip install 'sampledprv[torch]' "
                      "(or install torch for your platform from pytorch.org)") from exc

from .noise import envelope_acceptance, generalized_gaussian, sample_gamma
from .dpsgd import (
    BetaDPSGD, beta_norm, clip_per_sample, poisson_sample_mask, privatize_gradients,
)
from .argmax import ggnmax
from .batch_samplers import BallsAndBinsBatchSampler, RandomAllocationBatchSampler

__all__ = [
    "generalized_gaussian", "sample_gamma", "envelope_acceptance",
    "beta_norm", "clip_per_sample", "privatize_gradients", "BetaDPSGD",
    "poisson_sample_mask", "ggnmax", "BallsAndBinsBatchSampler",
    "RandomAllocationBatchSampler",
]


def _register_opacus() -> None:
    """Register the ``"sampledprv"`` Opacus accountant when Opacus is installed (never
    fails the import of this package: a broken Opacus install only warns)."""
    import importlib.util
    import warnings
    if importlib.util.find_spec("opacus") is None:
        return
    try:
        from .opacus_accountant import register
        register()
    except Exception as exc:  # noqa: BLE001 - a broken optional dependency must not break us
        warnings.warn(f"Opacus is installed but the 'sampledprv' accountant could not be "
                      f"registered with it ({type(exc).__name__}: {exc})", stacklevel=2)


def __getattr__(name: str):
    if name == "SampledPrvOpacusAccountant":
        from .opacus_accountant import SampledPrvOpacusAccountant
        return SampledPrvOpacusAccountant
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_register_opacus()
