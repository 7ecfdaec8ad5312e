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

Long transforms (``n >= 1.5e6``) use the four-step algorithm on an ``n1 x n2`` array
(``n = n1 n2``, ``n1`` about 1,000): ``n2`` real transforms of length ``n1`` down the
columns, the twiddle factors ``exp(-+2 pi i k1 t2 / n)``, ``n1 / 2 + 1`` complex
transforms of length ``n2`` along the rows, and one blocked transposition to the
natural order.  With ``t = t1 n2 + t2`` and ``k = k1 + n1 k2``,

``X_k = sum_t2 w_n2^(t2 k2) [w_n^(t2 k1) sum_t1 x_(t1 n2 + t2) w_n1^(t1 k1)]``,

and the inverse runs the same steps backwards.  The sums are the same butterflies as a
one-dimensional transform plus two roundings by the twiddle tables' entries (each
correctly rounded), which the ``+ 2`` of the round-off estimate of
:func:`~sampledprv.engine.compose.inverse_with_roundoff` is meant to count;
``tests/test_compose_regrid.py`` checks both algorithms against long-double references
and against closed-form powers of wide sampled Gaussians.

Why: pocketfft allocates a scratch array of the transform's length on every call; above
glibc's 32 MiB ``mmap`` threshold that is fresh memory every time, and on
this project's machines the kernel's page faults on it cost as much as the arithmetic
(0.3-0.9 s of system time for one ``2.5e7``-point transform).  The short transforms'
scratch is reused from the heap, and their columns stay in the cache: the ``2.5e7``-point
forward transform went from 0.75-1.4 s to 0.45-0.6 s.

A tree level's compose-then-regrid does not need the natural order at all: the fold
onto the coarse mesh acts on each row of the four-step layout, so
:mod:`sampledprv.engine.four_step_regrid` runs the whole level (forward transform,
power, fold, inverse) on that layout with the pieces of this module
(:func:`twiddle_tables`, :func:`apply_twiddle`, :func:`_four_step_split`).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from numpy.lib.stride_tricks import as_strided

from . import workers

#: transforms of at least this many points use the four-step algorithm
_FOUR_STEP_MIN = 1_500_000
#: preferred length of the four-step's first (column) transforms
_COLUMN_LENGTH = 1000
#: rows per block of the transposition to natural order
_BLOCK_ROWS = 64


@lru_cache(maxsize=256)
def _four_step_split(n: int) -> tuple[int, int, int] | None:
    """``(n1, n2, s)`` with ``n1 n2 = n``, both even, ``n2 >= 4``, ``n1`` the divisor
    closest to ``_COLUMN_LENGTH`` (in ratio) in ``[16, 8192]``, and ``s`` the divisor of
    ``n2`` in ``[sqrt(n2) / 8, sqrt(n2)]`` that splits the twiddle tables
    (:func:`_twiddle_split`); ``None`` if there is none."""
    best = None
    for n1 in range(16, min(8192, n // 4) + 1, 2):
        if n % n1 or (n // n1) % 2:
            continue
        s = _twiddle_split(n // n1)
        if s is None:
            continue
        score = abs(math.log(n1 / _COLUMN_LENGTH))
        if best is None or score < best[0]:
            best = (score, n1, s)
    return None if best is None else (best[1], n // best[1], best[2])


def _twiddle_split(m: int) -> int | None:
    """Largest divisor ``s <= sqrt(m)`` of ``m`` if ``s >= sqrt(m) / 8``, else ``None``."""
    root = math.isqrt(m)
    for s in range(root, max(root // 8, 1) - 1, -1):
        if m % s == 0:
            return s
    return None


def _unit_roots(m: np.ndarray, n: int, sign: float) -> np.ndarray:
    """``exp(sign 2 pi i m / n)`` for integers ``m``: the angle, reduced to
    ``[-pi, pi]``, and its cosine and sine in numpy's extended type, each rounded once
    to double (where the extended type is a plain double, within a few ulps)."""
    m = m % n
    m = np.where(2 * m > n, m - n, m)
    two_pi = np.longdouble("6.283185307179586476925286766559005768")
    angle = (np.longdouble(sign) * two_pi) * m.astype(np.longdouble) / np.longdouble(n)
    out = np.cos(angle).astype(np.complex128)
    out.imag = np.sin(angle)
    return out


def twiddle_tables(rows: int, cols: int, n: int, s: int, sign: float
                   ) -> tuple[np.ndarray, np.ndarray]:
    """The twiddle factors ``exp(sign 2 pi i k j / n)`` of rows ``k < rows`` of a
    ``rows x cols`` array as two tables, with ``j = t s + r``:
    ``exp(sign 2 pi i k t s / n)`` (``t < cols / s``) and ``exp(sign 2 pi i k r / n)``
    (``r < s``).  Two small tables instead of one the size of the array (whose sines and
    cosines would cost as much as the transform), at the price of two roundings of each
    entry instead of one (:func:`apply_twiddle`)."""
    k = np.arange(rows, dtype=np.int64)[:, None]
    coarse = _unit_roots(k * (np.arange(cols // s, dtype=np.int64) * s)[None, :], n, sign)
    fine = _unit_roots(k * np.arange(s, dtype=np.int64)[None, :], n, sign)
    return coarse, fine


def apply_twiddle(a: np.ndarray, tables: tuple[np.ndarray, np.ndarray],
                  row0: int = 0) -> None:
    """``a[r, j] *= exp(sign 2 pi i (row0 + r) j / n)`` in place from the rows
    ``row0 ..`` of :func:`twiddle_tables`."""
    coarse, fine = tables
    rows, cols = a.shape
    s = fine.shape[1]
    a3 = a.reshape(rows, cols // s, s)
    a3 *= coarse[row0:row0 + rows, :, None]
    a3 *= fine[row0:row0 + rows, None, :]


def column_transforms(x: np.ndarray, n: int, n1: int, n2: int) -> np.ndarray:
    """``a[k1, t2] = sum_t1 x[t1 n2 + t2] exp(-2 pi i t1 k1 / n1)``, ``k1 <= n1 / 2``:
    the four-step's first pass over ``x`` zero-padded (or cut) to ``n = n1 n2``; only
    the rows ``t1`` that hold input are passed (the zero padding is free)."""
    size = min(x.size, n)
    x = np.ascontiguousarray(x[:size])
    full, rem = divmod(size, n2)    # full rows t1, and a last row holding rem entries
    out = np.empty((n1 // 2 + 1, n2), dtype=np.complex128)
    # each column is transformed on its own (zero-padded to n1): the columns t2 < rem hold
    # full + 1 entries, the others full.  Two strided views of x, no zero-padded copy of
    # it (a copy as long as x at the peak of a level); the same transforms, bit for bit.
    if full:
        columns_rfft(x[:full * n2].reshape(full, n2)[:, rem:], n1, out[:, rem:])
    else:
        out[:, rem:] = 0.0                       # columns holding no input at all
    if rem:
        last = as_strided(x, shape=(full + 1, rem), strides=(n2 * x.itemsize, x.itemsize),
                          writeable=False)
        columns_rfft(last, n1, out[:, :rem])
    return out


def columns_rfft(src: np.ndarray, n: int, out: np.ndarray) -> None:
    """``out = rfft(src, n, axis=0)``, the columns shared among the direction's worker
    threads (:mod:`sampledprv.engine.workers`; each column is its own transform)."""
    def one(chunk: tuple[int, int]) -> None:
        np.fft.rfft(src[:, chunk[0]:chunk[1]], n=n, axis=0, out=out[:, chunk[0]:chunk[1]])
    workers.map_ordered(one, workers.chunks(src.shape[1]))


def columns_irfft(src: np.ndarray, n: int, out: np.ndarray) -> None:
    """``out = irfft(src, n, axis=0)``, the columns shared as in :func:`columns_rfft`."""
    def one(chunk: tuple[int, int]) -> None:
        np.fft.irfft(src[:, chunk[0]:chunk[1]], n=n, axis=0, out=out[:, chunk[0]:chunk[1]])
    workers.map_ordered(one, workers.chunks(src.shape[1]))


def layout_split(n: int) -> tuple[int, int, int] | None:
    """``(n1, n2, s)`` of the four-step transforms of length ``n``, or ``None`` where
    :func:`rfft` and :func:`irfft` use numpy's one-dimensional transforms."""
    n = int(n)
    return _four_step_split(n) if n >= _FOUR_STEP_MIN else None


def rfft_layout(x: np.ndarray, n: int, split: tuple[int, int, int]) -> np.ndarray:
    """The spectrum of :func:`rfft` in the four-step layout, without the transposition:
    ``a[k1, k2] = X[k1 + n1 k2]`` for ``k1 <= n1 / 2`` and all ``k2`` (shape
    ``(n1 / 2 + 1, n2)``; the other frequencies are the conjugates of these).  Products
    and powers of spectra of one length can be formed in this layout."""
    n1, n2, s = split
    a = column_transforms(np.asarray(x, dtype=np.float64).reshape(-1), n, n1, n2)
    tables = twiddle_tables(a.shape[0], a.shape[1], n, s, -1.0)

    def rows(chunk: tuple[int, int]) -> None:   # rows are independent: one chunk per thread
        block = a[chunk[0]:chunk[1]]
        apply_twiddle(block, tables, chunk[0])
        np.fft.fft(block, axis=1, out=block)    # a[k1, k2] = X[k1 + n1 k2]
    workers.map_ordered(rows, workers.chunks(a.shape[0], min_width=8))
    return a


def irfft_layout(a: np.ndarray, n: int, split: tuple[int, int, int]) -> np.ndarray:
    """:func:`irfft` of a spectrum in the layout of :func:`rfft_layout` (``a`` is
    overwritten); the result is in natural order."""
    n1, n2, s = split
    tables = twiddle_tables(a.shape[0], a.shape[1], n, s, 1.0)

    def rows(chunk: tuple[int, int]) -> None:
        block = a[chunk[0]:chunk[1]]
        np.fft.ifft(block, axis=1, out=block)   # over k2: t2
        apply_twiddle(block, tables, chunk[0])
    workers.map_ordered(rows, workers.chunks(a.shape[0], min_width=8))
    out = np.empty((n1, n2))
    columns_irfft(a, n1, out)                   # [t1, t2] = x[t1 n2 + t2]
    return out.reshape(-1)


def layout_row_norms(block: np.ndarray, row0: int, n1: int) -> tuple[float, float]:
    """``sum |.|`` and ``sum |.|^2`` of the rows ``row0 ..`` of a layout spectrum,
    interior rows counted twice (their mirror images, the rows ``k1 > n1 / 2``, are not
    stored): summed over all rows, the l1 and squared l2 norms of the full spectrum."""
    mags = np.abs(block)
    k1 = np.arange(row0, row0 + block.shape[0])
    weights = np.where((k1 == 0) | (2 * k1 == n1), 1.0, 2.0)
    return (float((mags.sum(axis=1) * weights).sum()),             # numpy loops, not BLAS
            float((np.einsum("ij,ij->i", mags, mags) * weights).sum()))


def _rfft_four_step(x: np.ndarray, n: int, n1: int, n2: int, s: int) -> np.ndarray:
    """:func:`rfft` by the four-step algorithm (module docstring)."""
    a = rfft_layout(x, n, (n1, n2, s))
    h1 = n1 // 2 + 1
    rows_out = n2 // 2 + 1                      # natural order, rows of n1: k = k2 n1 + k1
    out = np.empty(rows_out * n1, dtype=np.complex128)
    o = out.reshape(rows_out, n1)
    for b0 in range(0, rows_out, _BLOCK_ROWS):
        b1 = min(b0 + _BLOCK_ROWS, rows_out)
        o[b0:b1, :h1] = a[:, b0:b1].T
        # k1 > n1 / 2: X[k] = conj X[n - k], n - k = (n1 - k1) + n1 (n2 - 1 - k2)
        np.conjugate(a[n1 - h1:0:-1, n2 - 1 - b0:n2 - 1 - b1:-1].T, out=o[b0:b1, h1:])
    return out[: n // 2 + 1]


def _irfft_four_step(spectrum: np.ndarray, n: int, n1: int, n2: int, s: int
                     ) -> np.ndarray:
    """:func:`irfft` by the four-step algorithm (module docstring)."""
    h1, half2 = n1 // 2 + 1, n2 // 2
    x2 = spectrum[: n // 2].reshape(half2, n1)  # X[k2 n1 + k1], k2 < n2 / 2
    a = np.empty((h1, n2), dtype=np.complex128)  # a[k1, k2] = X[k1 + n1 k2]
    for b0 in range(0, half2, _BLOCK_ROWS):
        b1 = min(b0 + _BLOCK_ROWS, half2)
        a[:, b0:b1] = x2[b0:b1, :h1].T
    # k2 >= n2 / 2 from X[k] = conj X[n - k]
    a[0, half2] = spectrum[n // 2]
    np.conjugate(x2[half2 - 1, n1 - 1:n1 - h1:-1], out=a[1:, half2])
    np.conjugate(x2[half2 - 1:0:-1, 0], out=a[0, half2 + 1:])
    for b0 in range(0, half2 - 1, _BLOCK_ROWS):     # k2 = half2 + 1 + j, row half2 - 2 - j
        b1 = min(b0 + _BLOCK_ROWS, half2 - 1)
        top = half2 - 2 - b0
        stop = half2 - 2 - b1
        src = x2[top:(stop if stop >= 0 else None):-1, n1 - 1:n1 - h1:-1]
        np.conjugate(src.T, out=a[1:, half2 + 1 + b0:half2 + 1 + b1])
    return irfft_layout(a, n, (n1, n2, s))


def rfft(x: np.ndarray, n: int) -> np.ndarray:
    """Spectrum ``X_j = sum_m x_m exp(-2 pi i j m / n)``, ``j = 0 .. n // 2``, of ``x``
    zero-padded (or cut) to length ``n``."""
    x = np.asarray(x, dtype=np.float64).reshape(-1)
    n = int(n)
    split = _four_step_split(n) if n >= _FOUR_STEP_MIN else None
    if split is None:
        return np.fft.rfft(x, n=n)
    return _rfft_four_step(x, n, *split)


def irfft(spectrum: np.ndarray, n: int) -> np.ndarray:
    """Inverse of :func:`rfft`: the length-``n`` real sequence whose spectrum is
    ``spectrum`` (``x_m = (1/n) sum_j X_j exp(2 pi i j m / n)`` over the full
    Hermitian spectrum; the imaginary parts of ``X_0`` and ``X_(n/2)`` are ignored)."""
    n = int(n)
    spectrum = np.asarray(spectrum)
    split = _four_step_split(n) if n >= _FOUR_STEP_MIN and \
        spectrum.size == n // 2 + 1 and spectrum.dtype == np.complex128 else None
    if split is None:
        return np.fft.irfft(spectrum, n=n)
    return _irfft_four_step(spectrum, n, *split)


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


__all__ = ["rfft", "irfft", "next_fast_len", "layout_split", "rfft_layout", "irfft_layout"]
