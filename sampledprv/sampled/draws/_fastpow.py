r"""Block power :math:`x^\beta` for a run-time ``beta``, vectorizable by LLVM.

libm ``pow`` costs about 13 ns a call and cannot be vectorized without Intel SVML, so
for a ``beta`` known only at run time the GG kernels evaluate
:math:`x^\beta = \exp(\beta \log x)` over a whole block in straight-line passes that
LLVM turns into SIMD code:

1. split ``x = 2^e m`` with :math:`m \in [\sqrt{1/2}, \sqrt 2)` by integer operations
   on the IEEE bits;
2. :math:`\log x = e \log 2 + \log m` with fdlibm's ``__ieee754_log`` kernel
   (:math:`s = f/(2+f)`, degree-14 odd minimax polynomial, error < 1 ulp);
3. :math:`\exp(t)` with fdlibm's ``__ieee754_exp`` kernel (Cody-Waite reduction
   :math:`t = k\log 2 + r`, rational approximation on :math:`|r| \le \log(2)/2`,
   error < 1 ulp) and the scale :math:`2^k` built from its bits.

Accuracy.  :math:`t = \beta \log x` carries an absolute error of about
:math:`|t| \cdot 2^{-53}`, which ``exp`` turns into a relative error of the same
size: below :math:`3|t| \cdot 10^{-16}`, i.e. < 1e-14 for :math:`x^\beta \le e^{30}`
(checked against libm in the tests).  That is the size of the rounding already
present in the GG loss :math:`|y - d|^\beta - |y|^\beta` (a difference of two
powers), so sampled losses are as exact as with libm.  Inputs outside the normal
range of the fast path (``0``, subnormals, :math:`|t| > 700`) are recomputed with libm.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["fast_pow_block"]

_LG1 = 6.666666666666735130e-01
_LG2 = 3.999999999940941908e-01
_LG3 = 2.857142874366239149e-01
_LG4 = 2.222219843214978396e-01
_LG5 = 1.818357216161805012e-01
_LG6 = 1.531383769920937332e-01
_LG7 = 1.479819860511658591e-01
_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
_INV_LN2 = 1.44269504088896338700e+00
_P1 = 1.66666666666666019037e-01
_P2 = -2.77777777770155933842e-03
_P3 = 6.61375632143793436117e-05
_P4 = -1.65339022054652515390e-06
_P5 = 4.13813679705723846039e-08
_MANT = 0xFFFFFFFFFFFFF
_SQRT2_MANT = 0x6A09E667F3BCD        # mantissa bits of sqrt(2)
_TINY = 2.2250738585072014e-308      # smallest normal double
_T_MAX = 700.0


@njit(inline="always")
def _libm_fixup(src, dst, tt, k, beta):  # pragma: no cover - numba
    for i in range(k):
        x = src[i]
        if not (x >= _TINY and abs(tt[i]) <= _T_MAX):
            dst[i] = x ** beta


@njit(cache=True, error_model="numpy")
def fast_pow_block(src: np.ndarray, dst: np.ndarray, k: int,
                   beta: float) -> None:  # pragma: no cover - numba
    """``dst[:k] = src[:k] ** beta`` for ``src >= 0`` (finite), vectorized.

    ``src`` must be C-contiguous; ``dst`` may not alias it.  Compiled with
    ``error_model="numpy"`` (no ZeroDivisionError checks), which lets LLVM vectorize.
    """
    bits = np.empty(k, np.int64)
    fb = bits.view(np.float64)
    ex = np.empty(k)
    tt = np.empty(k)
    xi = src[:k].view(np.int64)
    # 1. x = 2^e m, m in [sqrt(1/2), sqrt(2))
    for i in range(k):
        b = xi[i]
        mant = b & _MANT
        hi = np.int64(mant > _SQRT2_MANT)
        ex[i] = float((b >> 52) - 1023 + hi)
        bits[i] = mant | ((1023 - hi) << 52)
    # 2. t = beta * log(x)
    for i in range(k):
        f = fb[i] - 1.0
        s = f / (2.0 + f)
        z = s * s
        w = z * z
        r = z * (_LG1 + w * (_LG3 + w * (_LG5 + w * _LG7))) + w * (_LG2 + w * (_LG4 + w * _LG6))
        hfsq = 0.5 * f * f
        dk = ex[i]
        tt[i] = beta * (dk * _LN2_HI - ((hfsq - (s * (hfsq + r) + dk * _LN2_LO)) - f))
    # 3. exp(t) = 2^kk exp(r)
    for i in range(k):
        t = min(max(tt[i], -_T_MAX), _T_MAX)
        kk = np.floor(t * _INV_LN2 + 0.5)
        hi = t - kk * _LN2_HI
        lo = kk * _LN2_LO
        r = hi - lo
        r2 = r * r
        c = r - r2 * (_P1 + r2 * (_P2 + r2 * (_P3 + r2 * (_P4 + r2 * _P5))))
        dst[i] = 1.0 - ((lo - (r * c) / (2.0 - c)) - hi)
        bits[i] = (np.int64(kk) + 1023) << 52
    for i in range(k):
        dst[i] *= fb[i]
    # 4. zero, subnormal and huge results by libm (rare: counted first, branch-free)
    bad = 0
    for i in range(k):
        bad += np.int64(not (src[i] >= _TINY and abs(tt[i]) <= _T_MAX))
    if bad:
        _libm_fixup(src, dst, tt, k, beta)
