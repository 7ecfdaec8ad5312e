r"""The linear algebra of a DP-MF run: columns of ``C``, the bin Gram matrix, its factor.

``C`` (``n x n``, lower-triangular, non-negative) is given either by ``c_col``, the
non-zeros of the first column of a banded Toeplitz matrix
(:math:`C_{i+l, i} = c_l`, truncated at row ``n``), or in full.  For ``b`` bins the
bin vectors are :math:`m_j = C\,1\{i \equiv j \bmod b\}` and their Gram matrix
:math:`G = M^\top M` (``b x b``).  :math:`G` is positive definite when every bin has a
step (``b <= n``) and the diagonal of ``C`` is non-zero (``C`` invertible, the
:math:`1\{i\equiv j\}` independent).  Every quantity is in units of the clip norm.
"""

from __future__ import annotations

from typing import Optional, Tuple

import numpy as np
from scipy import sparse

__all__ = ["columns", "bin_gram", "gram_factor", "inclusion_columns_orthogonal",
           "bandwidth", "crosses_epochs", "epoch_block"]


def columns(c_col: Optional[Tuple[float, ...]], matrix: Optional[Tuple[Tuple[float, ...], ...]],
            n: int) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(colptr, rowidx, vals)``: the columns of ``C`` without their zeros (CSC)."""
    ptr = [0]
    rows, vals = [], []
    if c_col is not None:
        c = np.asarray(c_col, dtype=np.float64)
        for i in range(n):
            top = min(c.size, n - i)
            nz = np.nonzero(c[:top])[0]
            rows.append(i + nz)
            vals.append(c[nz])
            ptr.append(ptr[-1] + nz.size)
    else:
        C = np.asarray(matrix, dtype=np.float64)
        for i in range(n):
            nz = np.nonzero(C[:, i])[0]
            rows.append(nz)
            vals.append(C[nz, i])
            ptr.append(ptr[-1] + nz.size)
    return (np.array(ptr, dtype=np.int64), np.concatenate(rows).astype(np.int64),
            np.concatenate(vals))


def bandwidth(colptr: np.ndarray, rowidx: np.ndarray) -> int:
    """Largest ``r - i + 1`` over the non-zeros ``C[r, i]`` (the number of bands)."""
    n = colptr.size - 1
    h = 1
    for i in range(n):
        if colptr[i + 1] > colptr[i]:
            h = max(h, int(rowidx[colptr[i]:colptr[i + 1]].max()) - i + 1)
    return h


def bin_gram(colptr: np.ndarray, rowidx: np.ndarray, vals: np.ndarray, n: int,
             b: int) -> np.ndarray:
    r""":math:`G = M^\top M`, :math:`m_j = \sum_{i \equiv j} C e_i` (``b x b``)."""
    C = sparse.csc_matrix((vals, rowidx, colptr), shape=(n, n))
    A = sparse.csr_matrix((np.ones(n), (np.arange(n), np.arange(n) % b)), shape=(n, b))
    M = (C @ A).tocsc()
    return np.asarray((M.T @ M).todense(), dtype=np.float64)


def gram_factor(S: np.ndarray) -> np.ndarray:
    r"""Lower-triangular :math:`R` with :math:`RR^\top = S` (Cholesky).  The band of a
    cyclically banded :math:`S` stays exactly zero in :math:`R` outside the band and the
    last rows the wrap fills, so the sampler stores :math:`O(b \cdot \text{bands})`
    values."""
    try:
        return np.linalg.cholesky(S)
    except np.linalg.LinAlgError as err:
        raise ValueError("the Gram matrix of the bins is not positive definite: give a C "
                         "with a non-zero diagonal and at most `steps` bins") from err


def inclusion_columns_orthogonal(colptr: np.ndarray, rowidx: np.ndarray, n: int,
                                 b: int) -> bool:
    """Whether columns ``i`` and ``i'`` of ``C`` with ``|i - i'| >= b`` never share a row
    (what the product form of the cyclic-Poisson and b-min-sep losses needs)."""
    return bandwidth(colptr, rowidx) <= b


def crosses_epochs(colptr: np.ndarray, rowidx: np.ndarray, b: int) -> bool:
    """Whether some non-zero ``C[r, i]`` has ``r`` and ``i`` in different epochs of ``b``
    steps (``r // b != i // b``): ``C`` is then not block-diagonal by epoch."""
    n = colptr.size - 1
    for i in range(n):
        rows = rowidx[colptr[i]:colptr[i + 1]]
        if rows.size and np.any(rows // b != i // b):
            return True
    return False


def epoch_block(colptr: np.ndarray, rowidx: np.ndarray, vals: np.ndarray, b: int,
                e: int) -> Tuple[Tuple[float, ...], ...]:
    """The ``b x b`` diagonal block of epoch ``e`` of a ``C`` block-diagonal by epoch."""
    B = np.zeros((b, b))
    for i in range(e * b, (e + 1) * b):
        B[rowidx[colptr[i]:colptr[i + 1]] - e * b, i - e * b] = vals[colptr[i]:colptr[i + 1]]
    return tuple(tuple(float(x) for x in row) for row in B)
