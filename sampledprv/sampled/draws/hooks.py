"""The extension hooks a privacy-loss source implements for the sampled accountant.

An object the sampled accountant does not know (neither an analytic spec nor one of
:class:`~sampledprv.LogDensityPair` / :class:`~sampledprv.PrivacyLossSampler`) is sampled
through these methods:

``loss_sampler(direction)``
    The source of the compiled histogram kernel: a Numba-jitted ``fill(state, out)``, a
    ``(fill, params)`` pair, or a plain ``sample(rng, size)`` callable (protocol in
    :mod:`sampledprv.sampled.histograms.kernels`).
``numpy_loss_sampler(direction)``
    ``sample(rng, size) -> ndarray`` of privacy losses drawn with a
    :class:`numpy.random.Generator` (the numpy path, used for pilots and checks).

The two hooks are spelled as the :class:`typing.Protocol` classes
:class:`LossSamplerSource` and :class:`NumpyLossSamplerSource` (:class:`LossSource`: both),
which type checkers use and ``isinstance`` tests (they are ``runtime_checkable``); the
accountant still finds the hooks by name (:func:`find_hook`), so any object with the
methods works, protocol class or not.  A registered spec (the batch samplers of
:mod:`sampledprv.batch`) is answered by its family's record instead
(:func:`sampledprv.mechanisms.registry.hook`): the record holds every plug-in of a family,
and the same hooks (``conditional``, ``torch_loss_sampler``, ``dominating_compositions``,
``tilted_law``) are found the same way.

``direction`` is ``"remove"`` (:math:`\\log p/q` under ``P``) or ``"add"``
(:math:`\\log q/p` under ``Q``).  The names ``_loss_sampler`` / ``_numpy_loss_sampler`` of
version 0.1 still work, with a :class:`DeprecationWarning`.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable, Optional, Protocol, runtime_checkable

import numpy as np

from ...mechanisms import registry

__all__ = ["LOSS_SAMPLER", "NUMPY_LOSS_SAMPLER", "find_hook", "LossSamplerSource",
           "NumpyLossSamplerSource", "LossSource", "NumpyLossSampler"]

#: ``sample(rng, size) -> ndarray``: ``size`` privacy losses drawn with ``rng``
NumpyLossSampler = Callable[[np.random.Generator, int], np.ndarray]


@runtime_checkable
class LossSamplerSource(Protocol):
    """A privacy-loss source for the compiled histogram kernel (hook ``loss_sampler``)."""

    def loss_sampler(self, direction: str) -> Any:
        """A Numba-jitted ``fill(state, out)``, a ``(fill, params)`` pair, or a plain
        ``sample(rng, size)`` callable drawing the loss of ``direction``."""
        ...


@runtime_checkable
class NumpyLossSamplerSource(Protocol):
    """A privacy-loss source for the numpy path (hook ``numpy_loss_sampler``)."""

    def numpy_loss_sampler(self, direction: str) -> NumpyLossSampler:
        """``sample(rng, size) -> ndarray`` of the losses of ``direction``."""
        ...


@runtime_checkable
class LossSource(LossSamplerSource, NumpyLossSamplerSource, Protocol):
    """Both hooks: what a user-defined mechanism implements for the sampled accountant."""

LOSS_SAMPLER = "loss_sampler"              #: kernel-source hook
NUMPY_LOSS_SAMPLER = "numpy_loss_sampler"  #: numpy-path hook


def find_hook(obj: Any, name: str) -> Optional[Callable[..., Any]]:
    """The hook ``name`` of ``obj`` (one of
    :data:`sampledprv.mechanisms.registry.SPEC_HOOKS`), bound to it: its family's plug-in
    for a registered spec, else the method ``obj.<name>``, or the deprecated
    ``obj._<name>``, or None."""
    hook = registry.hook(obj, name)
    if hook is not None or registry.is_registered(obj):
        return hook
    old = getattr(obj, "_" + name, None)
    if callable(old):
        warnings.warn(f"{type(obj).__name__}._{name} is deprecated: name the method {name} "
                      "(the public hook of sampledprv.sampled.draws.hooks)", DeprecationWarning,
                      stacklevel=3)
        return old
    return None
