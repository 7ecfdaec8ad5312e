r"""The block reduction of ``k``-of-``T`` random allocation (Feldman and Shenfeld, 2025).

**Theorem** (design notes, "Certified tails: every valid bound").  Split the ``T`` steps
into ``k`` blocks of sizes :math:`T_1, \dots, T_k \in \{\lfloor T/k\rfloor,
\lceil T/k\rceil\}` (:func:`block_sizes`, :math:`\sum_j T_j = T`).  For every convex
:math:`f` and every composition that contains the pair :math:`(P, Q)` of ``k``-of-``T``
allocation (any number of epochs, any other mechanisms),

.. math:: D_f\big(P \,\|\, Q\big) \le D_f\Big(\bigotimes_{j} P^{(1, T_j)} \,\Big\|\,
          \bigotimes_j Q^{(1, T_j)}\Big),

where :math:`(P^{(1, T_j)}, Q^{(1, T_j)})` is the pair of balls-and-bins (``1`` of
:math:`T_j`) with the same step noise.  With :math:`f(x) = (x - e^\varepsilon)_+`
(remove), :math:`f(x) = (1 - e^\varepsilon x)_+` (add) and :math:`f(x) = x^\alpha` this
bounds :math:`\delta(\varepsilon)` in both directions and the Renyi moments: ``k``-of-``T``
allocation is dominated by the ``k``-fold (heterogeneous) composition of
balls-and-bins over the blocks.  Proof: a uniformly random permutation :math:`\pi` of
the steps followed by one uniform step in each block :math:`\pi(B_j)` gives a uniformly
random ``k``-subset (its law is invariant under every permutation, and permutations act
transitively on ``k``-subsets), so :math:`P = E_\pi[P_\pi]` with :math:`P_\pi` the
block-allocation pair, while :math:`Q = B^{\otimes T}` does not depend on :math:`\pi`;
Jensen's inequality on :math:`E_Q[f(E_\pi\, dP_\pi/dQ)]` and the invariance of
:math:`Q` under relabelling the steps give the claim.  ``T/k`` need not be an integer.
(Feldman and Shenfeld, "Privacy Amplification by Random Allocation", arXiv 2502.08202,
state it for ``k | T``.)
"""

from __future__ import annotations

from typing import Tuple


__all__ = ["block_sizes", "block_counts"]


def block_sizes(steps: int, selected: int) -> Tuple[int, ...]:
    r"""The ``selected`` block sizes :math:`T_j \in \{\lfloor T/k\rfloor, \lceil
    T/k\rceil\}` summing to ``steps`` (larger blocks first)."""
    T, k = int(steps), int(selected)
    if not 1 <= k <= T:
        raise ValueError(f"need 1 <= selected <= steps, got selected={selected!r}, "
                         f"steps={steps!r}")
    q, r = divmod(T, k)
    return (q + 1,) * r + (q,) * (k - r)


def block_counts(steps: int, selected: int) -> Tuple[Tuple[int, int], ...]:
    """``((size, count), ...)``: the distinct block sizes and how many blocks have each."""
    sizes = block_sizes(steps, selected)
    return tuple((s, sizes.count(s)) for s in sorted(set(sizes), reverse=True))
