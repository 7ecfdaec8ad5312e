r"""beta-DP-SGD (GG paper, Algorithm 3) on per-sample gradients.

One step, with Poisson sampling rate ``q``, clip norm ``C`` and expected batch size ``L``:

.. math::

    \bar g_i = g_i \,/\, \max\!\big(1, \|g_i\|_\beta / C\big), \qquad
    \tilde g = \frac{1}{L}\Big(\sum_{i \in \text{batch}} \bar g_i + Y\Big), \qquad
    Y_j \overset{iid}{\sim} GG(\beta, s\,C),

where :math:`\|g\|_\beta = (\sum_j |g_j|^\beta)^{1/\beta}` runs over *all* coordinates of
all parameters.  Each step is accounted as
``PoissonSubsampled(GeneralizedGaussianVector(beta, s, d), q)`` with ``d`` the number of
parameters (sensitivity 1 after dividing by ``C``): a certified interval over the whole
:math:`\ell_\beta` ball (:class:`sampledprv.VectorGGAccountant`), exact PLD at
``beta = 2``.  ``accounting="paper-1d"`` keeps the GG paper's accounting (App. B.2: one 1-D
GG per step), which only covers a sensitivity vector concentrated on one coordinate; for
``beta != 2`` it is a lower bound on the worst case, not a certificate, and its intervals
say so.  A Gaussian-style noise multiplier ``sigma`` is ``s = sqrt(2) * sigma``; at
``beta = 2`` this is exactly DP-SGD with noise multiplier ``sigma``.

Per-sample gradients come from anywhere: ``torch.func.vmap(torch.func.grad(loss))``
(a dict or list of tensors of shape ``(B, *param.shape)``) or Opacus' ``p.grad_sample``.
"""

from __future__ import annotations

import math
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import torch

from .noise import generalized_gaussian
from ..gg.dpsgd_accounting import check_accounting
from ..gg.dpsgd_accounting import step_spec
from ..gg.dpsgd_accounting import label, make_accountant

__all__ = ["beta_norm", "clip_per_sample", "privatize_gradients", "BetaDPSGD",
           "poisson_sample_mask"]

Grads = Union[Sequence[torch.Tensor], Mapping[str, torch.Tensor]]


def _flatten(grads: Grads) -> Tuple[List[torch.Tensor], Optional[List[str]]]:
    if isinstance(grads, Mapping):
        return list(grads.values()), list(grads.keys())
    return list(grads), None


def _restore(values: List[torch.Tensor], keys: Optional[List[str]]) -> Grads:
    return dict(zip(keys, values)) if keys is not None else values


def _check_beta(beta: float) -> float:
    beta = float(beta)
    if not (1.0 <= beta < math.inf):
        raise ValueError(f"beta must be a finite number >= 1, got {beta!r}")
    return beta


def beta_norm(per_sample_grads: Grads, beta: float) -> torch.Tensor:
    r"""Per-sample :math:`\ell_\beta` norm over all parameters, shape ``(B,)``.

    Computed as :math:`m\,\|g/m\|_\beta` with :math:`m = \max_j |g_j|` so that
    :math:`|g_j|^\beta` neither overflows nor underflows for large ``beta``.
    """
    beta = _check_beta(beta)
    gs, _ = _flatten(per_sample_grads)
    flat = [g.reshape(g.shape[0], int(math.prod(g.shape[1:]))) for g in gs]
    m = torch.stack([f.abs().amax(dim=1) if f.shape[1] else f.new_zeros(f.shape[0])
                     for f in flat], dim=1).amax(dim=1)
    safe = torch.where(m > 0, m, torch.ones_like(m))
    parts = torch.stack([torch.linalg.vector_norm(f / safe[:, None], ord=beta, dim=1)
                         for f in flat], dim=1)
    return torch.linalg.vector_norm(parts, ord=beta, dim=1) * m


def clip_per_sample(per_sample_grads: Grads, beta: float,
                    max_norm: float) -> Tuple[Grads, torch.Tensor]:
    r"""Clip each per-sample gradient to :math:`\ell_\beta` norm at most ``max_norm``.

    :math:`\bar g_i = g_i \min(1, C'/\|g_i\|_\beta)` with :math:`C' = C(1 - 8\epsilon_{dtype})`,
    a margin that keeps the clipped norm ``<= C`` after floating-point round-off.

    Returns
    -------
    clipped : same structure as the input
    norms : torch.Tensor
        The per-sample norms before clipping, shape ``(B,)``.
    """
    c = float(max_norm)
    if not (0.0 < c < math.inf):
        raise ValueError(f"max_norm must be a positive finite number, got {max_norm!r}")
    gs, keys = _flatten(per_sample_grads)
    norms = beta_norm(gs, beta)
    target = c * (1.0 - 8.0 * torch.finfo(norms.dtype).eps)
    factor = torch.where(norms > target, target / norms.clamp_min(torch.finfo(norms.dtype).tiny),
                         torch.ones_like(norms))
    clipped = [g * factor.reshape((-1,) + (1,) * (g.dim() - 1)).to(g.dtype) for g in gs]
    return _restore(clipped, keys), norms


def privatize_gradients(per_sample_grads: Grads, *, beta: float, scale: float,
                        max_grad_norm: float, expected_batch_size: float,
                        generator: Optional[torch.Generator] = None) -> Grads:
    r"""The private gradient :math:`\frac{1}{L}(\sum_i \bar g_i + Y)`, ``Y ~ GG(beta, scale*C)``.

    Parameters
    ----------
    per_sample_grads : list or dict of tensors of shape ``(B, *param.shape)``
        Gradients of the records in the (Poisson) batch; ``B`` may be 0.
    beta, scale : float
        GG shape and scale in units of ``max_grad_norm`` (``scale = sqrt(2) * sigma``).
    max_grad_norm : float
        Clip norm ``C`` in the :math:`\ell_\beta` norm.
    expected_batch_size : float
        ``L = q * N``; dividing by the *expected* (not realised) size keeps the
        sensitivity analysis valid under Poisson sampling.
    generator : torch.Generator, optional
        Noise source (reproducible).
    """
    beta = _check_beta(beta)
    if not float(expected_batch_size) > 0:
        raise ValueError(f"expected_batch_size must be positive, got {expected_batch_size!r}")
    clipped, _ = clip_per_sample(per_sample_grads, beta, max_grad_norm)
    gs, keys = _flatten(clipped)
    sizes = [int(math.prod(g.shape[1:])) for g in gs]
    ref = gs[0]
    noise = generalized_gaussian(sum(sizes), beta, float(scale) * float(max_grad_norm),
                                 generator=generator, device=ref.device, dtype=ref.dtype)
    out, start = [], 0
    for g, size in zip(gs, sizes):
        y = noise[start:start + size].reshape(g.shape[1:])
        start += size
        out.append((g.sum(dim=0) + y) / float(expected_batch_size))
    return _restore(out, keys)


def poisson_sample_mask(n: int, q: float, *, generator: Optional[torch.Generator] = None,
                        device=None) -> torch.Tensor:
    """Boolean mask of a Poisson sample: each of ``n`` records kept with probability ``q``."""
    if not (0.0 < float(q) <= 1.0):
        raise ValueError(f"q must lie in (0, 1], got {q!r}; q = expected batch size / dataset size")
    if device is None and generator is not None:
        device = generator.device
    return torch.rand(n, generator=generator, device=device) < float(q)


class BetaDPSGD(torch.optim.Optimizer):
    r"""SGD (with optional momentum) on beta-DP-SGD private gradients.

    Call :meth:`step` with the per-sample gradients of the current Poisson batch (list in
    ``params`` order, or a dict whose values are in that order, e.g. from
    ``torch.func.vmap(torch.func.grad(...))``); without them it reads ``p.grad_sample``
    (Opacus' convention).  Each step is one ``PoissonSubsampled(GeneralizedGaussian(beta,
    scale), q)`` mechanism: see :meth:`mechanism`.

    Parameters
    ----------
    params : iterable of parameters
    lr : float
    beta : float
        GG shape (``>= 1``) of the noise and of the clipping norm.
    scale, noise_multiplier : float
        Exactly one: the GG scale in units of ``max_grad_norm``, or a Gaussian-style noise
        multiplier ``sigma`` (``scale = sqrt(2) * sigma``).
    max_grad_norm : float
        Clip norm ``C`` (``ell_beta``).
    expected_batch_size : float
        ``q * N``.
    momentum, weight_decay : float
        As in :class:`torch.optim.SGD` (applied after privatization: post-processing).
    generator : torch.Generator, optional
        Noise source.
    accounting : {"vector", "paper-1d"}
        ``"vector"`` (default): worst case over the :math:`\ell_\beta` ball in ``d``
        dimensions (``d`` = number of parameters), certified.  ``"paper-1d"``: the GG
        paper's 1-D number, not a worst-case certificate for ``beta != 2``.
    """

    def __init__(self, params: Iterable, lr: float, *, beta: float, max_grad_norm: float,
                 expected_batch_size: float, scale: Optional[float] = None,
                 noise_multiplier: Optional[float] = None, momentum: float = 0.0,
                 weight_decay: float = 0.0, generator: Optional[torch.Generator] = None,
                 accounting: str = "vector"):
        if (scale is None) == (noise_multiplier is None):
            raise ValueError("pass exactly one of scale= (GG scale) or noise_multiplier= "
                             "(sigma, scale = sqrt(2) * sigma)")
        if scale is None:
            if not float(noise_multiplier) > 0:
                raise ValueError(f"noise_multiplier must be positive, got {noise_multiplier!r}")
            scale = math.sqrt(2.0) * float(noise_multiplier)
        if not (0.0 < float(scale) < math.inf):
            raise ValueError(f"scale must be a positive finite number, got {scale!r}")
        super().__init__(params, dict(lr=lr, momentum=momentum, weight_decay=weight_decay))
        self.beta = _check_beta(beta)
        self.scale = float(scale)
        self.max_grad_norm = float(max_grad_norm)
        self.expected_batch_size = float(expected_batch_size)
        self.generator = generator
        self.steps = 0
        self.accounting = check_accounting(accounting)

    @property
    def _params(self) -> List[torch.Tensor]:
        return [p for group in self.param_groups for p in group["params"]]

    @property
    def dimension(self) -> int:
        """Number of noisy coordinates ``d`` (all parameters)."""
        return int(sum(p.numel() for p in self._params))

    def mechanism(self, sample_rate: float):
        """The spec of one step: ``PoissonSubsampled(GeneralizedGaussianVector(beta, scale,
        d), q)`` (``accounting="paper-1d"``: the 1-D ``GeneralizedGaussian(beta, scale)``)."""
        return step_spec(self.beta, self.scale, sample_rate, dimension=self.dimension,
                         accounting=self.accounting)

    def epsilon(self, delta: float, sample_rate: float, steps: Optional[int] = None):
        """Certified epsilon interval after ``steps`` steps (default: the steps taken).

        ``accounting="paper-1d"`` intervals for ``beta != 2`` are labelled as not a
        worst-case certificate in their ``method``."""
        steps = self.steps if steps is None else int(steps)
        if steps < 1:
            raise ValueError(f"steps must be >= 1 (no step taken yet?), got {steps}")
        acc = make_accountant(self.accounting, self.beta)
        acc = acc.compose(self.mechanism(sample_rate), count=steps) or acc
        return label(acc.epsilon(delta=delta), self.accounting, self.beta)

    @torch.no_grad()
    def privatize(self, per_sample_grads: Optional[Grads] = None) -> None:
        """Write the private gradient into ``p.grad`` for every parameter."""
        params = self._params
        if per_sample_grads is None:
            missing = [i for i, p in enumerate(params) if getattr(p, "grad_sample", None) is None]
            if missing:
                raise ValueError("no per-sample gradients: pass per_sample_grads= (e.g. from "
                                 "torch.func.vmap(torch.func.grad(loss))) or set p.grad_sample")
            per_sample_grads = [p.grad_sample for p in params]
        gs, _ = _flatten(per_sample_grads)
        if len(gs) != len(params):
            raise ValueError(f"got {len(gs)} per-sample gradients for {len(params)} parameters; "
                             "pass one per parameter, in parameter order")
        private = privatize_gradients(gs, beta=self.beta, scale=self.scale,
                                      max_grad_norm=self.max_grad_norm,
                                      expected_batch_size=self.expected_batch_size,
                                      generator=self.generator)
        for p, g in zip(params, private):
            p.grad = g.to(p.dtype).reshape(p.shape)

    @torch.no_grad()
    def step(self, per_sample_grads: Optional[Grads] = None, closure=None):  # type: ignore[override]
        """Privatize the per-sample gradients, then take an SGD(-momentum) step."""
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        self.privatize(per_sample_grads)
        for group in self.param_groups:
            for p in group["params"]:
                d = p.grad
                if group["weight_decay"]:
                    d = d.add(p, alpha=group["weight_decay"])
                if group["momentum"]:
                    buf = self.state[p].get("momentum_buffer")
                    if buf is None:
                        buf = self.state[p]["momentum_buffer"] = d.clone()
                    else:
                        buf.mul_(group["momentum"]).add_(d)
                    d = buf
                p.add_(d, alpha=-group["lr"])
        self.steps += 1
        return loss
