r"""Torch sampling backend, the draws: privacy losses drawn with torch on any device.

``SampledAccountant(..., backend="torch", device="cuda")`` draws the privacy losses with
torch on ``device`` (float64 throughout) and bins them there
(:mod:`sampledprv.sampled.histograms.torch_histogram`).  The law of every draw is the
law of the Numba path (:mod:`sampledprv.sampled.draws._mechloss`); the random streams
differ (torch generators), so the counts are equal in distribution, not bit for bit.

Sources.

* Built-in specs: ``Gaussian``, ``Laplace``, ``GeneralizedGaussian`` (1-D, any
  ``beta``), ``GGNMax`` and ``PoissonSubsampled`` of any of these.  With the noise
  ``y`` in units of the scale (``d = D/s``): under ``P0`` the loss is
  :math:`\ell = |y - d|^\beta - |y|^\beta` with :math:`|y|^\beta \sim \Gamma(1/\beta, 1)`
  and a random sign; under ``Q0`` :math:`\ell = |y|^\beta - |y + d|^\beta`.  The
  Gaussian uses the exact form :math:`\mu(\mu/2 - z)` (``z ~ N(0, 1)``) and Laplace
  :math:`|y - d| - |y|` with :math:`|y| \sim \mathrm{Exp}(1)`.  Subsampling at rate
  ``q``: remove :math:`\log(1 - q + q e^{\ell})` with the output drawn from
  :math:`(1 - q) Q_0 + q P_0`; add :math:`-\log(1 - q + q e^{\ell})`, output from ``Q0``.
* :class:`TorchLogDensityPair`: log-densities and samplers written in torch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np

from ... import mechanisms as M
from ...mechanisms.registry import family_of
from .hooks import find_hook

__all__ = ["TorchLogDensityPair", "torch_loss_sampler", "require_torch", "default_device"]

def require_torch() -> Any:
    try:
        import torch
    except ImportError:
        raise ValueError("backend='torch' needs PyTorch: pip install 'sampledprv[torch]' "
                         "(or use backend='numba')") from None
    return torch


def default_device() -> str:
    """``"cuda"`` when a CUDA GPU is visible, else ``"cpu"``."""
    torch = require_torch()
    return "cuda" if torch.cuda.is_available() else "cpu"


@dataclass(frozen=True)
class TorchLogDensityPair:
    r"""A mechanism given by torch log-densities and samplers of its outputs.

    Parameters
    ----------
    logp, logq : callable
        ``logp(w) -> Tensor``: log-densities of the outputs ``w`` (a tensor of shape
        ``(n,)`` or ``(n, d)``), returning shape ``(n,)``; ``-inf`` where the density
        vanishes.  Only the difference matters.
    sample_p, sample_q : callable
        ``sample(generator, size) -> Tensor``: ``size`` outputs drawn with the
        :class:`torch.Generator` ``generator`` on ``generator.device``.
    symmetric : bool
        Declare that :math:`\log q/p` under ``Q`` has the law of :math:`\log p/q`
        under ``P`` (one direction is sampled).
    name : str
        Label used in reports.

    Notes
    -----
    The remove PRV is :math:`\log p(w) - \log q(w)`, :math:`w \sim P`; the add PRV is
    :math:`\log q(w) - \log p(w)`, :math:`w \sim Q`.  Sampled on the device with
    ``backend="torch"``; with ``backend="numba"`` it runs on CPU torch through the
    Python fallback path.
    """

    logp: Callable
    logq: Callable
    sample_p: Callable
    sample_q: Callable
    symmetric: bool = False
    name: str = "TorchLogDensityPair"

    def __post_init__(self) -> None:
        for f in ("logp", "logq", "sample_p", "sample_q"):
            if not callable(getattr(self, f)):
                raise ValueError(f"{f} must be callable, got {getattr(self, f)!r}")

    def _torch_losses(self, direction: str, gen: Any, size: int) -> Any:
        torch = require_torch()
        sample = self.sample_p if direction == "remove" else self.sample_q
        w = sample(gen, size)
        lp = torch.as_tensor(self.logp(w), dtype=torch.float64)
        lq = torch.as_tensor(self.logq(w), dtype=torch.float64)
        if lp.shape != (size,) or lq.shape != (size,):
            raise ValueError(f"logp/logq must return shape ({size},), got {tuple(lp.shape)} "
                             f"and {tuple(lq.shape)}")
        return lp - lq if direction == "remove" else lq - lp

    def loss_sampler(self, direction: str) -> Callable:
        """Numpy-path source: ``sample(rng, size)`` on a CPU torch generator."""
        torch = require_torch()

        def f(rng: np.random.Generator, size: int) -> np.ndarray:
            gen = torch.Generator().manual_seed(int(rng.integers(2**63)))
            return self._torch_losses(direction, gen, size).cpu().numpy()
        return f

    numpy_loss_sampler = loss_sampler

    def check(self, rng: Optional[np.random.Generator] = None, n: int = 4096) -> dict:
        r"""Shapes, NaN and :math:`E_P[q/p] \le 1`, :math:`E_Q[p/q] \le 1` on ``n`` draws."""
        rng = np.random.default_rng(12345) if rng is None else rng
        report = {}
        for d in ("remove", "add"):
            y = self.loss_sampler(d)(rng, n)
            if np.isnan(y).any():
                raise ValueError(f"the {d} privacy losses of {self.name} contain NaN; the "
                                 "log-densities must be numbers or -inf on every sampled output")
            r = np.exp(-np.clip(y, -700, None))
            mean, se = float(r.mean()), float(r.std() / math.sqrt(n))
            report[f"E[exp(-Y_{d})]"] = (mean, se)
            if mean > 1.0 + max(6.0 * se, 0.02):
                raise ValueError(f"logp and logq of {self.name} do not look normalized "
                                 f"consistently: E[exp(-Y_{d})] = {mean:.4g} > 1; add the "
                                 "missing log-normalizing constant")
        return report


def _base_params(mech: Any) -> tuple[str, float, Any]:
    """``(kind, d, beta)`` of a built-in base mechanism (kind gauss: d = mu; kind
    additive: beta is the noise), its family's ``torch_source`` plug-in
    (:mod:`sampledprv.mechanisms.registry`)."""
    try:
        fam = family_of(mech)
    except TypeError:
        fam = None
    if fam is None or fam.torch_source is None:
        raise ValueError(f"backend='torch' samples Gaussian, Laplace, GeneralizedGaussian, "
                         "GGNMax, additive noise (and any family with a torch_source), their "
                         "PoissonSubsampled versions and TorchLogDensityPair, not "
                         f"{mech!r}; use backend='numba' for it")
    return fam.torch_source(mech)


def torch_loss_sampler(mechanism: Any, direction: str) -> Callable:
    """``f(generator, size) -> float64 Tensor`` of privacy losses on the generator's device."""
    if direction not in ("remove", "add"):
        raise ValueError(f"direction must be 'remove' or 'add', got {direction!r}")
    torch = require_torch()
    hook = find_hook(mechanism, "torch_loss_sampler")   # a spec's own torch sampler
    if hook is not None:
        return hook(direction)
    if isinstance(mechanism, TorchLogDensityPair):
        d_ = "remove" if mechanism.symmetric else direction
        return lambda gen, size: mechanism._torch_losses(d_, gen, size)
    q = 1.0
    sub = isinstance(mechanism, M.PoissonSubsampled)
    base = mechanism.mechanism if sub else mechanism
    if sub:
        q = float(mechanism.q)
    kind, d, beta = _base_params(base)
    f64 = torch.float64

    def pick(from_p: Any, at_p: Any, at_q: Any) -> Any:
        if isinstance(from_p, bool):
            return at_p() if from_p else at_q()
        return torch.where(from_p, at_p(), at_q())

    def base_loss(gen: Any, size: int, from_p: Any) -> Any:
        """:math:`\\ell = \\log p_0/q_0` at an output from P0 or Q0 (``from_p``: a bool
        or a boolean tensor)."""
        dev = gen.device
        if kind == "additive":       # inverse CDF of a uniform on (0, 1); beta is the noise
            u = torch.rand(size, generator=gen, device=dev, dtype=f64)
            u = torch.where(u > 0.0, u, torch.full_like(u, 2.0 ** -54))
            z = beta.ppf_xp(u, torch)
            lp = beta.logpdf_xp
            return pick(from_p, lambda: lp(z, torch) - lp(z - d, torch),
                        lambda: lp(z + d, torch) - lp(z, torch))
        if kind == "gauss":
            z = torch.randn(size, generator=gen, device=dev, dtype=f64)
            # P0: mu(mu/2 - z); Q0: -mu(mu/2 + z)
            return pick(from_p, lambda: d * (0.5 * d - z), lambda: -d * (0.5 * d + z))
        if kind == "laplace":
            e = torch.empty(size, device=dev, dtype=f64).exponential_(generator=gen)
        else:
            g = torch._standard_gamma(torch.full((size,), 1.0 / beta, device=dev, dtype=f64),
                                      generator=gen)
        sign = torch.where(torch.rand(size, generator=gen, device=dev, dtype=f64) < 0.5,
                           -1.0, 1.0).to(f64)
        if kind == "laplace":
            y = sign * e
            return pick(from_p, lambda: (y - d).abs() - e, lambda: e - (y + d).abs())
        y = sign * g.pow(1.0 / beta)
        return pick(from_p, lambda: (y - d).abs().pow(beta) - g,
                    lambda: g - (y + d).abs().pow(beta))

    log1mq = math.log1p(-q) if q < 1.0 else -math.inf
    logq = math.log(q)

    def f(gen: Any, size: int) -> Any:
        dev = gen.device
        if not sub:
            y = base_loss(gen, size, direction == "remove")
            return y if direction == "remove" else -y
        if direction == "remove":
            from_p: Any = torch.rand(size, generator=gen, device=dev, dtype=f64) < q
        else:
            from_p = False
        ell = base_loss(gen, size, from_p) + logq
        y = torch.logaddexp(torch.full_like(ell, log1mq), ell)
        return y if direction == "remove" else -y
    return f
