r"""FFT composition of lattice distributions with certified truncation.

The sum of independent lattice variables is a lattice variable whose pmf is the
convolution of theirs.  We compute it by one real FFT per distinct component, a
power of each spectrum (``count``-fold self-composition), a product across
components and one inverse FFT, on a circular array that covers a window
``[A, B]`` of the composed support.

Mass that the linear convolution puts outside the window wraps around.  It is
bounded, not ignored: by Chernoff's inequality with the *exact* moment generating
functions of the lattice components,

.. math:: P(S > B) \le \min_{\lambda>0} e^{-\lambda B} \prod_i M_i(\lambda)^{c_i},

and likewise below ``A``.  The window is chosen from the same bound so that each
side spills at most ``tail_mass``; the returned :class:`ComposedPMF` carries the
bounds so that callers add them to their error budget.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Optional, Sequence

import numpy as np

from ..core.advice import AdvisedError, Remedy
from . import workers
from .lattice import LatticePMF, _logsumexp_rows, block_moments
from .fft import (irfft, irfft_layout, layout_row_norms, layout_split, next_fast_len,
                  rfft, rfft_layout)

_EPS = np.finfo(np.float64).eps
#: block length of chunked elementwise passes over long spectra
_CHUNK = 2**20


class GridTooLargeError(AdvisedError):
    """The composition needs an FFT longer than the allowed maximum (a ``ValueError``)."""

    def __init__(self, needed: int, allowed: int, message: str = "") -> None:
        self.needed = needed
        self.allowed = allowed
        super().__init__(
            message or (f"the composition needs an FFT grid of {needed:,} points "
                        f"({needed * 8 * 3 / 2**30:.1f} GiB of working memory) but at most "
                        f"{allowed:,} are allowed"),
            [Remedy("eps_error", "raise", note="a larger eps_error gives a coarser mesh"),
             Remedy("max_grid_size", "set", float(needed), note="if you have the memory")])


@dataclass(frozen=True, eq=False)
class ComposedPMF:
    """The composed distribution on a window, with the bounds on what it left out.

    Attributes
    ----------
    probs : numpy.ndarray
        Composed masses on ``(offset + j) * h + shift`` (negatives from round-off
        clipped to zero).
    offset, h, shift : int, float, float
        Lattice description as in :class:`LatticePMF`.
    p_inf : float
        Composed mass at ``+inf``.
    spill_upper, spill_lower : float
        Chernoff bounds on the composed finite mass above / below the window (that
        mass is aliased into the window by the circular FFT).
    numeric_error : float
        Estimated bound on the total absolute floating-point error of ``probs``.
    """

    probs: np.ndarray
    offset: int
    h: float
    shift: float
    p_inf: float
    spill_upper: float
    spill_lower: float
    numeric_error: float

    @property
    def values(self) -> np.ndarray:
        return (self.offset + np.arange(self.probs.size)) * self.h + self.shift


def _chernoff_window(components: Sequence[tuple[LatticePMF, int]],
                     log_tail: float) -> tuple[float, float, object]:
    """Return (lower, upper) window ends (unshifted) with Chernoff spill <= exp(log_tail)
    on each side, and a function giving the spill bounds for any window."""
    coarse = []
    total_mean = total_var = lo_support = hi_support = 0.0
    for pmf, c in components:
        pts, logp = pmf.two_point_blocks()
        if pts.size == 0:
            continue
        mean, var = block_moments(pts, logp)
        total_mean += c * mean
        total_var += c * var
        lo_support += c * float(pts.min())
        hi_support += c * float(pts.max())
        coarse.append((pts, logp, c))
    sd = max(np.sqrt(total_var), components[0][0].h)
    lam = np.geomspace(1e-3, 1e3, 37) / sd
    log_m_pos = np.zeros_like(lam)
    log_m_neg = np.zeros_like(lam)
    for pts, logp, c in coarse:
        log_m_pos += c * _logsumexp_rows(logp, lam, pts)
        log_m_neg += c * _logsumexp_rows(logp, -lam, pts)

    def spill(lower: float, upper: float) -> tuple[float, float]:
        up = float(np.min(np.exp(np.minimum(log_m_pos - lam * upper, 0.0)))) \
            if upper < hi_support else 0.0
        down = float(np.min(np.exp(np.minimum(log_m_neg + lam * lower, 0.0)))) \
            if lower > lo_support else 0.0
        return up, down

    with np.errstate(invalid="ignore"):
        upper = float(np.min((log_m_pos - log_tail) / lam))
        lower = float(-np.min((log_m_neg - log_tail) / lam))
    upper = min(max(upper, total_mean), hi_support)
    lower = max(min(lower, total_mean), lo_support)
    return lower, upper, spill


def _composed_p_inf(components: Sequence[tuple[LatticePMF, int]]) -> tuple[float, float]:
    r"""Mass at :math:`+\infty` of the composition, and a bound on its round-off.

    With :math:`f_i` the finite mass and :math:`p_i` the mass at :math:`+\infty` of
    component ``i`` (the rest was set aside: mass at :math:`-\infty` or outside the
    window), the sum is :math:`+\infty` exactly when every component is finite or
    :math:`+\infty` and at least one is :math:`+\infty`:

    .. math:: p_\infty = \prod_i g_i^{c_i}\Big(1 - \prod_i (1 - p_i/g_i)^{c_i}\Big),
              \qquad g_i = f_i + p_i .

    Written as ``exp(sum c log g) * -expm1(sum c log1p(-p/g))`` it keeps full relative
    accuracy; the naive difference :math:`\prod g^c - \prod f^c` of two numbers near
    one loses everything below ``1e-16`` absolute (a mass of ``1e-10`` came out
    ``1e-6`` relatively too small).  The returned bound covers the relative error of
    the sums :math:`f_i` (pairwise summation), of the powers (``c`` times that) and of
    the logarithms and exponentials."""
    log_good = 0.0
    log_ratio = 0.0
    rel = 10.0
    for pmf, c in components:
        f = pmf.finite_mass
        g = f + pmf.p_inf
        if g <= 0.0:
            return 0.0, 0.0
        log_good += c * np.log(g)
        if pmf.p_inf >= g:                # every copy is at +inf
            log_ratio = -np.inf
        elif pmf.p_inf > 0:
            log_ratio += c * np.log1p(-pmf.p_inf / g)
        rel += c * (np.log2(max(pmf.probs.size, 2)) + 20.0)
    p_inf = float(np.exp(log_good) * -np.expm1(log_ratio))
    rel += abs(log_good) + (abs(log_ratio) if np.isfinite(log_ratio) else 0.0)
    return p_inf, float(p_inf * rel * _EPS)


#: spectrum entries per block of :func:`_power` (every squaring of a block happens while
#: it is in the cache: one pass over memory instead of one per squaring)
_POWER_BLOCK = 2**15


def _power(phi: np.ndarray, c: int) -> np.ndarray:
    """``phi ** c`` for an integer ``c >= 1`` by binary exponentiation, block by block
    and in place (``phi``, the caller's fresh spectrum, is overwritten and returned).

    Entries with ``|phi|^c`` below the smallest normal double are set to zero before
    being powered (for a spread-out distribution that is almost all of them, and
    subnormal arithmetic is slow)."""
    if c == 1:
        return phi
    threshold = np.exp(-700.0 / c)
    scratch = np.empty(min(_POWER_BLOCK, phi.size), dtype=phi.dtype)
    for i in range(0, phi.size, _POWER_BLOCK):
        block = phi[i:i + _POWER_BLOCK]
        block[np.abs(block) < threshold] = 0.0
        result = _binary_power(block, c, scratch[:block.size])
        if result is not block:
            block[...] = result
    return phi


def _threaded_power(phi: np.ndarray, c: int) -> np.ndarray:
    """:func:`_power` with the spectrum cut into one piece per worker thread
    (:mod:`sampledprv.engine.workers`): each entry is powered on its own, so the pieces
    give the same floats as one call."""
    pieces = workers.chunks(phi.size // _POWER_BLOCK, min_width=4)
    if len(pieces) <= 1:
        return _power(phi, c)
    bounds = [a * _POWER_BLOCK for a, _ in pieces] + [phi.size]
    workers.map_ordered(lambda i: _power(phi[bounds[i]:bounds[i + 1]], c),
                        range(len(pieces)))
    return phi


def _binary_power(base: np.ndarray, c: int, scratch: np.ndarray) -> np.ndarray:
    """``base ** c`` (``c >= 1``), squaring ``base`` in place; the result is ``base``
    itself (a power of two) or ``scratch`` (``base`` is overwritten either way)."""
    result = None
    while c:
        if c & 1:
            if result is None:
                if c == 1:
                    result = base                  # last bit: base is done
                else:
                    scratch[...] = base
                    result = scratch
            else:
                np.multiply(result, base, out=result)
        c >>= 1
        if c:
            np.multiply(base, base, out=base)
    return result


#: factor on the l1 (first-order) term of :func:`roundoff_estimate`: alone, that term was
#: exceeded by up to 20% on random spiky laws (and up to 3.3 times on wide smooth ones,
#: which the l2 term covers; tests/test_compose_regrid.py)
_ROUNDOFF_SAFETY = 1.5
#: weight of the spectrum's l2 term of the round-off estimate (:func:`roundoff_estimate`)
_L2_WEIGHT = 0.1


def _spectral_norms(spectrum: np.ndarray) -> tuple[float, float]:
    """``(2 sum |Y|, ||Y||_2)`` of a half spectrum ``Y_0 .. Y_(n/2)``: the first counts
    ``Y_0`` and ``Y_(n/2)`` twice (as every other entry), the second is the l2 norm over
    the full Hermitian spectrum (chunked)."""
    l1 = sq = 0.0
    for i in range(0, spectrum.size, _CHUNK):
        mags = np.abs(spectrum[i:i + _CHUNK])
        l1 += float(mags.sum())
        # not mags @ mags: OpenBLAS would start its own threads on every long dot
        # product (with the two directions' threads, the cores are oversubscribed)
        sq += float(np.einsum("i,i->", mags, mags))
    ends = abs(spectrum[0]) ** 2 + (abs(spectrum[-1]) ** 2 if spectrum.size > 1 else 0.0)
    return 2.0 * l1, math.sqrt(max(2.0 * sq - ends, 0.0))


def _layout_norms(a: np.ndarray, n1: int) -> tuple[float, float]:
    """:func:`_spectral_norms` of a spectrum in the four-step layout
    (:func:`~sampledprv.engine.fft.rfft_layout`), row block by row block."""
    sums = np.zeros(2)
    rows = max(1, _CHUNK // max(a.shape[1], 1))
    for r0 in range(0, a.shape[0], rows):
        sums += layout_row_norms(a[r0:r0 + rows], r0, n1)
    ends = abs(a[0, 0]) + abs(a[0, a.shape[1] // 2])     # Y_0 and Y_(n/2), counted twice
    return float(sums[0] + ends), math.sqrt(sums[1])


def roundoff_estimate(products: float, n: int, l1: float, l2: float,
                      depth: float | None = None) -> float:
    r"""Estimated total absolute round-off of an inverse FFT of length ``n`` of a
    spectrum reached through ``products`` rounded products, from the spectrum's norms
    ``l1 = 2 sum |Y|`` and ``l2 = ||Y||_2``:

    .. math:: (P + 2)\,\epsilon \log_2 n \left(1.5\,\frac{\|Y\|_1}{\sqrt n}
              + 0.1\,\|Y\|_2\right)

    (``depth`` replaces :math:`(P + 2) \log_2 n` when given).  The relative error of
    a spectrum entry grows like ``P eps`` through the powers (a relative error of the
    forward transform is raised to the ``P``-th power with the entry), and the inverse
    transform spreads it over the grid.  The l1 term is the first-order estimate for
    errors spread over the grid; it is tight for spiky laws but understates wide smooth
    ones, whose spectrum is concentrated in few frequencies (``||Y||_1 / sqrt(n)`` is
    then far below ``||Y||_2``): there the errors behave like noise of l2 norm
    ``~ P eps ||Y||_2``, which the inverse transform turns into an l1 error of the same
    size.  Against extended-precision references (random spiky laws, and sampled
    Gaussians of 3 to 3,000 points standard deviation raised to powers 4 to 10,000,
    known in closed form) the realised error was at most 0.07 of
    ``P eps log2(n) ||Y||_2``, and the l1 term alone was exceeded up to 3.3 times
    (design notes, "Seventh round")."""
    if depth is None:
        depth = (products + 2) * max(math.log2(n), 1.0)   # a 1-point grid still rounds
    return depth * _EPS * (_ROUNDOFF_SAFETY * l1 / math.sqrt(n) + _L2_WEIGHT * l2)


def _circular_window(res: np.ndarray, start: int, width: int) -> np.ndarray:
    """A copy of ``width`` consecutive entries of the circular array ``res`` from
    ``start`` (at most one wrap), negatives from round-off clipped to zero."""
    stop = start + width
    if stop <= res.size:
        out = res[start:stop].copy()
    else:
        out = np.concatenate([res[start:], res[:stop - res.size]])
    np.clip(out, 0.0, None, out=out)
    return out


def inverse_with_roundoff(spectrum: np.ndarray, n: int, products: int,
                          split: tuple[int, int, int] | None = None
                          ) -> tuple[np.ndarray, float]:
    """Inverse real FFT of a composed spectrum and the estimated bound on the total
    absolute round-off of the result.

    The relative error of a spectrum entry grows like ``products * eps`` through the
    powers and products; the inverse FFT spreads it over the grid.  The bound is
    estimated from the spectrum's norms (:func:`roundoff_estimate`), and never below
    twice the negative mass the inverse FFT produced."""
    if split is None:
        l1, l2 = _spectral_norms(spectrum)
        res = irfft(spectrum, n)
    else:                                      # the four-step layout of rfft_layout
        l1, l2 = _layout_norms(spectrum, split[0])
        res = irfft_layout(spectrum, n, split)
    negative = float(-res[res < 0].sum())
    return res, max(2.0 * negative, roundoff_estimate(products, n, l1, l2))


def compose_lattices(components: Sequence[tuple[LatticePMF, int]], *,
                     tail_mass: float, max_size: int = 2**26,
                     on_step: Optional[Callable[[int], None]] = None) -> ComposedPMF:
    """Distribution of the sum of independent lattice variables.

    Parameters
    ----------
    components : sequence of (LatticePMF, count)
        Each distribution enters ``count`` times.  All must share the mesh ``h``.
    tail_mass : float
        Target bound on the finite mass left outside the window on each side.
    max_size : int
        Largest FFT length allowed; :class:`GridTooLargeError` beyond it.
    on_step : callable, optional
        Called with ``1`` after each component's transform and power and after the
        inverse transform (``len(components) + 1`` calls): progress reporting.
    """
    if not components:
        raise ValueError("components is empty: compose at least one mechanism")
    h = components[0][0].h
    for pmf, c in components:
        if not np.isclose(pmf.h, h, rtol=1e-12, atol=0):
            raise ValueError("all components must share the mesh h")
        if int(c) < 1:
            raise ValueError(f"counts must be >= 1, got {c}")
    components = [(pmf.trimmed(), int(c)) for pmf, c in components]
    shift = sum(c * pmf.shift for pmf, c in components)
    p_inf, p_inf_error = _composed_p_inf(components)

    lower, upper, spill = _chernoff_window(components, np.log(tail_mass))
    n_lo = int(np.floor(lower / h))
    n_hi = int(np.ceil(upper / h))
    width = n_hi - n_lo + 1
    longest = max(pmf.probs.size for pmf, _ in components)
    n_fft = next_fast_len(max(width, longest))
    if n_fft > max_size:
        raise GridTooLargeError(n_fft, max_size)
    spill_up, spill_down = spill(n_lo * h - 0.5 * h, n_hi * h + 0.5 * h)

    # long transforms stay in the four-step layout: products and powers do not need the
    # natural order, and the inverse starts from the layout (no transpositions)
    split = layout_split(n_fft)
    spectrum = None
    origin = 0
    for pmf, c in components:
        phi = rfft(pmf.probs, n_fft) if split is None else rfft_layout(pmf.probs, n_fft, split)
        _threaded_power(phi.reshape(-1), c)
        if spectrum is None:
            spectrum = phi
        else:
            np.multiply(spectrum, phi, out=spectrum)
        del phi
        origin += c * pmf.offset
        if on_step is not None:
            on_step(1)
    k_total = sum(c for _, c in components)
    res, numeric_error = inverse_with_roundoff(spectrum, n_fft, k_total, split)
    del spectrum
    if on_step is not None:
        on_step(1)
    numeric_error += p_inf_error

    # the window is a contiguous run of the circular array (at most one wrap)
    probs = _circular_window(res, (n_lo - origin) % n_fft, width)
    del res
    return ComposedPMF(probs=probs, offset=n_lo, h=h, shift=shift, p_inf=p_inf,
                       spill_upper=spill_up, spill_lower=spill_down,
                       numeric_error=numeric_error)
