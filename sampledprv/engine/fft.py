r"""Real FFTs for the composition engine: numpy's pocketfft, and the 5-smooth lengths.

Why not ``scipy.fft``: it keeps the plans (twiddle tables) of the last lengths it
transformed in a process-wide cache, about 30 bytes per point of each length.  A long
composition transforms a dozen distinct lengths of millions of points (every level of
the tree, both directions), so at ``k = 1e7`` that cache alone held about 330 MiB of
peak memory for the rest of the process.  numpy's transforms (the same pocketfft
algorithms, float64 throughout) free their plans after each call, and cost the same
time here.

Transforms of length ``n`` are fast when ``n`` has only the prime factors 2, 3 and 5;
:func:`next_fast_len` returns the smallest such length at or above a target (the
lengths ``scipy.fft.next_fast_len(n, real=True)`` returns).
"""

from __future__ import annotations

import numpy as np


def rfft(x: np.ndarray, n: int) -> np.ndarray:
    """Spectrum ``X_j = sum_m x_m exp(-2 pi i j m / n)``, ``j = 0 .. n // 2``, of ``x``
    zero-padded (or cut) to length ``n``."""
    return np.fft.rfft(np.asarray(x, dtype=np.float64), n=int(n))


def irfft(spectrum: np.ndarray, n: int) -> np.ndarray:
    """Inverse of :func:`rfft`: the length-``n`` real sequence whose spectrum is
    ``spectrum`` (``x_m = (1/n) sum_j X_j exp(2 pi i j m / n)`` over the full
    Hermitian spectrum)."""
    return np.fft.irfft(spectrum, n=int(n))


def next_fast_len(target: int) -> int:
    """Smallest integer ``>= target`` of the form ``2^a 3^b 5^c`` (``target >= 1``)."""
    target = int(target)
    if target < 1:
        raise ValueError(f"target must be a positive integer, got {target}")
    if target <= 6:
        return target
    best = 1 << (target - 1).bit_length()              # the next power of two
    p5 = 1
    while p5 < best:
        p35 = p5
        while p35 < best:
            # smallest power-of-two multiple of p35 at or above the target
            quotient = -(-target // p35)
            candidate = p35 << (quotient - 1).bit_length()
            if candidate < best:
                best = candidate
            p35 *= 3
        p5 *= 5
    return best


__all__ = ["rfft", "irfft", "next_fast_len"]
