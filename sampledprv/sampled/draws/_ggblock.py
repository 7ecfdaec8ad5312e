r"""Block-vectorized Generalized Gaussian privacy losses (the hot path of the kernels).

:func:`gg_fill` fills a block of privacy-loss samples of the GG mechanism in
three passes over small arrays instead of one branchy loop per draw:

1. a scalar RNG pass draws envelope candidates (ziggurat exponentials or normals) and,
   from the auxiliary generator, one 64-bit word per candidate (the uniform of the
   acceptance test and the sign);
2. straight-line passes compute :math:`|y|^\beta` and the acceptance exponent
   :math:`t` for the whole block (these loops vectorize: ``sqrt`` and products for
   ``beta`` in quarter steps);
3. candidate ``i`` is accepted iff :math:`U_i \le e^{-t_i}` (squeezes
   :math:`1 - t \le e^{-t} \le 1/(1+t)` decide almost all, branch-free; libm ``exp``
   for the rest); a branch-free pass compacts the accepted candidates in order and
   the first ones fill the block.  Acceptances beyond the block are discarded, which
   keeps the kept ones i.i.d. exact draws (which are kept depends only on the
   acceptance indicators, independent of the values).

The loss pass then evaluates :math:`|y \mp d|^\beta` for the block.  The consumption
of random numbers depends only on the block length, which the kernels fix, so runs
stay reproducible.  The math (envelopes, losses, directions) is that of
:mod:`sampledprv.sampled.draws.samplers` and :mod:`sampledprv.sampled.draws._mechloss`.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, uint64

from ._fastpow import fast_pow_block
from .rng import _INV_2_53, exponential, next_u64_aux, normal, random_sign, uniform_aux
from .samplers import GG_EXACT_GAUSS, GG_EXACT_LAPLACE, GG_LAPLACE_ENV, pow_beta, subsampled_loss

__all__ = ["gg_fill", "pow_block", "GG_HEAD"]

#: index of ``d`` in the fill parameters (after kind, mode, q, a, b and a spare slot)
GG_HEAD = 6


@njit(cache=True, error_model="numpy")
def pow_block(src: np.ndarray, dst: np.ndarray, k: int, c: np.ndarray,
              o: int) -> None:  # pragma: no cover - numba
    """``dst[:k] = src[:k] ** beta`` with the constants of ``gg_setup`` at ``c[o:o+8]``.

    The power code is tested once, outside the loops, so each loop is straight-line
    and vectorized by LLVM: multiplications/square roots for quarter-step betas,
    :func:`~sampledprv.sampled.draws._fastpow.fast_pow_block` for any other beta.
    """
    code = c[o + 7]
    if code == 2.0:
        for i in range(k):
            x = src[i]
            dst[i] = x * math.sqrt(x)
    elif code == 5.0:
        for i in range(k):
            x = src[i]
            dst[i] = x * x * x
    elif code == 1.0:
        for i in range(k):
            x = src[i]
            dst[i] = x * math.sqrt(math.sqrt(x))
    elif code == 3.0:
        for i in range(k):
            x = src[i]
            r = math.sqrt(x)
            dst[i] = x * r * math.sqrt(r)
    elif code == 4.0:
        for i in range(k):
            x = src[i]
            dst[i] = x * x * math.sqrt(x)
    elif code == 6.0:
        for i in range(k):
            x2 = src[i] * src[i]
            dst[i] = x2 * x2
    elif code == 0.0:
        fast_pow_block(src, dst, k, c[o])
    else:
        beta, pint, pq = c[o], c[o + 5], c[o + 6]
        for i in range(k):
            dst[i] = pow_beta(src[i], beta, pint, pq)


@njit(inline="always")
def _inv_rate(c: np.ndarray, o: int) -> float:  # pragma: no cover - numba
    """1 / acceptance rate of the envelope (as :func:`samplers.gg_acceptance`)."""
    beta, a_env, kappa, rstar = c[o], c[o + 2], c[o + 3], c[o + 4]
    if c[o + 1] < GG_LAPLACE_ENV:
        return 1.0
    g = math.gamma(1.0 + 1.0 / beta)
    if c[o + 1] == GG_LAPLACE_ENV:
        return 1.0 / (a_env * g * math.exp(-rstar))
    return 1.0 / (2.0 * g * math.sqrt(kappa / math.pi) * math.exp(-rstar))


@njit(inline="always")
def _undecided(u, t, acc, k):  # pragma: no cover - numba
    # exact test u <= exp(-t) for the candidates the squeezes left open (acc == 2)
    for i in range(k):
        if acc[i] == 2:
            acc[i] = 1 if u[i] <= math.exp(-t[i]) else 0


@njit(cache=True, error_model="numpy")
def _gg_standard_block(state, c: np.ndarray, o: int, y: np.ndarray, yb: np.ndarray,
                       n: int, cand: np.ndarray, powc: np.ndarray, u: np.ndarray,
                       t: np.ndarray, acc: np.ndarray) -> None:  # pragma: no cover - numba
    """Fill ``y[:n]`` with i.i.d. ``GG(beta, 1)`` draws and ``yb[:n]`` with ``|y|**beta``.

    ``y`` and ``yb`` need ``n + 1`` entries (the last one is a sink for the
    branch-free compaction); ``cand, powc, u, t, acc`` are work arrays of
    ``_batch(n, c, o)`` entries (one allocation per block in the caller).
    """
    method = c[o + 1]
    # beta in {1, 2}: direct draws (those of samplers.gg_draw for these betas; written
    # out rather than calling gg_draw, whose rejection branches only add compile time)
    if method == GG_EXACT_LAPLACE:        # Laplace: +-E
        for i in range(n):
            e = exponential(state)
            y[i] = random_sign(state) * e
            yb[i] = e
        return
    if method == GG_EXACT_GAUSS:          # N(0, 1/2)
        sd = c[o + 2]
        for i in range(n):
            v = normal(state) * sd
            y[i] = v
            yb[i] = v * v
        return
    laplace_env = method == GG_LAPLACE_ENV
    a_env, kappa, rstar = c[o + 2], c[o + 3], c[o + 4]
    inv_lam = 1.0 / a_env
    quad = 0.0 if laplace_env else kappa
    lin = a_env if laplace_env else 0.0
    inv_rate = _inv_rate(c, o)
    m = cand.shape[0]
    filled = 0
    while filled < n:
        k = min(m, int((n - filled) * inv_rate) + 16)
        # 1. candidates and acceptance uniforms (sign in bit 0), two RNG chains
        if laplace_env:
            for i in range(k):
                e = exponential(state) * inv_lam
                b = next_u64_aux(state)
                u[i] = (float(b >> uint64(11)) + 0.5) * _INV_2_53
                cand[i] = -e if (b & uint64(1)) else e
        else:
            for i in range(k):
                z = normal(state) * a_env
                b = next_u64_aux(state)
                u[i] = (float(b >> uint64(11)) + 0.5) * _INV_2_53
                cand[i] = z
        # 2. |y|^beta and the acceptance exponent t = -log(f/(M g)) >= 0:
        #    t = |y|^beta - lin |y| - quad y^2 + rstar
        for i in range(k):
            t[i] = abs(cand[i])
        pow_block(t, powc, k, c, o)
        # 3. accept iff u <= exp(-t): squeezes 1 - t <= exp(-t) <= 1/(1 + t) decide
        #    (branch-free), libm exp only for the rest
        n_open = 0
        for i in range(k):
            a = t[i]
            ti = powc[i] - (lin + quad * a) * a + rstar
            t[i] = ti
            ui = u[i]
            sure = ui <= 1.0 - ti
            no = ui * (1.0 + ti) > 1.0
            flag = 1 if sure else (0 if no else 2)
            acc[i] = flag
            n_open += flag >> 1
        if n_open:
            _undecided(u, t, acc, k)
        # 4. branch-free compaction, in order, straight into y / yb (index n = sink)
        f = filled
        for i in range(k):
            j = min(f, n)
            y[j] = cand[i]
            yb[j] = powc[i]
            f += acc[i]
        filled = min(f, n)


@njit(cache=True)
def gg_fill(state, prm: np.ndarray, out: np.ndarray) -> None:  # pragma: no cover - numba
    r"""Fill ``out`` with GG privacy losses; ``prm`` as built by ``builtin_params``.

    ``prm[1]`` is the mode (remove, add, subsampled remove, subsampled add),
    ``prm[2]`` the sampling rate ``q``, ``prm[GG_HEAD] = d = D/s`` and the ``gg_setup``
    constants follow at ``prm[GG_HEAD+1:GG_HEAD+9]``.  With :math:`y \sim GG(\beta, 1)`:
    from ``P0`` the loss is :math:`|y - d|^\beta - |y|^\beta`, from ``Q0``
    :math:`|y|^\beta - |y + d|^\beta`.  This is the fill of the sampler kind ``"gg"``
    itself (every mode but the symmetrized one).
    """
    head = GG_HEAD
    n = out.shape[0]
    mode = prm[1]
    q = prm[2]
    d = prm[head]
    o = head + 1
    m = int(n * _inv_rate(prm, o)) + 17
    w = np.empty(4 * (n + 1) + 4 * m)   # one allocation for all work arrays
    acc = np.empty(m, dtype=np.int64)
    y = w[:n + 1]
    yb = w[n + 1:2 * n + 2]
    x = w[2 * n + 2:3 * n + 3]
    xb = w[3 * n + 3:4 * n + 4]
    b0 = 4 * n + 4
    _gg_standard_block(state, prm, o, y, yb, n, w[b0:b0 + m], w[b0 + m:b0 + 2 * m],
                       w[b0 + 2 * m:b0 + 3 * m], w[b0 + 3 * m:b0 + 4 * m], acc)
    # |y - d| from P0 (remove; subsampled remove w.p. q), |y + d| = |y - (-d)| from Q0
    # (IEEE: y - (-d) is y + d exactly); one power pass for every mode
    mix = mode == 2.0    # subsampled remove: from P0 w.p. q, else Q0
    from_p = acc         # reused as 0/1 flags (m >= n)
    if mix:
        for i in range(n):
            from_p[i] = uniform_aux(state) < q
        for i in range(n):
            x[i] = abs(y[i] - d) if from_p[i] else abs(y[i] + d)
    else:
        dd = d if mode == 0.0 else -d
        for i in range(n):
            x[i] = abs(y[i] - dd)
    pow_block(x, xb, n, prm, o)
    if mode < 2.0:       # remove: loss from P0; add: -loss from Q0 (the same expression)
        for i in range(n):
            out[i] = xb[i] - yb[i]
    else:                # subsampled remove: phi(loss); subsampled add: -phi(loss) from Q0
        neg = mode == 3.0
        for i in range(n):
            loss = xb[i] - yb[i] if (mix and from_p[i]) else yb[i] - xb[i]
            r = subsampled_loss(loss, q)
            out[i] = -r if neg else r
