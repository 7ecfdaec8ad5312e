r"""A level of the multi-level tree in the frequency domain: compose, then regrid.

A tree level composes ``c`` copies of a node on mesh ``h`` and regrids the result
(randomized, mean-preserving: :mod:`sampledprv.engine.regrid`) onto ``H = f h``.  The
regridding is linear and shift-equivariant on the fine lattice: the mass at fine index
``n`` goes to coarse point ``q`` (fine index ``q f``) with weight
``max(0, 1 - |n - q f| / f)``.  It is the circular convolution with the triangle
``max(0, 1 - |r| / f)`` followed by keeping every ``f``-th point, and on a circle of
length ``N = f N'`` both act on the composed spectrum ``Y``: the triangle multiplies it
by the Fejér kernel

.. math:: T(m) = \frac{\sin^2(\pi m / N')}{f \sin^2(\pi m / N)}, \qquad T(0) = f,

and keeping every ``f``-th point folds it onto ``N'`` frequencies,

.. math:: D(k) = \frac1f \sum_{j=0}^{f-1} T(k + jN')\, Y(k + jN')

(the input is started up to ``f - 1`` points early so that position 0 of the composed
circle is a coarse point: no phase factor).

The inverse transform then has length ``N' = N / f`` instead of ``N``, and the fine law
(and its regridding pass) is never formed.  The result is the law that
:func:`~sampledprv.engine.compose.compose_lattices` followed by
:func:`~sampledprv.engine.regrid.regrid` gives, up to round-off, with the coarse cells at
the window's ends also receiving the fine masses up to ``f - 1`` points beyond it (true
mass of the composition; the spill bounds still count all mass outside the fine
window).  Round-off: the fine path's estimate for ``Y`` (each coarse mass is a
combination of fine masses with weights summing to one, so the total absolute error does
not grow) plus the same kind of estimate for the fold and the short inverse transform,
with the l1 and l2 terms of :func:`~sampledprv.engine.compose.roundoff_estimate`
(tests/test_compose_regrid.py checks both against extended-precision references:
random spiky laws, and wide sampled Gaussians whose powers are known in closed form).
"""

from __future__ import annotations

import math

import numpy as np

from .compose import (GridTooLargeError, _chernoff_window, _circular_window,
                      _composed_p_inf, _power, _spectral_norms, roundoff_estimate)
from .fft import irfft, next_fast_len, rfft
from .four_step_regrid import compose_fold_invert, split_for
from .lattice import LatticePMF

#: regridding factors made of these primes only are folded in the frequency domain (the
#: FFT length is a multiple of the factor; pocketfft has fast passes for these primes)
_FOLD_PRIMES = (2, 3, 5, 7)


def foldable(factor: int) -> bool:
    """Whether :func:`compose_regridded` handles ``factor`` (its primes are small)."""
    f = int(factor)
    if f < 2:
        return False
    for p in _FOLD_PRIMES:
        while f % p == 0:
            f //= p
    return f == 1


def _scale_pairs(pairs: np.ndarray, w: np.ndarray, out: np.ndarray) -> None:
    """``out[:, c] = pairs[:, c] * w`` for both columns ``c`` (float pairs)."""
    np.multiply(pairs[:, 0], w, out=out[:, 0])
    np.multiply(pairs[:, 1], w, out=out[:, 1])


#: frequencies per block of :func:`_fold` (its temporaries stay in the cache)
_FOLD_BLOCK = 2**15


def _fold(spectrum: np.ndarray, n: int, factor: int) -> np.ndarray:
    """``D(k)``, ``k = 0 .. N'/2``, from the half spectrum ``Y(0 .. N/2)`` for the phase
    ``phi = 0`` (module docstring).  The alias ``j`` covers the frequencies
    ``m = k + j N'``, read directly (``m <= N/2``) or mirrored (``Y(m) = conj Y(N - m)``);
    with ``theta = pi k / N`` its weight ``T / f`` is
    ``sin^2(f theta) / (f^2 sin^2(theta + pi j / f))``.  Works block by block of ``k``
    on the real and imaginary parts as float pairs (the temporaries stay in the cache)."""
    n_coarse = n // factor
    size = n_coarse // 2 + 1
    half = n // 2
    pairs = spectrum.view(np.float64).reshape(-1, 2)
    out = np.zeros(size, dtype=np.complex128)
    acc_all = out.view(np.float64).reshape(-1, 2)
    rot = [(math.cos(math.pi * j / factor), math.sin(math.pi * j / factor))
           for j in range(factor)]
    block = min(_FOLD_BLOCK, size)
    y = np.empty((block, 2))
    w = np.empty(block)
    tmp = np.empty(block)
    for k0 in range(0, size, block):
        k1 = min(k0 + block, size)
        b = k1 - k0
        theta = (np.pi / n) * np.arange(k0, k1)
        num = np.sin(factor * theta)
        num *= num
        num /= factor * factor
        sin_t = np.sin(theta, out=theta)
        cos_t = np.sqrt(1.0 - sin_t * sin_t)        # theta <= pi / (2 f): cos >= 0
        acc = acc_all[k0:k1]
        yb, wb, tb = y[:b], w[:b], tmp[:b]
        for j, (c_j, s_j) in enumerate(rot):
            np.multiply(sin_t, c_j, out=wb)
            np.multiply(cos_t, s_j, out=tb)
            wb += tb
            np.square(wb, out=wb)
            with np.errstate(divide="ignore", invalid="ignore"):
                np.divide(num, wb, out=wb)
            if j == 0 and k0 == 0:
                wb[0] = 1.0                    # T(0) / f = 1 (the limit at m = 0)
            a = j * n_coarse + k0              # frequencies a .. a + b - 1
            direct = max(0, min(b, half + 1 - a))
            # real and imaginary parts one after the other: the same products as
            # ``pairs * wb[:, None]``, whose innermost loop would run over the pair
            if direct:
                _scale_pairs(pairs[a:a + direct], wb[:direct], yb[:direct])
            if direct < b:                     # mirrored part: N - m runs downwards
                hi = n - (a + direct)
                lo = n - (a + b - 1)
                _scale_pairs(pairs[lo:hi + 1][::-1], wb[direct:], yb[direct:])
                np.negative(yb[direct:, 1], out=yb[direct:, 1])      # conjugate
            acc += yb
    return out


def compose_regridded(pmf: LatticePMF, count: int, factor: int, *, tail_mass: float,
                      max_size: int) -> tuple[LatticePMF, float, float, float]:
    """``regrid(compose_lattices([(pmf, count)]), factor)`` computed in the frequency
    domain (module docstring).

    Returns the regridded law on mesh ``factor * pmf.h``, the Chernoff spill bounds of
    the fine window (upper, lower) and the bound on the total absolute round-off."""
    return compose_regridded_window(pmf, count, factor, tail_mass=tail_mass,
                                    max_size=max_size)[:4]


def compose_regridded_window(pmf: LatticePMF, count: int, factor: int, *,
                             tail_mass: float, max_size: int
                             ) -> tuple[LatticePMF, float, float, float, float]:
    """:func:`compose_regridded` and the width (loss units) of the coarse window that
    holds its round-off: the law is trimmed of zero end bins, its errors are not (an
    entry rounded to zero may stand for a tiny exact mass)."""
    factor, count = int(factor), int(count)
    if not foldable(factor):
        raise ValueError(f"factor={factor} has a prime factor above {_FOLD_PRIMES[-1]}")
    if count < 1:
        raise ValueError(f"count must be >= 1, got {count}")
    comp = pmf.trimmed()
    h = comp.h
    p_inf, p_inf_error = _composed_p_inf([(comp, count)])
    lower, upper, spill = _chernoff_window([(comp, count)], math.log(tail_mass))
    n_lo, n_hi = int(np.floor(lower / h)), int(np.ceil(upper / h))
    q_lo, q_hi = n_lo // factor, n_hi // factor + 1       # coarse cells fed by the window
    need = max(n_hi - n_lo + 1 + 2 * factor, comp.probs.size + factor)
    n_coarse = max(next_fast_len(-(-need // factor)), q_hi - q_lo + 1)
    n = factor * n_coarse
    if n > max_size:
        raise GridTooLargeError(n, max_size)
    spill_up, spill_down = spill(n_lo * h - 0.5 * h, n_hi * h + 0.5 * h)

    # start the input r < f points early so that the composed circle's position 0 is a
    # coarse point (the input then starts on a multiple of f: the phase is 0)
    r = comp.offset % factor
    if r:
        x = np.zeros(comp.probs.size + r)
        x[r:] = comp.probs
    else:
        x = comp.probs
    split = split_for(n_coarse, factor)
    if split is not None:                      # long: one fused four-step pass
        res, fine, coarse = compose_fold_invert(x, count, factor, n_coarse, split)
        del x
    else:
        spectrum = _power(rfft(x, n), count)
        del x
        fine = _spectral_norms(spectrum)
        folded = _fold(spectrum, n, factor)
        del spectrum
        coarse = _spectral_norms(folded)
        res = irfft(folded, n_coarse)
        del folded
    origin = count * (comp.offset - r)         # fine index of circular position 0
    negative = float(-res[res < 0].sum())
    # the composed spectrum's estimate, then the fold and the short inverse: about
    # 8 + log2(N') roundings of each coarse entry
    rounding = roundoff_estimate(count, n, *fine) + roundoff_estimate(
        0, n_coarse, *coarse, depth=8.0 + math.log2(max(n_coarse, 2)))
    numeric = max(2.0 * negative, rounding) + p_inf_error

    q_origin = origin // factor                # coarse index of circular position 0
    probs = _circular_window(res, (q_lo - q_origin) % n_coarse, q_hi - q_lo + 1)
    del res
    law = LatticePMF(probs=probs, offset=q_lo, h=h * factor, shift=count * comp.shift,
                     p_inf=p_inf).trimmed()
    return law, spill_up, spill_down, numeric, (q_hi - q_lo) * h * factor


__all__ = ["compose_regridded", "compose_regridded_window", "foldable"]
