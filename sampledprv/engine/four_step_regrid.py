r"""A tree level's compose-and-regrid, fused into one four-step transform pair.

:func:`~sampledprv.engine.compose_regrid.compose_regridded` takes the composed spectrum
``Y`` of length ``N = f N'``, folds it onto ``N'`` frequencies and inverts.  With the
four-step layout of :mod:`sampledprv.engine.fft` (``N = n_1 n_2``, frequency
``m = k_1 + n_1 k_2`` held at ``a[k_1, k_2]``, ``k_1 \le n_1 / 2``) and ``n_2 = f n_2'``,
the fold acts on each row alone: the aliases of coarse frequency
``k = k_1 + n_1 k_2'`` are ``m = k + j N' = k_1 + n_1 (k_2' + j n_2')``, the same row, so

.. math:: D[k_1, k_2'] = \sum_{j<f} w_j(k)\, a[k_1, k_2' + j n_2'], \qquad
          w_j(k) = \frac{\sin^2(f\theta)}{f^2 \sin^2(\theta + \pi j / f)},\ \theta = \pi k / N,

and ``D`` (rows ``k_1 \le n_1/2``, all ``k_2'``) is exactly the layout from which the
inverse four-step transform of length ``N' = n_1 n_2'`` starts.  So after the column
transforms, everything else -- twiddles, row transform, the ``c``-th power, the
spectral norms of the round-off estimate, the fold, the short inverse row transform and
its twiddles -- runs block by block of rows while the block is in the cache, and the
column inverse transforms give the coarse law in natural order.  Neither transposition
of the two one-dimensional four-step transforms is needed, nor the full-length natural
order spectrum: the peak memory of a level is the ``(n_1/2 + 1) n_2`` row array (16
bytes per frequency), the input and the output, and on machines where the first touch
of fresh memory is dear (page faults that the hypervisor serves) that is most of the
gain.

The arithmetic is that of the unfused path (same transforms, same twiddle tables; the
fold weights by angle-addition tables instead of library sines, a few ulps apart), so
its round-off estimate (:func:`~sampledprv.engine.compose.roundoff_estimate`) applies
unchanged, with the spectral norms formed over the same frequencies:
``2 sum_{m <= N/2} |Y_m|`` and ``||Y||_2`` over the full spectrum (each row
``0 < k_1 < n_1/2`` stands for itself and its mirror image, rows ``0`` and ``n_1/2``
hold each of their frequencies once).  Row blocks whose power underflowed to zero are
skipped (their fold and inverse are zeros).
"""

from __future__ import annotations

import math

import numpy as np

from . import fft, workers
from .compose import _power

#: bytes of row data per block of the row pass (about the second-level cache; smaller
#: blocks measured slower, larger ones no faster)
_BLOCK_BYTES = 2**20


def split_for(n_coarse: int, factor: int) -> tuple[int, int, int, int, int] | None:
    """``(n1, n2, s, n2c, sc)``: the four-step split ``n1 x n2c`` of the coarse length
    (twiddle split ``sc``) and ``n2 = factor n2c`` of the fine one (twiddle split
    ``s``), or ``None`` when the fused path does not apply (short transforms, or no
    admissible split)."""
    if factor * n_coarse < fft._FOUR_STEP_MIN:
        return None
    coarse = fft._four_step_split(int(n_coarse))
    if coarse is None:
        return None
    n1, n2c, sc = coarse
    s = fft._twiddle_split(factor * n2c)
    if s is None:
        return None
    return n1, factor * n2c, s, n2c, sc


def _fold_tables(h1: int, n1: int, n2c: int, n: int, factor: int
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Tables from which the angle-addition formulas give the sines and cosines of
    ``theta = alpha_k1 + beta_k2'`` and ``f theta`` (``alpha = pi k1 / N``,
    ``beta = pi n1 k2' / N``), and of the reflected angle
    ``phi = pi / f - theta = alpha'_k1 + beta'_k2'`` (``alpha' = pi (n1 - k1) / N``,
    ``beta' = pi n1 (n2' - 1 - k2') / N``): each a ``(4, .)`` array of
    ``sin x, cos x, sin f x, cos f x`` (library values, within an ulp).  All angles are
    in ``[0, pi/f]``, so the sums of products lose nothing to cancellation where the
    results are small -- except ``sin f theta`` and ``sin(theta + pi (f-1)/f)`` as
    ``theta -> pi/f``, which the last alias therefore takes from ``phi``."""
    def table(x: np.ndarray) -> np.ndarray:
        return np.stack([np.sin(x), np.cos(x), np.sin(factor * x), np.cos(factor * x)])
    k1 = np.arange(h1, dtype=np.float64)
    k2 = np.arange(n2c, dtype=np.float64)
    return (table((math.pi / n) * k1), table((math.pi * n1 / n) * k2),
            table((math.pi / n) * (n1 - k1)), table((math.pi * n1 / n) * (n2c - 1 - k2)))


def _fold_rows(block: np.ndarray, row0: int, factor: int,
               tables: tuple[np.ndarray, np.ndarray], out: np.ndarray) -> None:
    """``out[r, k2'] = sum_j w_j(k) block[r, k2' + j n2']`` (module docstring), as float
    pairs."""
    rows, n2 = block.shape
    n2c = n2 // factor
    tr, tc, rr, rc = tables
    sa, ca, sfa, cfa = (t[row0:row0 + rows, None] for t in tr)
    sb, cb, sfb, cfb = tc
    # sin(theta), cos(theta), sin(f theta)^2 / f^2 with theta = alpha + beta
    sin_t = sa * cb
    sin_t += ca * sb
    cos_t = ca * cb
    cos_t -= sa * sb
    num = sfa * cfb
    num += cfa * sfb
    num *= num
    num *= 1.0 / (factor * factor)
    # the last alias from phi = pi/f - theta: w = sin(f phi)^2 / (f^2 sin(phi)^2)
    # (sin(theta + pi (f-1)/f) = sin(phi), sin(f theta) = sin(f phi))
    sa, ca, sfa, cfa = (t[row0:row0 + rows, None] for t in rr)
    sb, cb, sfb, cfb = rc
    sin_p = sa * cb
    sin_p += ca * sb
    last = sfa * cfb
    last += cfa * sfb
    last /= factor * sin_p
    np.square(last, out=last)
    w = np.empty_like(num)
    tmp = np.empty_like(num)
    term = np.empty((rows, n2c, 2))
    src = block.view(np.float64).reshape(rows, n2, 2)
    acc = out.view(np.float64).reshape(rows, n2c, 2)
    acc[...] = 0.0
    for j in range(factor):
        if j == factor - 1:
            w = last                               # phi > 0 on every stored row
        else:
            np.multiply(sin_t, math.cos(math.pi * j / factor), out=w)
            np.multiply(cos_t, math.sin(math.pi * j / factor), out=tmp)
            w += tmp
            np.square(w, out=w)
            with np.errstate(divide="ignore", invalid="ignore"):
                np.divide(num, w, out=w)
        if row0 == 0:
            w[0, 0] = 1.0 if j == 0 else 0.0      # T(0) / f = 1; the other aliases of 0
        # the real and imaginary parts one after the other (the same products as
        # ``src * w[:, :, None]``, whose innermost loop would run over the pair: 3x slower)
        part = src[:, j * n2c:(j + 1) * n2c]
        np.multiply(part[..., 0], w, out=term[..., 0])
        np.multiply(part[..., 1], w, out=term[..., 1])
        acc += term


def compose_fold_invert(x: np.ndarray, count: int, factor: int, n_coarse: int,
                        split: tuple[int, int, int, int, int]
                        ) -> tuple[np.ndarray, tuple[float, float], tuple[float, float]]:
    """The coarse circular law of length ``n_coarse``: ``x`` (zero-padded to
    ``N = factor n_coarse``) composed ``count`` times, folded (Fejér-weighted) and
    inverted, with the norms ``(2 sum_{m <= N/2} |Y_m|, ||Y||_2)`` of the composed and
    of the folded spectra (for the round-off estimate, as
    :func:`~sampledprv.engine.compose._spectral_norms` gives them).  ``split`` comes
    from :func:`split_for`."""
    n1, n2, s, n2c, sc = split
    n = n1 * n2
    a = fft.column_transforms(x, n, n1, n2)     # a[k1, t2], k1 = 0 .. n1 / 2
    h1 = n1 // 2 + 1
    flat = a.reshape(-1)
    block_rows = max(1, _BLOCK_BYTES // (16 * n2))
    forward = fft.twiddle_tables(h1, n2, n, s, -1.0)
    inverse = fft.twiddle_tables(h1, n2c, n1 * n2c, sc, 1.0)
    weights = _fold_tables(h1, n1, n2c, n, factor)
    threaded = workers.level_threads() > 1
    # one thread: the coarse rows r0 .. r1 - 1 overwrite the array's start in place (they
    # end at r1 n2c <= r1 n2, where the fine rows not yet read begin); several threads
    # finish blocks out of order, so they write to an array of their own
    target = np.empty(h1 * n2c, dtype=np.complex128) if threaded else flat
    scratch = None if threaded else np.empty((block_rows, n2c), dtype=np.complex128)

    def one_block(r0: int):
        """Row block ``r0 ..``: its norms (composed, folded), its ends at ``r0 = 0``."""
        r1 = min(r0 + block_rows, h1)
        block = a[r0:r1]
        fft.apply_twiddle(block, forward, r0)
        np.fft.fft(block, axis=1, out=block)     # a[k1, k2] = Y[k1 + n1 k2]
        _power(block.reshape(-1), count)
        if r0 and not block.any():
            # the power underflowed to zero on every entry (the powers flush entries
            # below exp(-700)): norms, fold, inverse and twiddles are all zeros
            target[r0 * n2c:r1 * n2c] = 0.0
            return None
        fine = fft.layout_row_norms(block, r0, n1)
        d = (np.empty((r1 - r0, n2c), dtype=np.complex128) if scratch is None
             else scratch[:r1 - r0])
        _fold_rows(block, r0, factor, weights, d)
        coarse_norms = fft.layout_row_norms(d, r0, n1)
        end = None
        if r0 == 0:                              # Y_(N/2) = a[0, n2/2], D's likewise
            end = (abs(block[0, 0]) + abs(block[0, n2 // 2]),
                   abs(d[0, 0]) + abs(d[0, n2c // 2]))
        np.fft.ifft(d, axis=1, out=d)            # over k2': t2
        fft.apply_twiddle(d, inverse, r0)
        target[r0 * n2c:r1 * n2c] = d.reshape(-1)
        return fine, coarse_norms, end

    fine_sums = np.zeros(2)                      # sum |Y|, sum |Y|^2 (full spectrum)
    coarse_sums = np.zeros(2)
    ends = np.zeros(2)                           # |Y_0| + |Y_(N/2)|, same for D
    # the sums are added in block order whatever the threads: the same floats
    for out in workers.map_ordered(one_block, range(0, h1, block_rows)):
        if out is not None:
            fine_sums += out[0]
            coarse_sums += out[1]
            if out[2] is not None:
                ends += out[2]
    res = np.empty((n1, n2c))                    # [t1, t2'] = x[t1 n2c + t2']
    fft.columns_irfft(target[:h1 * n2c].reshape(h1, n2c), n1, res)
    res = res.reshape(-1)
    # the l1 sums as 2 sum_{m <= N/2} |Y_m| (Y_0 and Y_(N/2) twice), the l2 norms full
    return (res, (float(fine_sums[0] + ends[0]), math.sqrt(fine_sums[1])),
            (float(coarse_sums[0] + ends[1]), math.sqrt(coarse_sums[1])))


__all__ = ["compose_fold_invert", "split_for"]
