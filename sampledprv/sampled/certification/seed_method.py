r"""The seed method: the GG paper's SampledComposePRV (App. B.3, Algorithms 5-6, Theorem 6).

Used by ``SampledAccountant(certify="seed")``; see :func:`seed_pmf`,
:func:`circular_compose` and :func:`seed_tau_eta`.  Implementation notes (how the accountant feeds it):

* Algorithm 5 draws until ``2n`` samples lie in ``[-L, L]`` with ``L = (m + 1/2) h``;
  we draw ``n_samples/2`` per half and use the in-window draws.  Conditional on their
  number the in-window draws are i.i.d. from the truncated law, so Theorem 6 applies
  with ``n = min`` of the two in-window counts.
* The second half's mean comes from a histogram 64 times finer (bin midpoints), an
  error of at most ``h/128`` that is added to ``tau``.
* Theorem 6's :math:`P[|Y_i| \ge L]` and :math:`P[|\sum Y_i| \ge L - t]` are unknown
  for sampled PRVs; they are replaced by certified upper bounds (Clopper-Pearson on the
  out-of-window counts, and the envelope method's composed tails), each at ``alpha/2``,
  so the interval holds with probability ``>= 1 - alpha`` (the theorem's own failure
  probabilities are inside ``eta`` as in the paper).
* Computed from its own formula, ``eta`` contains :math:`2k\sqrt{L/(nh)}` and
  :math:`2k t`: it stays far above typical ``delta`` (above :math:`10^{-5}` for any practical ``n``), so the upper
  bound on :math:`\varepsilon(\delta)` is infinite unless ``delta > eta``.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from ...engine import LatticePMF
from ..histograms.histogram import LossHistogram

__all__ = ["seed_pmf", "circular_compose", "seed_tau_eta", "seed_default_params"]


def seed_pmf(hist1: LossHistogram, mean2: float, L: float, h: float) -> LatticePMF:
    r"""Algorithm 5, lines 4-10: the sampled PRV :math:`\tilde Y` on ``i h + mu_hat``.

    ``hist1`` bins the first half of the in-window draws on bins centred at ``i h``,
    ``|i| <= m`` (``lo = -(m + 1/2) h = -L``); ``mean2`` is the mean of the second half.
    :math:`q_i = p_i / \sum p`, :math:`\tilde\mu = \bar y^{(2)} - \sum_i i h q_i`,
    :math:`\hat\mu = \max(\min(\tilde\mu, h/2), 0)`.
    """
    c = np.asarray(hist1.counts, dtype=np.float64)
    if c.sum() <= 0:
        raise ValueError("no sample fell inside [-L, L]; enlarge L")
    m = (c.size - 1) // 2
    q = c / c.sum()
    grid = (np.arange(c.size) - m) * h
    mu_tilde = mean2 - float(np.dot(grid, q))
    mu_hat = max(min(mu_tilde, h / 2.0), 0.0)
    return LatticePMF(q, -m, h, shift=mu_hat, p_inf=0.0)


def circular_compose(components: Sequence[tuple[LatticePMF, int]], m: int) -> LatticePMF:
    r"""Algorithm 6, line 4: :math:`\bigoplus` of the components modulo ``2L = (2m+1) h``.

    Every component lives on ``i h + shift``, ``|i| <= m``; the sum of the indices is
    reduced into ``[-m, m]`` (circular FFT of length ``2m + 1``) and the shifts add.
    """
    import scipy.fft

    nn = 2 * m + 1
    spec = None
    shift = 0.0
    for pmf, c in components:
        x = np.zeros(nn)
        x[(np.arange(pmf.probs.size) + pmf.offset + m) % nn] += pmf.probs  # index i -> i + m
        f = scipy.fft.rfft(x)
        f = f ** c if c > 1 else f
        spec = f if spec is None else spec * f
        shift += c * pmf.shift
    res = scipy.fft.irfft(spec, n=nn)
    k_total = sum(c for _, c in components)
    # position r holds index sum s with s + k m = r (mod nn); map to s in [-m, m]
    r = np.arange(nn)
    s = ((r - k_total * m + m) % nn) - m
    out = np.zeros(nn)
    out[s + m] = np.clip(res, 0.0, None)
    return LatticePMF(out, -m, components[0][0].h, shift=shift, p_inf=0.0)


def seed_tau_eta(*, k: int, n: int, L: float, h: float, s: float, t: float,
                 tail_single: Sequence[float], tail_sum: float) -> tuple[float, float, dict]:
    r"""Theorem 6's :math:`\tau` and :math:`\eta` (GG paper, App. B.3).

    .. math::
        \eta = 2\sum_i P[|Y_i| \ge L] + 4 e^{-2s^2/(k h^2)} + 4k e^{-n t^2/(2L^2)}
               + 8k e^{-n t^2/2} + P[|\textstyle\sum_i Y_i| \ge L - t]
               + 2k\,(t + \sqrt{L/(n h)}),

        \tau = s + k\,(t + 2L(t/2 + \sqrt{L/(nh)})) + 2k\,(t/2 + \sqrt{L/(nh)}).

    ``tail_single`` are (certified upper bounds on) :math:`P[|Y_i| \ge L]`, one per
    composed mechanism (repeated ``count`` times), ``tail_sum`` bounds
    :math:`P[|\sum Y_i| \ge L - t]`; ``n`` is the number of draws in each half.
    """
    root = math.sqrt(L / (n * h))
    parts = {
        "2*sum P[|Y_i|>=L]": 2.0 * float(sum(tail_single)),
        "4exp(-2s^2/(kh^2))": 4.0 * math.exp(-2.0 * s * s / (k * h * h)),
        "4k exp(-nt^2/(2L^2))": 4.0 * k * math.exp(-n * t * t / (2.0 * L * L)),
        "8k exp(-nt^2/2)": 8.0 * k * math.exp(-n * t * t / 2.0),
        "P[|sum Y|>=L-t]": float(tail_sum),
        "2k(t+sqrt(L/(nh)))": 2.0 * k * (t + root),
    }
    eta = float(sum(parts.values()))
    tau = s + k * (t + 2.0 * L * (t / 2.0 + root)) + 2.0 * k * (t / 2.0 + root)
    return tau, eta, parts


def seed_default_params(*, k: int, n: int, L: float, delta: float,
                        max_points: int = 2**22) -> dict:
    r"""A choice of ``h, s, t`` for Theorem 6 (not part of the paper).

    ``t`` makes each exponential failure term about ``delta/20``; ``s`` does the same for
    :math:`4e^{-2s^2/(kh^2)}`; ``h`` (a power of two, ``2L/h <= max_points``) minimizes
    :math:`\tau`.  Any ``L, h, s, t`` give a valid statement; these keep it smallest.
    """
    target = max(delta / 20.0, 1e-300)
    t = max(math.sqrt(2.0 * math.log(8.0 * k / target) / n),
            L * math.sqrt(2.0 * math.log(4.0 * k / target) / n))
    best = None
    for e in range(-30, 6):
        h = 2.0 ** e
        if 2 * L / h > max_points or h > L:
            continue
        s = h * math.sqrt(k * math.log(4.0 / target) / 2.0)
        tau, _, _ = seed_tau_eta(k=k, n=n, L=L, h=h, s=s, t=t, tail_single=[0.0], tail_sum=0.0)
        if best is None or tau < best[0]:
            best = (tau, h, s)
    assert best is not None
    return {"L": L, "h": best[1], "s": best[2], "t": t}
