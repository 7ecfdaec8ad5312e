r"""Opacus integration for beta-DP-SGD (optional extra: ``pip install opacus``).

* :class:`GGDPOptimizer` -- an Opacus ``DPOptimizer`` that clips per-sample gradients in
  the :math:`\ell_\beta` norm and adds :math:`GG(\beta, \sqrt2\,\sigma C)` noise
  (``sigma`` = Opacus' ``noise_multiplier``, ``C`` = ``max_grad_norm``), so ``beta = 2``
  is exactly Opacus' DP-SGD.
* :func:`gg_accountant_class` / :class:`GGOpacusAccountant` -- an Opacus ``IAccountant``
  that accounts each step as ``PoissonSubsampled(GeneralizedGaussianVector(beta,
  sqrt(2) sigma, d), q)`` (worst case over the :math:`\ell_\beta` ball in ``d``
  dimensions, :class:`sampledprv.VectorGGAccountant`; exact PLD at ``beta = 2``) and
  reports the *certified upper* epsilon.  ``accounting="paper-1d"`` keeps the GG paper's
  1-D accounting, labelled as not a worst-case certificate for ``beta != 2``.  It is
  registered with Opacus' accountant registry under ``"sampledprv-gg-beta=<beta>"``.
* :class:`GGPrivacyEngine` -- a ``PrivacyEngine`` using both; its
  ``make_private_with_epsilon`` calibrates the noise multiplier with
  :func:`sampledprv.calibrate` (Brent + certified upper bound).

Opacus is imported when this module is imported, never by ``import sampledprv`` or
``import sampledprv.torch``.

:class:`GGPrivacyEngine` reads ``d`` (the number of trainable parameters) from the module
it makes private; an accountant built from Opacus' registry without ``dimension`` covers
every ``d`` up to ``1e12`` for ``beta < 2`` and refuses ``beta > 2`` (where the worst case
grows with ``d``).
"""

from __future__ import annotations

import math
from typing import Any, Callable, Dict, Optional, Type

try:
    import opacus  # noqa: F401
    from opacus import PrivacyEngine
    from opacus.accountants import IAccountant, register_accountant
    from opacus.optimizers import DPOptimizer
    from opacus.optimizers.optimizer import _check_processed_flag, _mark_as_processed
except ImportError as exc:  # pragma: no cover - exercised only without opacus
    raise ImportError("sampledprv.torch.opacus_integration needs Opacus: "
                      "pip install 'sampledprv[opacus]' (or pip install opacus)") from exc
import torch

from ..calibration import Calibration, calibrate
from ..gg.dpsgd_accounting import check_accounting, label, make_accountant, step_spec
from ..mechanisms import Mechanism
from ..mechanisms.generalized_gaussian import check_beta
from .dpsgd import beta_norm
from .noise import generalized_gaussian
from ..analytic.accountant import Accountant

__all__ = ["GGDPOptimizer", "GGOpacusAccountant", "gg_accountant_class", "GGPrivacyEngine",
           "step_mechanism"]


#: smallest planned number of steps of the default accountant (it starts at twice the
#: steps already taken, and doubles whenever it is exceeded)
DEFAULT_HORIZON = 64


def step_mechanism(beta: float, noise_multiplier: float, sample_rate: float,
                   dimension: Optional[int] = None, accounting: str = "vector") -> Mechanism:
    """The spec of one Opacus step: ``PoissonSubsampled(GeneralizedGaussianVector(beta,
    sqrt(2) sigma, dimension), q)``, or with ``accounting="paper-1d"`` the 1-D
    ``GeneralizedGaussian(beta, sqrt(2) sigma)`` of the GG paper."""
    return step_spec(beta, math.sqrt(2.0) * float(noise_multiplier), sample_rate,
                     dimension=dimension, accounting=accounting)


def _trainable(module: torch.nn.Module) -> int:
    return int(sum(p.numel() for p in module.parameters() if p.requires_grad))


class GGDPOptimizer(DPOptimizer):
    """Opacus ``DPOptimizer`` with :math:`\\ell_\\beta` clipping and GG noise.

    Same arguments as ``DPOptimizer`` plus ``beta`` (>= 1).  ``noise_multiplier`` keeps
    Opacus' meaning: the GG scale is ``sqrt(2) * noise_multiplier * max_grad_norm``.
    ``secure_mode`` is not supported (there is no floating-point-attack-hardened GG
    sampler here).
    """

    def __init__(self, optimizer: torch.optim.Optimizer, *, beta: float = 2.0, **kwargs: Any):
        if kwargs.get("secure_mode"):
            raise ValueError("GGDPOptimizer does not support secure_mode=True; use "
                             "secure_mode=False (the GG sampler is not hardened against "
                             "floating-point attacks)")
        beta = float(beta)
        if not (1.0 <= beta < math.inf):
            raise ValueError(f"beta must be a finite number >= 1, got {beta!r}")
        super().__init__(optimizer, **kwargs)
        self.beta = beta

    def clip_and_accumulate(self) -> None:
        """Clip each per-sample gradient to ``ell_beta`` norm ``max_grad_norm``; sum into
        ``p.summed_grad``."""
        samples = self.grad_samples
        if len(samples[0]) == 0:
            factor = torch.zeros((0,), device=samples[0].device)
        else:
            norms = beta_norm(samples, self.beta)
            target = self.max_grad_norm * (1.0 - 8.0 * torch.finfo(norms.dtype).eps)
            factor = (target / norms.clamp_min(torch.finfo(norms.dtype).tiny)).clamp(max=1.0)
        for p in self.params:
            _check_processed_flag(p.grad_sample)
            gs = self._get_flat_grad_sample(p).to(p.dtype)
            grad = torch.einsum("i,i...", factor.to(gs.device).to(p.dtype), gs)
            p.summed_grad = grad if p.summed_grad is None else p.summed_grad + grad
            _mark_as_processed(p.grad_sample)

    def add_noise(self) -> None:
        """``p.grad = p.summed_grad + GG(beta, sqrt(2) * noise_multiplier * max_grad_norm)``."""
        scale = math.sqrt(2.0) * self.noise_multiplier * self.max_grad_norm
        for p in self.params:
            _check_processed_flag(p.summed_grad)
            ref = p.summed_grad
            if scale > 0:
                noise = generalized_gaussian(ref.shape, self.beta, scale, generator=self.generator,
                                             device=ref.device, dtype=ref.dtype)
                p.grad = (ref + noise).view_as(p)
            else:
                p.grad = ref.view_as(p)
            _mark_as_processed(p.summed_grad)


class GGOpacusAccountant(IAccountant):
    r"""Opacus accountant for beta-DP-SGD backed by a sampledprv accountant.

    ``history`` holds ``(noise_multiplier, sample_rate, steps)`` like Opacus' own
    accountants; :meth:`get_epsilon` composes
    ``step_mechanism(beta, sigma, q)`` ``steps`` times for each entry and returns the
    certified upper epsilon (:meth:`get_epsilon_interval` returns the whole Interval).

    Parameters
    ----------
    beta : float
        GG shape (class default :attr:`BETA`).
    accountant : callable, optional
        Zero-argument factory of sampledprv accountants (default: the online
        ``sampledprv.Accountant`` at ``beta = 2`` or with ``accounting="paper-1d"``,
        :class:`sampledprv.VectorGGAccountant` otherwise).
    dimension : int, optional
        Number of noisy coordinates ``d`` (set by :class:`GGPrivacyEngine` from the model).
    accounting : {"vector", "paper-1d"}
        Worst case over the :math:`\ell_\beta` ball (default), or the GG paper's 1-D
        number (labelled: not a worst-case certificate for ``beta != 2``).
    """

    BETA: float = 2.0
    ACCOUNTING: str = "vector"
    ACCOUNTANT: Optional[Callable[[], Any]] = None

    def __init__(self, beta: Optional[float] = None,
                 accountant: Optional[Callable[[], Any]] = None, *,
                 dimension: Optional[int] = None, accounting: Optional[str] = None):
        self.history = []
        self.beta = float(self.BETA if beta is None else beta)
        check_beta(self.beta)  # validates beta
        self._factory = accountant or self.ACCOUNTANT
        self.accounting = check_accounting(self.ACCOUNTING if accounting is None else accounting)
        self._dimension = dimension

    @property
    def dimension(self) -> Optional[int]:
        """``d``; changing it restarts the accounting of ``history``."""
        return self._dimension

    @dimension.setter
    def dimension(self, d: Optional[int]) -> None:
        self._dimension = d
        self._acc, self._applied = None, []

    @classmethod
    def mechanism(cls) -> str:
        suffix = "" if cls.ACCOUNTING == "vector" else "-" + cls.ACCOUNTING
        return f"sampledprv-gg-beta={cls.BETA!r}{suffix}"

    def step(self, *, noise_multiplier: float, sample_rate: float) -> None:
        if self.history and self.history[-1][:2] == (noise_multiplier, sample_rate):
            sigma, q, n = self.history.pop()
            self.history.append((sigma, q, n + 1))
        else:
            self.history.append((noise_multiplier, sample_rate, 1))

    def __len__(self) -> int:
        return sum(n for _, _, n in self.history)

    def _accountant(self):
        if self._factory is not None:
            return self._factory()
        if self.accounting == "vector" and self.beta != 2.0:
            return make_accountant(self.accounting, self.beta)
        # online spectra: each new step costs O(n); the horizon doubles when exceeded
        return Accountant(horizon=max(DEFAULT_HORIZON, 2 * len(self)))

    def _current(self):
        """The persistent accountant brought up to ``history``: new steps are composed
        into it; any other change of ``history`` starts a fresh one."""
        history = [(float(s), float(q), int(n)) for s, q, n in self.history]
        acc, applied = getattr(self, "_acc", None), getattr(self, "_applied", [])
        extends = len(history) >= len(applied) and all(
            h[:2] == a[:2] and (h[2] == a[2] or (i == len(applied) - 1 and h[2] >= a[2]))
            for i, (h, a) in enumerate(zip(history, applied)))
        if acc is None or not extends:
            acc, applied = self._accountant(), []
        for i, (sigma, q, n) in enumerate(history):
            new = n - (applied[i][2] if i < len(applied) else 0)
            if new > 0:
                acc = acc.compose(step_mechanism(self.beta, sigma, q, self.dimension,
                                                 self.accounting), count=new) or acc
        self._acc, self._applied = acc, history
        return acc

    def get_epsilon_interval(self, delta: float):
        """Certified epsilon interval of everything in ``history`` (steps added since the
        last call are composed into the same accountant: ``O(n)`` per step with the
        default online accountant)."""
        return label(self._current().epsilon(delta=delta), self.accounting, self.beta)

    def get_epsilon(self, delta: float, **kwargs: Any) -> float:
        """Certified upper bound on epsilon at ``delta`` (0 before any step)."""
        if not self.history:
            return 0.0
        return float(self.get_epsilon_interval(delta).upper)


_CLASSES: Dict[tuple, Type[GGOpacusAccountant]] = {}


def gg_accountant_class(beta: float, accounting: str = "vector") -> Type[GGOpacusAccountant]:
    """A :class:`GGOpacusAccountant` subclass with ``BETA = beta`` (and ``ACCOUNTING``),
    registered with Opacus (``opacus.accountants.create_accountant(cls.mechanism())`` then
    builds it); the name is ``"sampledprv-gg-beta=<beta>"``, with ``"-paper-1d"`` appended
    for the paper's accounting."""
    beta = check_beta(beta)
    check_accounting(accounting)
    key = (beta, accounting)
    if key not in _CLASSES:
        suffix = "" if accounting == "vector" else "_paper1d"
        cls = type(f"GGOpacusAccountant_beta{beta:g}{suffix}".replace(".", "_"),
                   (GGOpacusAccountant,),
                   {"BETA": beta, "ACCOUNTING": accounting, "__module__": __name__})
        register_accountant(cls.mechanism(), cls, force=True)
        _CLASSES[key] = cls
    return _CLASSES[key]


class GGPrivacyEngine(PrivacyEngine):
    r"""``PrivacyEngine`` for beta-DP-SGD: ``ell_beta`` clipping, GG noise, sampledprv accounting.

    Use it exactly like Opacus' engine::

        engine = GGPrivacyEngine(beta=1.5)
        model, optimizer, loader = engine.make_private_with_epsilon(
            module=model, optimizer=optimizer, data_loader=loader,
            target_epsilon=3.0, target_delta=1e-5, epochs=10, max_grad_norm=1.0)
        ...
        engine.get_epsilon(1e-5)           # certified upper bound
        engine.calibration                 # sampledprv.Calibration of the noise multiplier

    Only flat clipping on a single process (``grad_sample_mode`` "hooks" or "functorch")
    is supported.  ``accountant`` is a sampledprv accountant factory.  ``accounting``:
    ``"vector"`` (default; worst case over the :math:`\ell_\beta` ball with ``d`` the
    model's trainable parameter count) or ``"paper-1d"`` (the GG paper's number, not a
    worst-case certificate for ``beta != 2``).
    """

    def __init__(self, *, beta: float, accountant: Optional[Callable[[], Any]] = None,
                 secure_mode: bool = False, accounting: str = "vector"):
        if secure_mode:
            raise ValueError("GGPrivacyEngine does not support secure_mode=True")
        self.accounting = check_accounting(accounting)
        cls = gg_accountant_class(beta, self.accounting)
        super().__init__(accountant=cls.mechanism(), secure_mode=False)
        self.accountant = cls(beta, accountant)
        self.beta = float(beta)
        self._sp_accountant = accountant
        self.calibration: Optional[Calibration] = None

    def make_private(self, *, module, **kwargs):
        """Opacus' ``make_private``; also sets the accountant's dimension ``d`` to the
        module's number of trainable parameters."""
        self.accountant.dimension = _trainable(module)
        return super().make_private(module=module, **kwargs)

    def _prepare_optimizer(self, *, optimizer, noise_multiplier, max_grad_norm, expected_batch_size,
                           loss_reduction="mean", distributed=False, clipping="flat",
                           noise_generator=None, grad_sample_mode="hooks", **kwargs):
        if clipping != "flat" or distributed or grad_sample_mode not in ("hooks", "functorch"):
            raise ValueError("GGPrivacyEngine supports clipping='flat', distributed=False and "
                             "grad_sample_mode in ('hooks', 'functorch'); got "
                             f"clipping={clipping!r}, distributed={distributed!r}, "
                             f"grad_sample_mode={grad_sample_mode!r}")
        if isinstance(optimizer, DPOptimizer):
            optimizer = optimizer.original_optimizer
        return GGDPOptimizer(optimizer, beta=self.beta, noise_multiplier=noise_multiplier,
                             max_grad_norm=max_grad_norm, expected_batch_size=expected_batch_size,
                             loss_reduction=loss_reduction, generator=noise_generator,
                             secure_mode=False, **kwargs)

    def calibrate_noise_multiplier(self, *, target_epsilon: float, target_delta: float,
                                   sample_rate: float, steps: int,
                                   dimension: Optional[int] = None) -> Calibration:
        r"""Smallest noise multiplier with certified ``epsilon <= target_epsilon`` after
        ``steps`` steps at ``sample_rate`` (:func:`sampledprv.calibrate`); with the
        default ``accounting="vector"`` the certificate covers the :math:`\ell_\beta` ball
        in ``dimension`` dimensions."""
        factory = self._sp_accountant or (
            lambda: make_accountant(self.accounting, self.beta, upper_only=True))
        return calibrate(lambda s: step_mechanism(self.beta, s, sample_rate, dimension,
                                                  self.accounting),
                         count=steps, epsilon=target_epsilon, delta=target_delta,
                         accountant=factory, bracket=(0.3, 3.0),
                         rtol=1e-3 if self.beta == 2.0 or self.accounting != "vector" else 5e-3)

    def make_private_with_epsilon(self, *, module, optimizer, data_loader, target_epsilon: float,
                                  target_delta: float, epochs: int, max_grad_norm: float,
                                  **kwargs):
        """Opacus' ``make_private_with_epsilon`` with the noise multiplier from
        :meth:`calibrate_noise_multiplier` (``steps = epochs * len(data_loader)``)."""
        sample_rate = 1.0 / len(data_loader)
        steps = int(epochs / sample_rate)
        self.calibration = self.calibrate_noise_multiplier(
            target_epsilon=target_epsilon, target_delta=target_delta,
            sample_rate=sample_rate, steps=steps, dimension=_trainable(module))
        return self.make_private(module=module, optimizer=optimizer, data_loader=data_loader,
                                 noise_multiplier=self.calibration.x,
                                 max_grad_norm=max_grad_norm, **kwargs)
