r"""Fused Generalized Gaussian ziggurat sampler for CUDA devices (Triton).

One Triton kernel draws ``GG(beta)`` noise by the ziggurat of :mod:`sampledprv.torch.ziggurat`:

* **Fast path.** A program owns ``4 Q`` outputs and makes one Philox call per lane
  (``tl.randint4x``: four 32-bit words, one output each).  A word gives the strip, the
  sign and a 23-bit uniform; the output is accepted when ``u < K[strip]`` (about 98% of
  words at beta in [1, 4]), so most outputs cost a quarter of a Philox call, a table
  lookup and a multiply, which is less arithmetic than ``torch.randn``'s Box-Muller.
* **Slow path.** The other words (wedge and tail cases) are compacted into a list of at
  most ``CAP`` per program (prefix sums), and the program finishes them together: each
  round draws four fresh words per pending output (Philox keyed by ``seed + 1 + round``,
  counter = the output's index, so the result does not depend on the list's order) and
  takes up to two wedge/tail tests and two fresh strips from them.  Lists longer than
  ``CAP`` are finished ``CAP`` at a time, recomputing the same words.

Measured on an H100 (``benchmarks/RESULTS.md``, "GG noise on a GPU: the ziggurat"):
2.6-2.9x ``torch.randn`` at 1e8 float32 draws and 3.0-3.2x at 1e7, whole call (the
rejection kernel it replaces: 6.6-8.5x).  The fast path alone would cost 0.8x
``torch.randn``; the pending outputs' list and rounds take the rest.  ``kernels=0``
(each lane finishes its own pending words, no list) and ``kernels=2`` (a second kernel
finishes the lists) draw the same values; at their best shapes they measured 12% slower
at beta = 1 and within 4% at beta 1.5 and 4 (``kernels=0``), and 5-10% slower
(``kernels=2``).  ``kernels=3`` takes the list out of the fast kernel: that kernel writes
a pending output's word in its place (as int32 bits) and a 4-bit flag per lane, and a
second kernel reads the flags of ``block`` lanes, lists their pending outputs with one
prefix sum and finishes them.  It draws the same values (Triton's interpreter reproduces
the mirror bit for bit) and has not been timed on a GPU yet
(``benchmarks/bench_gpu_acceptance.py --checks 4`` times every scheme).

Every output is the first accepted point of the ziggurat's own sequence of proposals,
so the law is the ziggurat's (see :mod:`sampledprv.torch.ziggurat`), with no redraw by
another sampler.  One truncation: the tail's :math:`E \sim \mathrm{Exp}(1)` comes from a
32-bit uniform, so :math:`E \le 22.9` and nothing is drawn beyond
:math:`(r^\beta + 22.9)^{1/\beta}` (30.6 at beta = 1, 2.3 at beta = 4), a mass below
:math:`6 \cdot 10^{-14}` for every beta >= 1.  A pending output still unresolved after
``_ROUNDS`` slow rounds (each resolves it with probability above 3/4, so about
``4^{-64}``) is written as NaN rather than as a wrong value.

Precision: float32 with the GPU's ``log2``/``exp2`` in the wedge and tail tests (relative
error about ``2^{-22}``) and a 23-bit uniform within a strip, i.e. the float32
resolution.  Only ``float32`` is produced here; ``float64`` requests use the portable
sampler of :mod:`sampledprv.torch.noise`.

Reproducibility: the Philox key is drawn from the caller's :class:`torch.Generator`
(one ``int64`` on the device, no host synchronisation), so the same generator state gives
the same noise on the same GPU; outputs do not depend on the launch's block scheduling.
Importing this module needs no GPU; :func:`fused_available` tells whether the kernel can run.
"""

from __future__ import annotations

import math
from typing import Dict, Optional, Tuple

import torch

from .ziggurat import LAYERS, ziggurat_tables

__all__ = ["fused_available", "fused_generalized_gaussian", "launch_ziggurat"]

# launch shape, swept on an H100 (benchmarks/RESULTS.md, "GG noise on a GPU")
_Q = 32            # Philox lanes per program: 4 * _Q outputs
_CAP = 32          # pending outputs finished together (about 2% of 4 * _Q are pending)
_NUM_WARPS = 1
_KERNELS = 1       # 1: each program finishes its own list
_ROUNDS = 64       # slow rounds at most (each resolves a pending output w.p. > 3/4)
_MAX_CHUNK = 2 ** 30  # output indices are int32 Philox counters: launch in chunks
_BLOCK = 4096         # kernels=3: lanes whose flags one finishing program reads
_FLAG_CAP = 256       # kernels=3: list length (a block of 4096 lanes holds about 330)
_FINISH_WARPS = 4     # kernels=3: warps of a finishing program

try:  # pragma: no cover - exercised on CUDA machines (and Triton's interpreter) only
    import triton
    import triton.language as tl

    @triton.jit
    def _fresh(wd, k_ptr, w_ptr):
        """Strip, sign, magnitude and fast-path flag of one 32-bit word."""
        i = (wd & 255).to(tl.int32)
        s = ((wd >> 8) & 1).to(tl.int32)
        u = (wd >> 9).to(tl.int32)
        x = u.to(tl.float32) * tl.load(w_ptr + i)
        return i, s, x, u < tl.load(k_ptr + i)

    @triton.jit
    def _test(i, x, tail, wa, wb, f_ptr, beta, inv_beta, r_beta, bm1, log2r):
        """One wedge test (word ``wa``) or one tail attempt (words ``wa``, ``wb``):
        (accepted, value)."""
        LN2: tl.constexpr = 0.6931471805599453
        LOG2E: tl.constexpr = 1.4426950408889634
        # wedge: f(x_i) + V (f(x_{i+1}) - f(x_i)) < exp(-x^beta)
        v = (wa >> 8).to(tl.float32) * 5.9604644775390625e-08            # [0, 1), 2^-24
        fi = tl.load(f_ptr + i)
        fi1 = tl.load(f_ptr + i + 1)
        fx = tl.exp2(-LOG2E * tl.exp2(beta * tl.log2(x)))
        ok_w = fi + v * (fi1 - fi) < fx
        # tail: X = (r^beta + E)^(1/beta), accepted w.p. (r / X)^(beta - 1)
        e = -LN2 * tl.log2((wa.to(tl.float32) + 0.5) * 2.3283064365386963e-10)  # (0, 1]
        xt = tl.exp2(inv_beta * tl.log2(r_beta + e))
        ub = (wb >> 8).to(tl.float32) * 5.9604644775390625e-08
        ok_t = ub < tl.exp2(bm1 * (log2r - tl.log2(xt)))
        return tl.where(tail, ok_t, ok_w), tl.where(tail, xt, x)

    @triton.jit
    def _fast(wd, pos, n, out_ptr, k_ptr, w_ptr, scale):
        """Write every word's fast-path value; return the pending flags (int32)."""
        i, s, x, ok = _fresh(wd, k_ptr, w_ptr)
        valid = pos < n
        tl.store(out_ptr + pos, tl.where(s != 0, -x, x) * scale, mask=valid)
        return ((~ok) & valid).to(tl.int32)

    @triton.jit
    def _pending(wd, pos, n, k_ptr):
        i = (wd & 255).to(tl.int32)
        u = (wd >> 9).to(tl.int32)
        return ((u >= tl.load(k_ptr + i)) & (pos < n)).to(tl.int32)

    @triton.jit
    def _put_pos(pos, p, slot, sc_ptr, CAP: tl.constexpr):
        """Store the pending outputs' indices ``pos`` at their list slots in [0, CAP)."""
        tl.store(sc_ptr + slot, pos, mask=(p != 0) & (slot >= 0) & (slot < CAP))

    @triton.jit
    def _put(wd, pos, p, slot, sc_ptr, CAP: tl.constexpr):
        """:func:`_put_pos`, and the pending words at the same slots of the second half."""
        _put_pos(pos, p, slot, sc_ptr, CAP)
        tl.store(sc_ptr + CAP + slot, wd.to(tl.int32, bitcast=True),
                 mask=(p != 0) & (slot >= 0) & (slot < CAP))

    @triton.jit
    def _list(w0, w1, w2, w3, p0, p1, p2, p3, pos0, lo, sc_ptr, Q: tl.constexpr,
              CAP: tl.constexpr):
        """Store the pending words whose list slots lie in [lo, lo + CAP): one prefix sum of
        the lanes' pending counts, a lane's words in consecutive slots.  Returns the
        list's length."""
        c = p0 + p1 + p2 + p3
        s0 = tl.cumsum(c, axis=0) - c - lo
        s1 = s0 + p0
        s2 = s1 + p1
        s3 = s2 + p2
        _put(w0, pos0, p0, s0, sc_ptr, CAP)
        _put(w1, pos0 + Q, p1, s1, sc_ptr, CAP)
        _put(w2, pos0 + 2 * Q, p2, s2, sc_ptr, CAP)
        _put(w3, pos0 + 3 * Q, p3, s3, sc_ptr, CAP)
        return tl.sum(c, axis=0)

    @triton.jit
    def _step(act, i, s, x, tail, wa, wb, pos, out_ptr, k_ptr, w_ptr, f_ptr, beta, inv_beta,
              r_beta, bm1, log2r, scale):
        """One test of every pending output (words ``wa``, ``wb``), then a new strip (word
        ``wb``) for the rejected wedge points; a rejected tail attempt stays in the tail."""
        acc, val = _test(i, x, tail, wa, wb, f_ptr, beta, inv_beta, r_beta, bm1, log2r)
        tl.store(out_ptr + pos, tl.where(s != 0, -val, val) * scale, mask=act & acc)
        act = act & ~acc
        new = act & ~tail
        i2, s2, x2, fast2 = _fresh(wb, k_ptr, w_ptr)
        tl.store(out_ptr + pos, tl.where(s2 != 0, -x2, x2) * scale, mask=new & fast2)
        act = act & ~(new & fast2)
        return (act, tl.where(new, i2, i), tl.where(new, s2, s), tl.where(new, x2, x),
                tl.where(new, i2 == 0, tail))

    @triton.jit
    def _resolve(act, pos, wd, seed, out_ptr, k_ptr, w_ptr, f_ptr, beta, inv_beta, r_beta, bm1,
                 log2r, scale, ROUNDS: tl.constexpr):
        """Finish the pending words ``wd`` (outputs ``pos``) where ``act``: rounds of four
        words keyed by (``seed + 1 + round``, ``pos``) until every one is accepted."""
        i, s, x, ok = _fresh(wd, k_ptr, w_ptr)
        tail = i == 0                                  # strip 0 beyond r
        left = tl.sum(act.to(tl.int32), axis=0)
        rnd = 0
        while (rnd < ROUNDS) & (left > 0):
            a0, a1, a2, a3 = tl.randint4x(seed + 1 + rnd, pos)
            act, i, s, x, tail = _step(act, i, s, x, tail, a0, a1, pos, out_ptr, k_ptr, w_ptr,
                                       f_ptr, beta, inv_beta, r_beta, bm1, log2r, scale)
            act, i, s, x, tail = _step(act, i, s, x, tail, a2, a3, pos, out_ptr, k_ptr, w_ptr,
                                       f_ptr, beta, inv_beta, r_beta, bm1, log2r, scale)
            left = tl.sum(act.to(tl.int32), axis=0)
            rnd += 1
        tl.store(out_ptr + pos, tl.full(pos.shape, float("nan"), tl.float32), mask=act)

    @triton.jit
    def _finish(m, seed, out_ptr, sc_ptr, k_ptr, w_ptr, f_ptr, beta, inv_beta, r_beta, bm1,
                log2r, scale, CAP: tl.constexpr, ROUNDS: tl.constexpr):
        """Finish the ``m`` pending outputs stored in the scratch list."""
        idx = tl.arange(0, CAP)
        act = idx < m
        pos = tl.load(sc_ptr + idx, mask=act, other=0)
        wd = tl.load(sc_ptr + CAP + idx, mask=act, other=0).to(tl.uint32, bitcast=True)
        _resolve(act, pos, wd, seed, out_ptr, k_ptr, w_ptr, f_ptr, beta, inv_beta, r_beta, bm1,
                 log2r, scale, ROUNDS)

    @triton.jit
    def _fast4(out_ptr, n, seed, pid, k_ptr, w_ptr, scale, Q: tl.constexpr):
        """The fast path of a program's 4 Q outputs (one Philox call per lane): the outputs'
        first indices, the four words and their pending flags."""
        lane = tl.arange(0, Q)
        pos0 = pid * (4 * Q) + lane
        w0, w1, w2, w3 = tl.randint4x(seed, pid * Q + lane)
        p0 = _fast(w0, pos0, n, out_ptr, k_ptr, w_ptr, scale)
        p1 = _fast(w1, pos0 + Q, n, out_ptr, k_ptr, w_ptr, scale)
        p2 = _fast(w2, pos0 + 2 * Q, n, out_ptr, k_ptr, w_ptr, scale)
        p3 = _fast(w3, pos0 + 3 * Q, n, out_ptr, k_ptr, w_ptr, scale)
        return pos0, w0, w1, w2, w3, p0, p1, p2, p3

    @triton.jit
    def _zig_lane_kernel(out_ptr, n, seed_ptr, k_ptr, w_ptr, f_ptr, beta, inv_beta, r_beta,
                         bm1, log2r, scale, Q: tl.constexpr, ROUNDS: tl.constexpr):
        """No list: each lane finishes its own pending words, the first pending of its four
        at a time (a lane rarely has two), in registers."""
        pid = tl.program_id(0)
        seed = tl.load(seed_ptr)
        pos0, w0, w1, w2, w3, p0, p1, p2, p3 = _fast4(out_ptr, n, seed, pid, k_ptr, w_ptr,
                                                      scale, Q)
        pend = p0 + p1 + p2 + p3
        while tl.max(pend, axis=0) > 0:
            s0 = p0
            s1 = p1 * (1 - s0)
            s2 = p2 * (1 - s0) * (1 - s1)
            s3 = p3 * (1 - s0) * (1 - s1) * (1 - s2)
            wd = tl.where(s0 != 0, w0, tl.where(s1 != 0, w1, tl.where(s2 != 0, w2, w3)))
            pos = pos0 + Q * (s1 + 2 * s2 + 3 * s3)
            _resolve(pend > 0, pos, wd, seed, out_ptr, k_ptr, w_ptr, f_ptr, beta, inv_beta,
                     r_beta, bm1, log2r, scale, ROUNDS)
            p0 = p0 - s0
            p1 = p1 - s1
            p2 = p2 - s2
            p3 = p3 - s3
            pend = p0 + p1 + p2 + p3

    @triton.jit
    def _head(out_ptr, sc_ptr, n, seed, pid, k_ptr, w_ptr, scale, Q: tl.constexpr,
              CAP: tl.constexpr):
        """The fast path of a program's 4 Q outputs and its pending list; its length."""
        pos0, w0, w1, w2, w3, p0, p1, p2, p3 = _fast4(out_ptr, n, seed, pid, k_ptr, w_ptr,
                                                      scale, Q)
        return _list(w0, w1, w2, w3, p0, p1, p2, p3, pos0, 0, sc_ptr, Q, CAP)

    @triton.jit
    def _rest(total, out_ptr, sc_ptr, n, seed, pid, k_ptr, w_ptr, f_ptr, beta, inv_beta,
              r_beta, bm1, log2r, scale, Q: tl.constexpr, CAP: tl.constexpr,
              ROUNDS: tl.constexpr):
        """Finish a program's ``total`` pending outputs: the first CAP from the stored
        list, the others CAP at a time from recomputed words (rare)."""
        _finish(tl.minimum(total, CAP), seed, out_ptr, sc_ptr, k_ptr, w_ptr, f_ptr, beta,
                inv_beta, r_beta, bm1, log2r, scale, CAP, ROUNDS)
        lo = total * 0 + CAP
        while lo < total:
            tl.debug_barrier()
            lane = tl.arange(0, Q)
            pos0 = pid * (4 * Q) + lane
            w0, w1, w2, w3 = tl.randint4x(seed, pid * Q + lane)
            p0 = _pending(w0, pos0, n, k_ptr)
            p1 = _pending(w1, pos0 + Q, n, k_ptr)
            p2 = _pending(w2, pos0 + 2 * Q, n, k_ptr)
            p3 = _pending(w3, pos0 + 3 * Q, n, k_ptr)
            _list(w0, w1, w2, w3, p0, p1, p2, p3, pos0, lo, sc_ptr, Q, CAP)
            tl.debug_barrier()
            _finish(tl.minimum(total - lo, CAP), seed, out_ptr, sc_ptr, k_ptr, w_ptr, f_ptr,
                    beta, inv_beta, r_beta, bm1, log2r, scale, CAP, ROUNDS)
            lo += CAP

    @triton.jit
    def _zig_kernel(out_ptr, scratch_ptr, n, seed_ptr, k_ptr, w_ptr, f_ptr, beta, inv_beta,
                    r_beta, bm1, log2r, scale, Q: tl.constexpr, CAP: tl.constexpr,
                    ROUNDS: tl.constexpr):
        """One kernel: fast path, list, then the program finishes its own list."""
        pid = tl.program_id(0)
        seed = tl.load(seed_ptr)
        sc_ptr = scratch_ptr + pid * (2 * CAP)
        total = _head(out_ptr, sc_ptr, n, seed, pid, k_ptr, w_ptr, scale, Q, CAP)
        tl.debug_barrier()
        _rest(total, out_ptr, sc_ptr, n, seed, pid, k_ptr, w_ptr, f_ptr, beta, inv_beta,
              r_beta, bm1, log2r, scale, Q, CAP, ROUNDS)

    @triton.jit
    def _zig_head_kernel(out_ptr, scratch_ptr, count_ptr, n, seed_ptr, k_ptr, w_ptr, scale,
                         Q: tl.constexpr, CAP: tl.constexpr):
        """First of two kernels: fast path and list; the list's length to ``count``."""
        pid = tl.program_id(0)
        total = _head(out_ptr, scratch_ptr + pid * (2 * CAP), n, tl.load(seed_ptr), pid,
                      k_ptr, w_ptr, scale, Q, CAP)
        tl.store(count_ptr + pid, total)

    @triton.jit
    def _zig_rest_kernel(out_ptr, scratch_ptr, count_ptr, n, seed_ptr, k_ptr, w_ptr, f_ptr,
                         beta, inv_beta, r_beta, bm1, log2r, scale, Q: tl.constexpr,
                         CAP: tl.constexpr, ROUNDS: tl.constexpr):
        """Second of two kernels: each program finishes the list of its namesake."""
        pid = tl.program_id(0)
        _rest(tl.load(count_ptr + pid), out_ptr, scratch_ptr + pid * (2 * CAP), n,
              tl.load(seed_ptr), pid, k_ptr, w_ptr, f_ptr, beta, inv_beta, r_beta, bm1,
              log2r, scale, Q, CAP, ROUNDS)

    @triton.jit
    def _zig_flag_kernel(out_ptr, outi_ptr, flag_ptr, n, seed_ptr, k_ptr, w_ptr, scale,
                         Q: tl.constexpr):
        """First of the flag scheme's kernels: the fast path (:func:`_fast4`); a pending
        output's value is then overwritten by its word's bits (through the int32 view
        ``outi_ptr`` of ``out``: a later store of the same thread to the same address),
        and its lane gets a bit in the lane's 4-bit flag byte.  No list, no prefix sum."""
        pid = tl.program_id(0)
        pos0, w0, w1, w2, w3, p0, p1, p2, p3 = _fast4(out_ptr, n, tl.load(seed_ptr), pid,
                                                      k_ptr, w_ptr, scale, Q)
        tl.store(outi_ptr + pos0, w0.to(tl.int32, bitcast=True), mask=p0 != 0)
        tl.store(outi_ptr + pos0 + Q, w1.to(tl.int32, bitcast=True), mask=p1 != 0)
        tl.store(outi_ptr + pos0 + 2 * Q, w2.to(tl.int32, bitcast=True), mask=p2 != 0)
        tl.store(outi_ptr + pos0 + 3 * Q, w3.to(tl.int32, bitcast=True), mask=p3 != 0)
        tl.store(flag_ptr + pid * Q + tl.arange(0, Q),
                 (p0 | (p1 << 1) | (p2 << 2) | (p3 << 3)).to(tl.int8))

    @triton.jit
    def _zig_flag_finish_kernel(out_ptr, outi_ptr, flag_ptr, scratch_ptr, lanes, seed_ptr,
                                k_ptr, w_ptr, f_ptr, beta, inv_beta, r_beta, bm1, log2r, scale,
                                Q: tl.constexpr, BLOCK: tl.constexpr, CAP: tl.constexpr,
                                ROUNDS: tl.constexpr):
        """Second of the flag scheme's kernels: a program reads the flags of ``BLOCK``
        lanes, lists their pending outputs ``CAP`` at a time (one prefix sum over the
        block) and finishes each list, its words read back from ``out``."""
        pid = tl.program_id(0)
        seed = tl.load(seed_ptr)
        g = pid * BLOCK + tl.arange(0, BLOCK)
        fl = tl.load(flag_ptr + g, mask=g < lanes, other=0).to(tl.int32)
        p0 = fl & 1
        p1 = (fl >> 1) & 1
        p2 = (fl >> 2) & 1
        p3 = (fl >> 3) & 1
        c = p0 + p1 + p2 + p3
        total = tl.sum(c, axis=0)
        first = tl.cumsum(c, axis=0) - c
        pos0 = (g // Q) * (4 * Q) + g % Q
        sc_ptr = scratch_ptr + pid * CAP
        lo = total * 0
        while lo < total:
            s0 = first - lo
            s1 = s0 + p0
            s2 = s1 + p1
            s3 = s2 + p2
            _put_pos(pos0, p0, s0, sc_ptr, CAP)
            _put_pos(pos0 + Q, p1, s1, sc_ptr, CAP)
            _put_pos(pos0 + 2 * Q, p2, s2, sc_ptr, CAP)
            _put_pos(pos0 + 3 * Q, p3, s3, sc_ptr, CAP)
            tl.debug_barrier()
            idx = tl.arange(0, CAP)
            act = idx < total - lo
            pos = tl.load(sc_ptr + idx, mask=act, other=0)
            wd = tl.load(outi_ptr + pos, mask=act, other=0).to(tl.uint32, bitcast=True)
            _resolve(act, pos, wd, seed, out_ptr, k_ptr, w_ptr, f_ptr, beta, inv_beta, r_beta,
                     bm1, log2r, scale, ROUNDS)
            tl.debug_barrier()
            lo += CAP

    _HAVE_TRITON = True
except Exception:  # ImportError, or a Triton without a usable backend
    _HAVE_TRITON = False

_DEVICE_TABLES: Dict[Tuple[float, str], Tuple[torch.Tensor, torch.Tensor, torch.Tensor]] = {}


def _tables_on(beta: float, device: torch.device):
    key = (beta, str(device))
    if key not in _DEVICE_TABLES:
        t = ziggurat_tables(beta)
        _DEVICE_TABLES[key] = (torch.as_tensor(t.k, device=device),
                               torch.as_tensor(t.w, device=device),
                               torch.as_tensor(t.f, device=device))
    return _DEVICE_TABLES[key]


def fused_available(device: torch.device | str, dtype: torch.dtype = torch.float32) -> bool:
    """True when the fused kernel can serve ``device``/``dtype`` (CUDA, float32, Triton)."""
    device = torch.device(device)
    return (_HAVE_TRITON and device.type == "cuda" and dtype == torch.float32
            and torch.cuda.is_available())


def launch_ziggurat(out: torch.Tensor, beta: float, key: torch.Tensor, *, scale: float = 1.0,
                    q: Optional[int] = None, cap: Optional[int] = None,
                    num_warps: Optional[int] = None, rounds: int = _ROUNDS,
                    kernels: Optional[int] = None, block: int = _BLOCK,
                    finish_warps: int = _FINISH_WARPS) -> torch.Tensor:
    """Fill the float32 vector ``out`` with ``GG(beta, scale)`` draws (Philox key
    ``key``, an int64 tensor of one element on ``out``'s device); ``len(out) <= 2^30``.

    ``q`` (Philox lanes per program), ``cap`` (list length finished at once),
    ``num_warps`` and ``kernels`` (0: no list, each lane finishes its own pending words;
    1: each program finishes its own list; 2: a second kernel does; 3: the first kernel
    only flags the pending words, and a second kernel, ``block`` lanes and
    ``finish_warps`` warps per program, lists and finishes them) are exposed for tests
    (a small ``cap`` exercises long lists) and tuning.  The draws depend on ``q`` only:
    any ``cap``, ``num_warps``, ``kernels``, ``block`` and ``finish_warps`` give the same
    values."""
    if not _HAVE_TRITON:
        raise ValueError("launch_ziggurat needs Triton (installed with CUDA builds of torch); "
                         "use sampledprv.torch.generalized_gaussian, which falls back to the "
                         "portable sampler")
    if out.dtype != torch.float32 or out.dim() != 1 or not out.is_contiguous():
        raise ValueError(f"out must be a contiguous 1-D float32 tensor, got {out.dtype} of "
                         f"shape {tuple(out.shape)}")
    if key.dtype != torch.int64 or key.numel() != 1 or key.device != out.device:
        raise ValueError("key must be one int64 element on out's device, e.g. "
                         "torch.tensor([seed], device=out.device)")
    q = _Q if q is None else int(q)
    num_warps = _NUM_WARPS if num_warps is None else int(num_warps)
    kernels = _KERNELS if kernels is None else int(kernels)
    cap = (_FLAG_CAP if kernels == 3 else _CAP) if cap is None else int(cap)
    n = out.numel()
    if n > _MAX_CHUNK:
        raise ValueError(f"launch_ziggurat fills at most 2^30 outputs, got {n}")
    if q < 1 or cap < 1 or q & (q - 1) or cap & (cap - 1) or block < 1 or block & (block - 1):
        raise ValueError(f"q, cap and block must be powers of two, got {q}, {cap}, {block}")
    if kernels not in (0, 1, 2, 3):
        raise ValueError(f"kernels must be 0, 1, 2 or 3, got {kernels}")
    for name, v in (("num_warps", num_warps), ("finish_warps", finish_warps)):
        if v < 1 or v & (v - 1):
            raise ValueError(f"{name} must be a power of two (Triton's warps), got {v}")
    t = ziggurat_tables(beta)
    k, w, f = _tables_on(t.beta, out.device)
    programs = triton.cdiv(n, 4 * q)
    law = (t.beta, 1.0 / t.beta, t.r ** t.beta, t.beta - 1.0, math.log2(t.r), float(scale))
    if kernels == 3:
        lanes = programs * q
        flags = torch.empty(lanes, device=out.device, dtype=torch.int8)
        outi = out.view(torch.int32)
        _zig_flag_kernel[(programs,)](out, outi, flags, n, key, k, w, float(scale), Q=q,
                                      num_warps=num_warps)
        blocks = triton.cdiv(lanes, block)
        scratch = torch.empty(blocks * cap, device=out.device, dtype=torch.int32)
        _zig_flag_finish_kernel[(blocks,)](out, outi, flags, scratch, lanes, key, k, w, f,
                                           *law, Q=q, BLOCK=block, CAP=cap, ROUNDS=rounds,
                                           num_warps=finish_warps)
        return out
    scratch = torch.empty(programs * 2 * cap, device=out.device, dtype=torch.int32)
    if kernels == 0:
        _zig_lane_kernel[(programs,)](out, n, key, k, w, f, *law, Q=q, ROUNDS=rounds,
                                      num_warps=num_warps)
    elif kernels == 1:
        _zig_kernel[(programs,)](out, scratch, n, key, k, w, f, *law, Q=q, CAP=cap,
                                 ROUNDS=rounds, num_warps=num_warps)
    else:
        count = torch.empty(programs, device=out.device, dtype=torch.int32)
        _zig_head_kernel[(programs,)](out, scratch, count, n, key, k, w, float(scale), Q=q,
                                      CAP=cap, num_warps=num_warps)
        _zig_rest_kernel[(programs,)](out, scratch, count, n, key, k, w, f, *law, Q=q,
                                      CAP=cap, ROUNDS=rounds, num_warps=num_warps)
    return out


def fused_generalized_gaussian(n: int, beta: float, scale: float = 1.0, *,
                               generator: Optional[torch.Generator],
                               device: torch.device) -> torch.Tensor:
    r"""``n`` draws of ``GG(beta, scale)`` (float32, on ``device``) by the fused ziggurat;
    the scale is applied in the kernel (no second pass over the output)."""
    if not fused_available(device):
        raise ValueError(f"the fused GG sampler needs a CUDA device, float32 and Triton; "
                         f"got device={device}")
    out = torch.empty(n, device=device, dtype=torch.float32)
    for start in range(0, n, _MAX_CHUNK):
        m = min(_MAX_CHUNK, n - start)
        # the Philox key stays on the device: drawing it from the generator costs no sync
        key = torch.randint(0, 2 ** 62, (1,), generator=generator, dtype=torch.int64,
                            device=generator.device if generator is not None else device)
        launch_ziggurat(out[start:start + m], beta, key.to(device), scale=scale)
    return out
