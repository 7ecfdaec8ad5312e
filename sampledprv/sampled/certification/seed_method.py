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
from typing import Callable, Sequence

import numpy as np

from ...core import validation as v
from ...engine import LatticePMF, delta_of_eps, eps_of_delta
from ...engine.compose import roundoff_estimate
from ..histograms.histogram import LossHistogram
from .envelopes import cp_upper

__all__ = ["seed_pmf", "circular_compose", "seed_tau_eta", "seed_default_params", "seed_grid",
           "seed_window", "seed_half", "seed_direction", "seed_epsilon", "seed_delta",
           "SEED_METHOD"]

#: the method, in words (:attr:`Interval.method`)
SEED_METHOD = "SampledComposePRV (GG paper Alg. 5-6, Thm 6)"


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


def circular_compose(components: Sequence[tuple[LatticePMF, int]],
                     m: int) -> tuple[LatticePMF, float]:
    r"""Algorithm 6, line 4: :math:`\bigoplus` of the components modulo ``2L = (2m+1) h``,
    and the estimated total absolute round-off of the result.

    Every component lives on ``i h + shift``, ``|i| <= m``; the sum of the indices is
    reduced into ``[-m, m]`` (circular FFT of length ``2m + 1``) and the shifts add.
    The paper treats this FFT as exact; the round-off (in l1, so in ``delta``) is
    estimated as for every other FFT composition
    (:func:`~sampledprv.engine.compose.roundoff_estimate` from the composed spectrum's
    norms, never below twice the negative mass) and :func:`seed_direction` adds it to
    :math:`\eta`.  Negative entries are clipped to zero, which moves no entry away from
    the exact (nonnegative) circular convolution.
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
    assert spec is not None
    k_total = sum(c for _, c in components)
    # the half spectrum of an odd length has no Nyquist entry: every entry but Y_0 is
    # one of a conjugate pair (l1 counts Y_0 twice as well, which only enlarges it)
    mags = np.abs(spec)
    l1 = 2.0 * float(mags.sum())
    l2 = math.sqrt(max(2.0 * float(np.dot(mags, mags)) - float(mags[0]) ** 2, 0.0))
    res = scipy.fft.irfft(spec, n=nn)
    negative = float(-res[res < 0].sum())
    # a relative error of a transformed entry is raised to the c-th power with it: the
    # total count is the number of products, as in engine.compose.compose_lattices
    error = max(2.0 * negative, roundoff_estimate(k_total, nn, l1, l2))
    # position r holds index sum s with s + k m = r (mod nn); map to s in [-m, m]
    r = np.arange(nn)
    s = ((r - k_total * m + m) % nn) - m
    out = np.zeros(nn)
    out[s + m] = np.clip(res, 0.0, None)
    return LatticePMF(out, -m, components[0][0].h, shift=shift, p_inf=0.0), error


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


def seed_grid(L: float, h: float, max_grid: int) -> int:
    """Half-width ``m`` (in cells) of the grid ``[-L, L]`` on mesh ``h``; a
    :class:`ValueError` when ``2m + 1`` points exceed ``max_grid``."""
    L = v.positive("seed_params['L']", L)
    h = v.positive("seed_params['h']", h)
    cells = L / h
    if not cells < max_grid:
        raise ValueError(
            f"certify='seed' needs a grid of 2L/h = {2 * cells + 1:,.0f} points (L={L:.4g}, "
            f"h={h:.4g}), above max_grid={max_grid:,}; pass a larger "
            "seed_params['h'] (or a smaller 'L') or raise max_grid")
    m = int(round(cells - 0.5))
    if 2 * m + 1 > max_grid:
        raise ValueError(
            f"certify='seed' needs a grid of 2L/h = {2 * m + 1:,} points (L={L:.4g}, "
            f"h={h:.4g}), above max_grid={max_grid:,}; pass a larger "
            "seed_params['h'] (or a smaller 'L') or raise max_grid")
    return m


def seed_window(tail_of_sum: Callable[[float], float], top: float, *, k: int, n: int,
                delta: float) -> float:
    r"""A default ``L``: the smallest ``a`` (bisection in ``[0, max(top, 1e-3)]``) with
    certified :math:`P[|\sum Y_i| \ge a] \le \delta/20` (``tail_of_sum``), plus the
    ``t`` of :func:`seed_default_params` at ``L = a``."""
    target = max(delta / 20.0, 1e-300)
    lo_a, hi_a = 0.0, max(top, 1e-3)
    for _ in range(60):
        mid = 0.5 * (lo_a + hi_a)
        if tail_of_sum(mid) <= target:
            hi_a = mid
        else:
            lo_a = mid
    return hi_a + seed_default_params(k=k, n=n, L=hi_a, delta=delta)["t"]


def seed_half(hist1: LossHistogram, hist2: LossHistogram, L: float, h: float, fine: int,
              a: float) -> tuple[LatticePMF, float, int]:
    r"""One mechanism's part of Algorithm 5 from its two half-histograms on ``[-L, L]``.

    ``hist1`` has mesh ``h``, ``hist2`` mesh ``h / fine`` (its mean from bin midpoints).
    Returns the sampled PRV (:func:`seed_pmf`), the Clopper-Pearson upper bound at level
    ``a`` on :math:`P[|Y| \ge L]` from ``hist1``'s out-of-window draws, and the smaller
    number of in-window draws of the two halves.
    """
    c2 = np.asarray(hist2.counts, dtype=np.float64)
    x2 = -L + (np.arange(c2.size) + 0.5) * (h / fine)
    mean2 = float(np.dot(c2, x2) / max(c2.sum(), 1.0))
    out1 = hist1.n - int(np.sum(hist1.counts))
    n_in = int(min(np.sum(hist1.counts), np.sum(hist2.counts)))
    tail = float(cp_upper(np.array([out1]), hist1.n, a)[0])
    return seed_pmf(hist1, mean2, L, h), tail, n_in


def seed_direction(parts: Sequence[tuple[tuple[LatticePMF, float, int], int]], *, m: int,
                   n: int, L: float, h: float, s: float, t: float, fine: int,
                   tail_sum: float) -> tuple[LatticePMF, float, float, dict]:
    r"""Algorithm 6 and Theorem 6 for one direction: ``(Y_hat, tau, eta, eta terms)``.

    ``parts`` are ``(seed_half(...), count)`` of the composed mechanisms; ``n`` the
    in-window draws per half (the smallest over the mechanisms); ``tail_sum`` a
    certified bound on :math:`P[|\sum Y_i| \ge L - t]`.  ``tau`` includes
    ``h / (2 fine)``, the error of the midpoint mean of :func:`seed_half`; ``eta``
    includes the estimated round-off of the circular FFT (:func:`circular_compose`),
    which the paper's theorem leaves out (the term ``"FFT round-off"``).
    """
    k = sum(c for _, c in parts)
    tails = [half[1] for half, c in parts for _ in range(c)]
    tau, eta, terms = seed_tau_eta(k=k, n=n, L=L, h=h, s=s, t=t, tail_single=tails,
                                   tail_sum=tail_sum)
    tau += h / fine / 2.0
    y_hat, roundoff = circular_compose([(half[0], c) for half, c in parts], m)
    # the FFT's round-off moves the composed law by at most `roundoff` in l1, so every
    # delta(epsilon) of it by at most that much (the hockey-stick weights lie in [0, 1])
    terms["FFT round-off"] = roundoff
    return y_hat, tau, eta + roundoff, terms


def seed_epsilon(y: LatticePMF, tau: float, eta: float, delta: float) -> tuple[float, float, float]:
    r"""Theorem 6 at :math:`\delta`: ``(lower, estimate, upper)`` on
    :math:`\varepsilon(\delta)` (upper ``inf`` unless ``delta > eta``)."""
    vals = y.values
    up = eps_of_delta(vals, y.probs, 0.0, delta - eta) + tau if delta > eta else math.inf
    lo = max(eps_of_delta(vals, y.probs, 0.0, min(delta + eta, 1.0)) - tau, 0.0)
    return lo, eps_of_delta(vals, y.probs, 0.0, delta), up


def seed_delta(y: LatticePMF, tau: float, eta: float,
               epsilon: float) -> tuple[float, float, float]:
    r"""Theorem 6 at :math:`\varepsilon`: ``(lower, estimate, upper)`` on
    :math:`\delta(\varepsilon)` (not yet clipped to ``[0, 1]``)."""
    vals = y.values
    lo = delta_of_eps(vals, y.probs, 0.0, epsilon + tau) - eta
    up = delta_of_eps(vals, y.probs, 0.0, max(epsilon - tau, 0.0)) + eta
    return lo, delta_of_eps(vals, y.probs, 0.0, epsilon), up
