r"""Exact, reproducible Generalized Gaussian noise in PyTorch.

``GG(beta, scale)`` has density :math:`p(x) = \frac{\beta}{2 s \Gamma(1/\beta)}
\exp(-|x/s|^\beta)`, exactly ``scipy.stats.gennorm(beta, scale=s)`` (the package convention,
``docs/concepts.md``).  ``beta = 1`` is Laplace with ``b = s``; ``beta = 2`` is :math:`N(0, s^2/2)`.

Every draw goes through ``torch.rand``/``torch.randn`` with the caller's
:class:`torch.Generator`, so the same seed gives the same noise (on the same device and
dtype).  ``torch.distributions.Gamma`` accepts no generator, which is why this module
carries its own samplers:

``"rejection"`` (default for ``beta`` not in {1, 2})
    Sample the unit-scale target :math:`f(x) \propto e^{-|x|^\beta}` by rejection from

    * a Laplace envelope :math:`g(x) \propto e^{-c|x|}` for :math:`1 < \beta < 2`, with the
      optimal rate :math:`c = \beta^{1/\beta}`, bound :math:`\log M = 1 - 1/\beta`
      and acceptance :math:`\Gamma(1+1/\beta)\,\beta^{1/\beta} e^{1/\beta - 1}`
      (0.85 at beta = 1.5);
    * a Gaussian envelope :math:`g(x) \propto e^{-a x^2}` for :math:`\beta > 2`, with
      :math:`p = \beta/(\beta-2)`, :math:`K = (1-2/\beta)(2/\beta)^{2/(\beta-2)}`,
      the optimal :math:`a = (2Kp)^{-1/p}` and :math:`\log M = 1/(2p)`
      (acceptance 0.87 at beta = 3, 0.80 at beta = 4).

    The acceptance test is :math:`\log U \le -|x|^\beta + \psi(x) - \log M` with
    :math:`\psi(x) = c|x|` or :math:`a x^2`; it is exact (no approximation).
``"gamma"``
    :math:`|X| = s\,G^{1/\beta}` with :math:`G \sim \Gamma(1/\beta, 1)`, from a
    generator-aware Marsaglia-Tsang sampler with the shape boost
    :math:`G_{a} = G_{a+1} U^{1/a}`, so :math:`|X|/s = G_{1+1/\beta}^{1/\beta} U`.
``"fused"`` (default on CUDA devices for float32 when Triton is installed)
    The ziggurat of :mod:`sampledprv.torch.ziggurat` in one Triton kernel
    (:mod:`sampledprv.torch.fused_gg`): one 32-bit Philox word per output on the fast
    path (about 98% of outputs), wedge and tail cases finished in the same kernel, the
    scale applied at the store (``benchmarks/bench_torch_noise.py`` measures it against
    ``torch.randn``).
``beta == 2`` uses ``scale * randn / sqrt(2)``; ``beta == 1`` off the fused path uses
one uniform ``U``: :math:`|X| = -s\log(1 - \{2U\})`, sign of :math:`U - 1/2`.
"""

from __future__ import annotations

import math
from typing import Optional, Sequence, Tuple, Union

import torch

from .envelope import _envelope
from .fused_gg import fused_available, fused_generalized_gaussian

__all__ = ["generalized_gaussian", "sample_gamma", "envelope_acceptance"]

Shape = Union[int, Sequence[int], torch.Size]


def _check(beta: float, scale: float) -> Tuple[float, float]:
    try:
        beta, scale = float(beta), float(scale)
    except (TypeError, ValueError):
        raise ValueError(f"beta and scale must be real numbers, got {beta!r}, {scale!r}") from None
    if not (1.0 <= beta < math.inf):
        raise ValueError(f"beta must be a finite number >= 1, got {beta!r}; use beta in [1, inf) "
                         "(1 = Laplace, 2 = Gaussian)")
    if not (0.0 < scale < math.inf):
        raise ValueError(f"scale must be a positive finite number, got {scale!r}; a noise "
                         "multiplier sigma corresponds to scale = sqrt(2) * sigma")
    return beta, scale


def envelope_acceptance(beta: float) -> float:
    """Acceptance probability of the rejection sampler at ``beta`` (1 for beta in {1, 2})."""
    beta, _ = _check(beta, 1.0)
    if beta in (1.0, 2.0):
        return 1.0
    kind, rate, log_m = _envelope(beta)
    z_f = 2.0 * math.gamma(1.0 + 1.0 / beta)
    z_g = 2.0 / rate if kind == "laplace" else math.sqrt(math.pi / rate)
    return z_f / (math.exp(log_m) * z_g)


def _resolve(generator: Optional[torch.Generator], device, dtype):
    if device is None:
        device = generator.device if generator is not None else torch.device("cpu")
    device = torch.device(device)
    dtype = torch.get_default_dtype() if dtype is None else dtype
    if not dtype.is_floating_point:
        raise ValueError(f"dtype must be a floating point dtype, got {dtype}")
    # low-precision dtypes are sampled in float32 and cast at the end
    work = dtype if dtype in (torch.float32, torch.float64) else torch.float32
    return device, dtype, work


def _propose(m: int, beta: float, kind: str, rate: float, log_m: float, generator, device,
             dtype) -> Tuple[torch.Tensor, torch.Tensor]:
    r"""``m`` signed proposals and their rejection flags (unit-scale target).

    Laplace envelope: ``Y = c|X| ~ Exp(1)``; since :math:`c^\beta = \beta` the test reads
    :math:`\log|W| \le Y - Y^\beta/\beta - \log M`, and the sign is that of ``W = 2V - 1``.
    Gaussian envelope: ``X = Z / sqrt(2a)`` and the test reads
    :math:`\log V \le Z^2/2 - |X|^\beta - \log M`; the sign is that of ``Z``.
    """
    if kind == "laplace":
        y = torch.rand(m, generator=generator, device=device, dtype=dtype)
        y.neg_().log1p_().neg_()                                  # Exp(1)
        w = torch.rand(m, generator=generator, device=device, dtype=dtype).mul_(2.0).sub_(1.0)
        # y^beta as exp(beta log y): vectorized, unlike pow with a fractional exponent
        rhs = y.log().mul_(beta).exp_().mul_(-1.0 / beta).add_(y).sub_(log_m)
        x = y.mul_(1.0 / rate).copysign_(w)
        reject = w.abs_().log_() > rhs
    else:
        x = torch.randn(m, generator=generator, device=device, dtype=dtype)
        rhs = x.square().mul_(0.5).sub_(log_m)
        x.mul_(1.0 / math.sqrt(2.0 * rate))                       # N(0, 1/(2a))
        rhs.sub_(x.abs().log_().mul_(beta).exp_())
        v = torch.rand(m, generator=generator, device=device, dtype=dtype)
        reject = v.log_() > rhs
    return x, reject


def _rejection(n: int, beta: float, generator, device, dtype) -> torch.Tensor:
    """``n`` signed draws of the unit-scale GG by rejection (see module docstring).

    The first round proposes ``n`` candidates in place; later rounds redraw only the
    rejected positions, so no full-size compaction is needed.
    """
    kind, rate, log_m = _envelope(beta)
    acc = envelope_acceptance(beta)
    out, reject = _propose(n, beta, kind, rate, log_m, generator, device, dtype)
    todo = torch.nonzero(reject).squeeze(1)
    while todo.numel():
        k = todo.numel()
        x, bad = _propose(int(k / acc * 1.2) + 32, beta, kind, rate, log_m, generator, device,
                          dtype)
        x = x[~bad][:k]
        out[todo[:x.numel()]] = x
        todo = todo[x.numel():]
    return out


def sample_gamma(shape: Shape, concentration: float, *, generator: Optional[torch.Generator] = None,
                 device=None, dtype: Optional[torch.dtype] = None) -> torch.Tensor:
    r"""``Gamma(concentration, 1)`` draws with a :class:`torch.Generator` (Marsaglia-Tsang).

    For :math:`a \ge 1`: :math:`d = a - 1/3`, :math:`c = 1/\sqrt{9d}`; draw :math:`Z \sim N(0,1)`,
    :math:`V = (1 + cZ)^3`, :math:`U \sim U(0,1)` and accept :math:`dV` when :math:`V > 0` and
    :math:`\log U < Z^2/2 + d - dV + d\log V`.  For :math:`a < 1` use
    :math:`G_a = G_{a+1} U^{1/a}`.
    """
    a = float(concentration)
    if not (0.0 < a < math.inf):
        raise ValueError(f"concentration must be a positive finite number, got {concentration!r}")
    device, out_dtype, work = _resolve(generator, device, dtype)
    shape = torch.Size([shape] if isinstance(shape, int) else shape)
    n = shape.numel()
    boost = a < 1.0
    d = (a + 1.0 if boost else a) - 1.0 / 3.0
    c = 1.0 / math.sqrt(9.0 * d)
    out = torch.empty(n, device=device, dtype=work)
    filled = 0
    while filled < n:
        need = n - filled
        m = int(need * 1.1) + 64
        z = torch.randn(m, generator=generator, device=device, dtype=work)
        u = torch.rand(m, generator=generator, device=device, dtype=work)
        v = (1.0 + c * z) ** 3
        ok = v > 0
        logv = torch.log(torch.where(ok, v, torch.ones_like(v)))
        ok &= torch.log(u) < 0.5 * z * z + d - d * v + d * logv
        g = (d * v)[ok][:need]
        out[filled:filled + g.numel()] = g
        filled += g.numel()
    if boost:
        u = torch.rand(n, generator=generator, device=device, dtype=work)
        out = out * torch.exp(torch.log(u) / a)
    return out.reshape(shape).to(out_dtype)


def generalized_gaussian(shape: Shape, beta: float, scale: float = 1.0, *,
                         generator: Optional[torch.Generator] = None, device=None,
                         dtype: Optional[torch.dtype] = None,
                         method: str = "auto") -> torch.Tensor:
    r"""I.i.d. ``GG(beta, scale)`` noise of the given shape.

    Parameters
    ----------
    shape : int or sequence of int
        Output shape.
    beta : float
        Shape parameter, ``beta >= 1``.
    scale : float
        Scale ``s > 0``; density :math:`\propto \exp(-|x/s|^\beta)`.  A noise multiplier
        ``sigma`` corresponds to ``scale = sqrt(2) * sigma``; in beta-DP-SGD the noise
        added to the sum of clipped gradients has scale ``scale * max_grad_norm``.
    generator : torch.Generator, optional
        Source of randomness (its device is used when ``device`` is None).
    device, dtype : optional
        Output device and floating dtype (default: the generator's device or CPU, and
        ``torch.get_default_dtype()``).  float16/bfloat16 are sampled in float32.
    method : {"auto", "rejection", "fused", "gamma"}
        Sampler; ``"auto"`` uses the direct samplers at beta in {1, 2}, the fused Triton
        kernel on CUDA float32 (when Triton is installed) and rejection otherwise.  All
        are exact; ``"fused"`` raises :class:`ValueError` where it cannot run.

    Returns
    -------
    torch.Tensor
        Noise with ``E[X] = 0`` and :math:`\mathrm{Var}[X] = s^2\Gamma(3/\beta)/\Gamma(1/\beta)`.
    """
    beta, scale = _check(beta, scale)
    if method not in ("auto", "rejection", "fused", "gamma"):
        raise ValueError(
            f"method must be 'auto', 'rejection', 'fused' or 'gamma', got {method!r}")
    device, out_dtype, work = _resolve(generator, device, dtype)
    shape = torch.Size([shape] if isinstance(shape, int) else shape)
    n = shape.numel()
    if n == 0:
        return torch.empty(shape, device=device, dtype=out_dtype)
    if beta == 2.0 and method != "gamma":
        x = torch.randn(n, generator=generator, device=device, dtype=work)
        return x.mul_(scale / math.sqrt(2.0)).reshape(shape).to(out_dtype)
    if method == "fused" or (method == "auto" and fused_available(device, work)):
        # beta = 1 included (the exponential ziggurat); the kernel applies the scale
        x = fused_generalized_gaussian(n, beta, scale, generator=generator, device=device)
        return x.reshape(shape).to(out_dtype)
    if beta == 1.0 and method != "gamma":
        # one uniform: |X| = -log(1 - frac(2U)) ~ Exp(1), sign(X) = sign(U - 1/2)
        u = torch.rand(n, generator=generator, device=device, dtype=work)
        x = torch.mul(u, 2.0).frac_().neg_().log1p_().neg_().copysign_(u.sub_(0.5))
    elif method == "gamma":
        g = sample_gamma(n, 1.0 + 1.0 / beta, generator=generator, device=device, dtype=work)
        w = torch.rand(n, generator=generator, device=device, dtype=work).mul_(2.0).sub_(1.0)
        x = g.pow(1.0 / beta) * w                       # |W| ~ U(0,1), sign(W) independent
    else:
        x = _rejection(n, beta, generator, device, work)
    return x.mul_(scale).reshape(shape).to(out_dtype)
