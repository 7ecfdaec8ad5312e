"""A numpy mirror of the fused GG ziggurat kernel (``sampledprv/torch/fused_gg.py``).

Same Philox words (Triton's ``randint4x``: Philox4x32-10, key = the 64-bit seed split
into two words, counter = (offset, 0, 0, 0)), same word layout, same float32 arithmetic
in the same order, so Triton's interpreter reproduces it bit for bit and a GPU up to the
rounding of its ``log2``/``exp2``/FMA.  On the CPU it also checks the algorithm and the
tables against ``scipy.stats.gennorm`` without Triton.
"""

from __future__ import annotations

import numpy as np

from sampledprv.torch.ziggurat import ziggurat_tables

_M = np.uint64(0xFFFFFFFF)
F32 = np.float32


def _umulhi(a: int, b: np.ndarray) -> np.ndarray:
    return ((np.uint64(a) * b.astype(np.uint64)) >> np.uint64(32)).astype(np.uint32)


def philox4x32(seed: int, offset: np.ndarray):
    """Triton's ``randint4x(seed, offset)`` for int32 offsets: four uint32 arrays."""
    c0 = np.asarray(offset).astype(np.int64).astype(np.uint32)
    c1 = np.zeros_like(c0)
    c2 = np.zeros_like(c0)
    c3 = np.zeros_like(c0)
    seed = int(seed) & 0xFFFFFFFFFFFFFFFF
    k0, k1 = seed & 0xFFFFFFFF, seed >> 32
    for _ in range(10):
        _c0, _c2 = c0, c2
        c0 = _umulhi(0xCD9E8D57, _c2) ^ c1 ^ np.uint32(k0)
        c2 = _umulhi(0xD2511F53, _c0) ^ c3 ^ np.uint32(k1)
        c1 = (np.uint64(0xCD9E8D57) * _c2.astype(np.uint64) & _M).astype(np.uint32)
        c3 = (np.uint64(0xD2511F53) * _c0.astype(np.uint64) & _M).astype(np.uint32)
        k0 = (k0 + 0x9E3779B9) & 0xFFFFFFFF
        k1 = (k1 + 0xBB67AE85) & 0xFFFFFFFF
    return c0, c1, c2, c3


def _fresh(wd, t):
    i = (wd & 255).astype(np.int64)
    s = (wd >> 8) & 1
    u = (wd >> 9).astype(np.int64)
    return i, s, F32(u) * t.w[i], u < t.k[i]


def _test(i, x, tail, wa, wb, t, c):
    beta, inv_beta, r_beta, bm1, log2r = c
    with np.errstate(divide="ignore"):
        v = (wa >> 8).astype(F32) * F32(5.9604644775390625e-08)
        fi, fi1 = t.f[i], t.f[np.minimum(i + 1, len(t.f) - 1)]
        fx = np.exp2(F32(-1.4426950408889634) * np.exp2(beta * np.log2(x)))
        ok_w = fi + v * (fi1 - fi) < fx
        e = F32(-0.6931471805599453) * np.log2(
            (wa.astype(F32) + F32(0.5)) * F32(2.3283064365386963e-10))
        xt = np.exp2(inv_beta * np.log2(r_beta + e))
        ub = (wb >> 8).astype(F32) * F32(5.9604644775390625e-08)
        ok_t = ub < np.exp2(bm1 * (log2r - np.log2(xt)))
    return np.where(tail, ok_t, ok_w), np.where(tail, xt, x)


def ziggurat_reference(n: int, beta: float, seed: int, q: int = 1024,
                       rounds: int = 64) -> np.ndarray:
    """What ``launch_ziggurat(out, beta, key=seed, q=q)`` writes (any ``cap``)."""
    t = ziggurat_tables(beta)
    c = (F32(t.beta), F32(1.0 / t.beta), F32(t.r ** t.beta), F32(t.beta - 1.0),
         F32(np.log2(t.r)))
    pos = np.arange(n, dtype=np.int64)
    prog, rem = np.divmod(pos, 4 * q)
    j, lane = np.divmod(rem, q)
    words = philox4x32(seed, prog * q + lane)
    wd = np.choose(j, words)
    i, s, x, fast = _fresh(wd, t)
    out = np.where(s != 0, -x, x).astype(F32)
    p = pos[~fast]
    i, s, x = i[~fast], s[~fast], x[~fast]
    tail = i == 0
    act = np.ones(p.size, dtype=bool)
    for rnd in range(rounds):
        if not act.any():
            break
        a = philox4x32(seed + 1 + rnd, p)
        for wa, wb in ((a[0], a[1]), (a[2], a[3])):
            acc, val = _test(i, x, tail, wa, wb, t, c)
            done = act & acc
            out[p[done]] = np.where(s != 0, -val, val)[done]
            act &= ~acc
            new = act & ~tail
            i2, s2, x2, fast2 = _fresh(wb, t)
            take = new & fast2
            out[p[take]] = np.where(s2 != 0, -x2, x2)[take]
            act &= ~take
            i, s, x = np.where(new, i2, i), np.where(new, s2, s), np.where(new, x2, x)
            tail = np.where(new, i2 == 0, tail)
    out[p[act]] = np.nan
    return out
