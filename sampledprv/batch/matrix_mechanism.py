r"""Matrix-factorization training (DP-FTRL, banded MF) under its batch samplers.

A run of ``n = steps`` steps releases :math:`y = Cx + N(0, \sigma^2 I_n)`, ``C``
lower-triangular with non-negative entries (banded Toeplitz when given by ``c_col``, the
non-zeros of its first column: ``c_col = [1]`` is DP-SGD), :math:`x` the clipped
per-step contributions.  Noise is in units of the clip norm; normalise ``c_col``
yourself (e.g. to unit norm) if that is your convention.  Adjacency is zero-out of one
record (equal to add/remove here: no truncation).  The record's participation pattern
:math:`\pi \in \{0,1\}^n` is drawn by the sampler (:mod:`.matrix_samplers`) and the
dominating pair is (Choquette-Choo et al., arXiv 2410.06266; design notes,
"Matrix-factorization training")

.. math:: P = E_\pi\, N(C\pi, \sigma^2 I_n), \qquad Q = N(0, \sigma^2 I_n).

No closed form: :class:`~sampledprv.SampledAccountant` samples the loss with the fused
samplers of :mod:`sampledprv.sampled.draws.matrix` (the fixed bin through its
``b``-dimensional Gram reduction) and bounds the unseen tail with the proven Renyi
bounds of :mod:`sampledprv.rdp.matrix_moments`.  ``compose(spec, count=1)`` is the
whole run.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, Callable, Dict, Optional, Tuple

import numpy as np
from scipy import sparse

from ..core.formatting import spec_number as _g
from ..core import validation as v
from ..mechanisms.base import Mechanism
from ..mechanisms.registry import CliKind, Family, method_hooks, register
from ..rdp import matrix_moments as mm
from ..core.outward import up
from ..rdp.sampled_gaussian import sampled_gaussian_renyi
from ..sampled.certification.conditional import ConditionalRemove
from ..sampled.certification import tilted_matrix
from ..sampled.draws import matrix as dm
from . import matrix_geometry as geo
from .matrix_samplers import BMinSep, CyclicPoisson, EpochBin, FixedBin
from .random_allocation import SAMPLED_HOOKS, no_closed_form_law

__all__ = ["MatrixMechanism", "FixedBin", "CyclicPoisson", "BMinSep", "EpochBin"]

#: How the tail bounds of these specs are described in an interval's ``method``.
TAIL_SOURCE = ("proven Renyi bounds of matrix-factorization training (remove: exact "
               "multiset moments of the fixed bin within budget, split cross terms and "
               "joint convexity beyond; add: Jensen's inequality)")

#: Largest integer order of the split fixed-bin bound (``O(b a^2)``).
MAX_SPLIT_ORDER = 128
#: Work budget (transitions) and largest order of the exact band transfer of the fixed bin.
BAND_BUDGET = 4e8
MAX_BAND_ORDER = 48


def _c_col(c_col: Any) -> Tuple[float, ...]:
    try:
        c = np.asarray(c_col, dtype=np.float64).ravel()
    except (TypeError, ValueError) as err:
        raise ValueError(f"c_col must be a list of numbers (the non-zeros of the first "
                         f"column of C), got {c_col!r}") from err
    if c.size == 0 or not np.all(np.isfinite(c)):
        raise ValueError(f"c_col must be a non-empty list of finite numbers, got {c_col!r}")
    if np.any(c < 0):
        raise ValueError(f"c_col must be non-negative (the dominating pair is proven for "
                         f"non-negative C), got {c_col!r}")
    if c[0] <= 0:
        raise ValueError(f"c_col[0] must be > 0 (C invertible), got {c_col!r}")
    return tuple(float(x) for x in c)


def _matrix(matrix: Any, n: int) -> Tuple[Tuple[float, ...], ...]:
    try:
        C = np.asarray(matrix, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise ValueError(f"matrix must be an n x n array of numbers, got {matrix!r}") from err
    if C.shape != (n, n):
        raise ValueError(f"matrix must be steps x steps = {n} x {n}, got shape {C.shape}")
    if not np.all(np.isfinite(C)) or np.any(C < 0):
        raise ValueError("matrix must have finite non-negative entries (the dominating pair "
                         "is proven for non-negative C)")
    if np.any(np.triu(C, 1) != 0):
        raise ValueError("matrix must be lower-triangular (step i's noise cannot depend on "
                         "later steps); give C with zeros above the diagonal")
    if np.any(np.diag(C) <= 0):
        raise ValueError("matrix must have a positive diagonal (C invertible)")
    return tuple(tuple(float(x) for x in row) for row in C)


@dataclass(frozen=True, repr=False)
class MatrixMechanism(Mechanism):
    r"""A whole DP-MF training run (``steps`` steps) under a batch sampler.

    Parameters
    ----------
    sigma : float
        Standard deviation of the noise :math:`z` of :math:`y = Cx + z` per step, in units
        of the clip norm (jax_privacy's noise multiplier, not divided by ``||c_col||``).
    steps : int
        Number of steps :math:`n` of the run.
    sampler : FixedBin, CyclicPoisson, BMinSep or EpochBin
        How a record's participations are drawn (:mod:`.matrix_samplers`).
    c_col : sequence of float, optional
        Non-zeros of the first column of a banded lower-triangular Toeplitz ``C``
        (:math:`C_{i+l,i} = c_l`); ``c_col[0] > 0``, all entries >= 0.
    matrix : n x n array, optional
        ``C`` in full instead (lower-triangular, non-negative, positive diagonal).

    Notes
    -----
    Neighbouring relation: add/remove (zero-out) only.  Cyclic Poisson and b-min-sep
    need a band of at most the cycle length / minimum separation (the columns of one
    participation pattern then never overlap), as in jax_privacy.  ``EpochBin(b)`` (the
    bin redrawn every epoch) needs whole epochs (``steps`` a multiple of ``b``) and ``C``
    block-diagonal by epoch, given by ``matrix=`` (a banded ``c_col`` crosses the epoch
    boundaries unless it has one band); the run is then the composition of its epochs.
    ``count`` in ``compose`` repeats the whole run.
    """

    sigma: float
    steps: int
    sampler: Any
    c_col: Optional[Tuple[float, ...]] = None
    matrix: Optional[Tuple[Tuple[float, ...], ...]] = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "sigma", v.positive("sigma", self.sigma))
        n = v.positive_int("steps", self.steps)
        object.__setattr__(self, "steps", n)
        if (self.c_col is None) == (self.matrix is None):
            raise ValueError("give exactly one of c_col= (the first column of a banded "
                             "Toeplitz C, e.g. c_col=(1.0,)) and matrix= (C in full)")
        if self.c_col is not None:
            c = _c_col(self.c_col)
            if len(c) > n:
                raise ValueError(f"c_col has {len(c)} entries, more than steps={n}: drop "
                                 "the bands beyond the run")
            object.__setattr__(self, "c_col", c)
        else:
            object.__setattr__(self, "matrix", _matrix(self.matrix, n))
        s = self.sampler
        if not isinstance(s, (FixedBin, CyclicPoisson, BMinSep, EpochBin)):
            raise ValueError(f"sampler must be sp.FixedBin(b), sp.CyclicPoisson(b, p), "
                             f"sp.BMinSep(b, p, warm_start=...) or sp.EpochBin(b), got {s!r}")
        if isinstance(s, FixedBin) and s.bins > n:
            raise ValueError(f"bins={s.bins} exceeds steps={n}: every bin of FixedBin needs "
                             "a step; use at most `steps` bins")
        if isinstance(s, EpochBin):
            _check_epochs(self)
        elif not isinstance(s, FixedBin):
            if geo.bandwidth(*self._columns()[:2]) > s.period:
                raise ValueError(f"{type(s).__name__} needs C with at most {s.period} bands "
                                 f"(the cycle/min_sep): shorten c_col or use FixedBin")

    def __repr__(self) -> str:
        what = f"c_col={self.c_col!r}" if self.c_col is not None else \
            f"matrix=<{self.steps}x{self.steps} lower-triangular>"
        return (f"MatrixMechanism(sigma={self.sigma!r}, steps={self.steps!r}, "
                f"sampler={self.sampler!r}, {what})")

    # -- geometry (cached per spec) -------------------------------------------------------
    def _columns(self) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        return _columns_of(self.c_col, self.matrix, self.steps)

    @property
    def bands(self) -> int:
        """Number of bands of ``C`` (1 for DP-SGD)."""
        return geo.bandwidth(*self._columns()[:2])

    @property
    def epochs(self) -> float:
        """``steps / period``: expected passes over the data of the fixed bin."""
        return self.steps / self.sampler.period

    def scaled_gram(self) -> np.ndarray:
        r""":math:`S = M^\top M/\sigma^2` of the bins (fixed bin; ``b x b``)."""
        return _scaled_gram(self)

    def _ndim_params(self, direction: str) -> np.ndarray:
        """The ``n``-dimensional sampler's parameters (kept: building them walks every
        column, and :meth:`privacy_loss_at` needs them at every call)."""
        return _ndim_params_of(self, direction)

    def _params(self, direction: str) -> np.ndarray:
        return _params_of(self, direction)

    # -- hooks of the sampled accountant ---------------------------------------------------
    def loss_sampler(self, direction: str) -> tuple:
        """``(fill, params)``: the fused Numba sampler of the loss in ``direction`` (the
        Gram-reduced one for the fixed bin)."""
        return dm.matrix_fill, self._params(direction)

    def numpy_loss_sampler(self, direction: str, *, gram: bool = True) -> Callable:
        """``sample(rng, size)``: the compiled sampler on streams seeded from ``rng``;
        ``gram=False`` samples the fixed bin in ``n`` dimensions (for checks)."""
        if not gram and isinstance(self.sampler, FixedBin):
            return dm.matrix_numpy_sampler(self._ndim_params(direction))
        return dm.matrix_numpy_sampler(self._params(direction))

    def torch_loss_sampler(self, direction: str) -> Callable:
        """``f(generator, size)``: the Gram-reduced fixed-bin loss on a torch device
        (dense ``b x b`` factor, blocks of draws); cyclic Poisson and b-min-sep are
        sampled by the Numba backend only (``ValueError``)."""
        if not isinstance(self.sampler, FixedBin):
            raise ValueError(f"backend='torch' samples the fixed bin only; use "
                             f"backend='numba' for {type(self.sampler).__name__}")
        S = self.scaled_gram()
        return dm.gram_torch_sampler(S, geo.gram_factor(S), direction)

    def privacy_loss_at(self, y: Any) -> float:
        r""":math:`\log(P/Q)(y)` at an output :math:`y \in \mathbb R^n` (clip-norm units)."""
        return dm.pointwise_loss(self._ndim_params("remove"),
                                 np.asarray(y, dtype=np.float64) / self.sigma)

    def conditional(self, direction: str) -> Any:
        """The conditional sampler of the remove loss where the fixed-bin pair *is*
        balls-and-bins: ``S`` diagonal with equal entries (e.g. ``c_col = [1]`` with
        ``b`` dividing ``n``), the pair of ``RandomAllocation(sigma/sqrt(E), b, 1)``
        (design notes); else ``None`` (plain samples of the loss)."""
        if direction != "remove" or not isinstance(self.sampler, FixedBin):
            return None
        S = self.scaled_gram()
        d = np.diag(S)
        b = S.shape[0]
        if b < 2 or np.any(S != np.diag(d)) or np.any(d != d[0]):
            return None
        return ConditionalRemove(b, math.sqrt(float(d[0])))

    def composition_parts(self) -> Optional[Tuple[Tuple["MatrixMechanism", int], ...]]:
        """``EpochBin``: the run as the composition of its epochs, ``((one-epoch spec,
        multiplicity), ...)`` (each a fixed bin over ``b`` steps with the epoch's block
        of ``C``; the sampled accountant composes these); ``None`` for the other
        samplers."""
        return _epoch_specs(self) if isinstance(self.sampler, EpochBin) else None

    def tilted_law(self, order: int, count: int = 1) -> Any:
        r"""The tilted law :math:`P_a` of ``count`` runs, remove direction, for the
        sampled accountant's tilted tail bounds
        (:func:`sampledprv.sampled.certification.tilted_matrix.fixed_bin_law`): the
        fixed bin only (its :math:`Z_a` is exact), ``None`` for the other samplers and
        where the band transfer exceeds :data:`BAND_BUDGET`."""
        if int(order) != order or order < 2:
            return None
        if isinstance(self.sampler, EpochBin):
            return _epoch_tilted_law(self, int(order), int(count))
        if not isinstance(self.sampler, FixedBin):
            return None
        if not tilted_matrix.feasible(self.scaled_gram(), int(order), BAND_BUDGET):
            return None
        return _tilted_law_of(self, int(order), int(count))

    # -- tail information: proven Renyi bounds -------------------------------------------
    def renyi(self, order: float, direction: str) -> float:
        r"""Upper bound on :math:`D_\alpha` of the dominating pair (nats) for any real
        :math:`\alpha > 1` (:mod:`sampledprv.rdp.matrix_moments`)."""
        a = float(order)
        if not a > 1.0:
            raise ValueError(f"order must be > 1, got {order!r}")
        if direction not in ("remove", "add"):
            raise ValueError(f"direction must be 'remove' or 'add', got {direction!r}")
        return _renyi(self, a, direction)

    @property
    def tail_source(self) -> str:
        return TAIL_SOURCE

    def describe(self) -> str:
        c = f"c_col={list(self.c_col)}" if self.c_col is not None else "C given in full"
        return f"matrix-factorization run ({self.steps} steps, {c}, sigma={self.sigma:g}) " \
               f"under {self.sampler!r}"


@functools.lru_cache(maxsize=64)
def _columns_of(c_col, matrix, n):
    return geo.columns(c_col, matrix, n)


@functools.lru_cache(maxsize=64)
def _scaled_gram(spec: MatrixMechanism) -> np.ndarray:
    ptr, idx, val = spec._columns()
    G = geo.bin_gram(ptr, idx, val, spec.steps, spec.sampler.period)
    out = G / (spec.sigma * spec.sigma)
    out.setflags(write=False)
    return out


@functools.lru_cache(maxsize=64)
def _ndim_params_of(spec: MatrixMechanism, direction: str) -> np.ndarray:
    s = spec.sampler
    kind = {FixedBin: dm.FIXED, CyclicPoisson: dm.CYCLIC, BMinSep: dm.BMINSEP,
            EpochBin: dm.EPOCH}[type(s)]
    p = 1.0 if isinstance(s, (FixedBin, EpochBin)) else s.p
    warm = isinstance(s, BMinSep) and s.warm_start
    ptr, idx, val = spec._columns()
    # writeable, like _params_of's: the kernels take it as a plain array (a read-only one
    # would be another Numba signature); nothing writes to it
    return dm.ndim_params(kind, ptr, idx, val / spec.sigma, spec.steps, s.period, p, warm,
                          direction)


@functools.lru_cache(maxsize=64)
def _params_of(spec: MatrixMechanism, direction: str) -> np.ndarray:
    if isinstance(spec.sampler, FixedBin):
        S = spec.scaled_gram()
        return dm.gram_params(S, geo.gram_factor(S), direction)
    return spec._ndim_params(direction)


@functools.lru_cache(maxsize=16)
def _tilted_law_of(spec: MatrixMechanism, order: int, count: int) -> Any:
    S = spec.scaled_gram()
    return tilted_matrix.fixed_bin_law(S, geo.gram_factor(S), order, count, BAND_BUDGET)


def _check_epochs(spec: MatrixMechanism) -> None:
    b, n = spec.sampler.bins, spec.steps
    if n % b:
        raise ValueError(f"EpochBin({b}) needs whole epochs: steps={n} is not a multiple of "
                         f"bins={b}; use steps={n - n % b} or {n - n % b + b}, or FixedBin")
    ptr, idx, _ = spec._columns()
    if geo.crosses_epochs(ptr, idx, b):
        raise ValueError(
            f"EpochBin({b}) needs C block-diagonal by epoch (the noise of an epoch stays "
            f"inside it; C[r, i] = 0 when r // {b} != i // {b}), but the band of C crosses "
            "an epoch boundary: give matrix= with one lower-triangular block per epoch "
            "(e.g. np.kron(np.eye(epochs), C_epoch)), or use FixedBin / CyclicPoisson for "
            "a band across epochs")


@functools.lru_cache(maxsize=16)
def _epoch_specs(spec: MatrixMechanism) -> Tuple[Tuple[MatrixMechanism, int], ...]:
    """The distinct epochs of an ``EpochBin`` run as one-epoch fixed-bin specs
    (``b`` steps, ``b`` bins, ``C`` the epoch's block) with their multiplicities."""
    b = spec.sampler.bins
    ptr, idx, val = spec._columns()
    counts: Dict[Any, int] = {}
    for e in range(spec.steps // b):
        blk = geo.epoch_block(ptr, idx, val, b, e)
        counts[blk] = counts.get(blk, 0) + 1
    return tuple((MatrixMechanism(spec.sigma, b, FixedBin(b), matrix=blk), m)
                 for blk, m in counts.items())


def _epoch_tilted_law(spec: MatrixMechanism, order: int, count: int) -> Any:
    laws = []
    for blk, mult in _epoch_specs(spec):
        law = blk.tilted_law(order, count * mult)
        if law is None:
            return None
        laws.append(law)
    return laws[0] if len(laws) == 1 else tilted_matrix.product_law(laws)


def _inclusion(spec: MatrixMechanism) -> np.ndarray:
    """:math:`r_i = P(i \\in \\pi)` of the sampler."""
    s, n = spec.sampler, spec.steps
    if isinstance(s, (FixedBin, EpochBin)):
        return np.full(n, 1.0 / s.bins)
    if isinstance(s, CyclicPoisson):
        return np.full(n, s.p / s.bins)
    b, p = s.min_sep, s.p
    inject = np.zeros(n + b)
    if s.warm_start:
        pi0 = 1.0 / (1.0 + (b - 1) * p)
        inject[0] = pi0
        inject[1:b] = p * pi0
    else:
        inject[0] = 1.0
    free = np.zeros(n)
    r = np.zeros(n)
    for i in range(n):
        free[i] = (free[i - 1] * (1.0 - p) if i > 0 else 0.0) + inject[i] + \
            (r[i - b] if i >= b else 0.0)
        r[i] = p * free[i]
    return r


@functools.lru_cache(maxsize=64)
def _add_terms(spec: MatrixMechanism) -> Tuple[float, float]:
    r""":math:`(\kappa, \|\bar m\|^2/\sigma^2)` of the add bound."""
    ptr, idx, val = spec._columns()
    n = spec.steps
    r = _inclusion(spec)
    C = sparse.csc_matrix((val / spec.sigma, idx, ptr), shape=(n, n))
    mbar = C @ r
    if isinstance(spec.sampler, FixedBin):
        kappa = float(np.trace(spec.scaled_gram())) / (2.0 * spec.sampler.bins)
    else:                         # orthogonal pattern columns
        norms = np.asarray(C.multiply(C).sum(axis=0)).ravel()
        kappa = 0.5 * float(norms @ r)
    return kappa, float(mbar @ mbar)


def _column_norms_sq(spec: MatrixMechanism) -> np.ndarray:
    ptr, _, val = spec._columns()
    return np.array([float(val[ptr[i]:ptr[i + 1]] @ val[ptr[i]:ptr[i + 1]])
                     for i in range(spec.steps)]) / spec.sigma ** 2


@functools.lru_cache(maxsize=64)
def _band_moments(spec: MatrixMechanism) -> np.ndarray:
    """Exact log-moments of the fixed bin at orders ``0..A`` by the band transfer (empty
    when the band is too wide for :data:`BAND_BUDGET` or ``b < 2w + 1``)."""
    S = spec.scaled_gram()
    b = S.shape[0]
    w = max(mm.cyclic_bandwidth(S), 1)
    if b < 2 * w + 1:
        return np.zeros(0)
    A = 1
    while A < MAX_BAND_ORDER and mm.band_transitions(b, w, A + 1) <= BAND_BUDGET:
        A += 1
    if A < 2:
        return np.zeros(0)
    return mm.band_fixed_bin_log_moments(S, A)


@functools.lru_cache(maxsize=8192)
def _fixed_log_moment(spec: MatrixMechanism, a: int) -> float:
    S = spec.scaled_gram()
    band = _band_moments(spec)
    if a < band.size:
        return float(band[a])
    exact = mm.exact_fixed_bin_log_moment(S, a)
    if math.isfinite(exact):
        return exact
    if a == 2:   # Z_2 = b^-2 sum_{j,j'} e^{S_jj'}: b^2 terms, whatever the bands
        return mm.pair_fixed_bin_log_moment(S)
    d = np.diag(S)
    m = a * (a - 1) * 0.5 * d
    top = float(m.max())
    best = up(top + math.log(float(np.mean(np.exp(m - top)))), top)   # joint convexity
    last = _split_top(spec)
    if a <= last:
        # exact for a diagonal S (c_col = [1]); loose for wide bands (design notes)
        reach = min(last, _SPLIT_REACH) if a <= _SPLIT_REACH else last
        best = min(best, float(_split_moments(spec, reach)[a]))
    return best


#: the split bound's series is computed to this degree for the orders up to it, else to
#: the largest order allowed: an order search asks for dozens of orders of one spec,
#: which then share two products of series instead of one each
_SPLIT_REACH = 64


@functools.lru_cache(maxsize=64)
def _split_top(spec: MatrixMechanism) -> int:
    """The largest order at which the split bound is tried: :data:`MAX_SPLIT_ORDER`, or
    less for banded ``S`` (``b a^2 <= 200,000``; exact only for a diagonal ``S``)."""
    S = spec.scaled_gram()
    b = S.shape[0]
    if not np.any(S - np.diag(np.diag(S))):
        return MAX_SPLIT_ORDER
    top = min(MAX_SPLIT_ORDER, math.isqrt(200_000 // b) + 1)
    while top > 0 and b * top * top > 200_000:
        top -= 1
    return top


@functools.lru_cache(maxsize=64)
def _split_moments(spec: MatrixMechanism, top: int) -> np.ndarray:
    """:func:`~sampledprv.rdp.matrix_moments.split_fixed_bin_log_moments` of ``spec``'s
    scaled Gram matrix at the orders ``0..top`` (each bit-identical to the single order)."""
    out = mm.split_fixed_bin_log_moments(spec.scaled_gram(), top)
    out.setflags(write=False)
    return out


@functools.lru_cache(maxsize=8192)
def _renyi(spec: MatrixMechanism, a: float, direction: str) -> float:
    s = spec.sampler
    if isinstance(s, EpochBin):     # the composition of the epochs
        return up(sum(mult * blk.renyi(a, direction) for blk, mult in _epoch_specs(spec)))
    if direction == "add":
        return mm.add_divergence(a, *_add_terms(spec))
    if isinstance(s, FixedBin):
        return mm.chord(a, lambda k: _fixed_log_moment(spec, k))
    w = a * (a - 1.0) * 0.5 * _column_norms_sq(spec)
    kind = "cyclic" if isinstance(s, CyclicPoisson) else "bminsep"
    warm = isinstance(s, BMinSep) and s.warm_start
    best = mm.renewal_log_moment(w, s.period, s.p, kind, warm) / (a - 1.0)
    if isinstance(s, CyclicPoisson):
        # average over shifts of the product of Poisson-subsampled Gaussians
        norms = np.sqrt(_column_norms_sq(spec))
        values, inverse = np.unique(norms, return_inverse=True)   # few distinct norms
        # p = 1: every step of the shift is taken, a plain Gaussian of sensitivity x
        sg = np.array([sampled_gaussian_renyi(a, s.p, float(x)) if s.p < 1.0
                       else up(0.5 * a * float(x) * float(x)) for x in values])
        per = np.zeros(s.bins)
        np.add.at(per, np.arange(spec.steps) % s.bins, (a - 1.0) * sg[inverse.ravel()])
        top = float(per.max())
        val = top + math.log(float(np.mean(np.exp(per - top))))
        best = min(best, up(val, top) / (a - 1.0))
    return best


def _build(p: Dict[str, Any]) -> MatrixMechanism:
    c = p.get("c_col", (1.0,))
    c = c if isinstance(c, tuple) else (float(c),)
    given = [k for k in ("bins", "cycle", "min_sep", "epoch_bins") if k in p]
    if len(given) != 1:
        raise ValueError("give one sampler: bins=b (fixed bin), cycle=b p=... (cyclic "
                         "Poisson), min_sep=b p=... [warm=1] (b-min-sep) or epoch_bins=b "
                         "(bin redrawn every epoch)")
    if "p" in p and given[0] in ("bins", "epoch_bins"):
        raise ValueError(f"p= goes with cycle= or min_sep=; {given[0]}= takes every record "
                         "once per cycle (p = 1)")
    if "warm" in p and given[0] != "min_sep":
        raise ValueError("warm= goes with min_sep= (b-min-sep warm start)")
    if given[0] == "bins":
        s: Any = FixedBin(int(p["bins"]))
    elif given[0] == "epoch_bins":
        s = EpochBin(int(p["epoch_bins"]))
    elif given[0] == "cycle":
        s = CyclicPoisson(int(p["cycle"]), p.get("p", 1.0))
    else:
        warm = p.get("warm", 0)
        if warm not in (0, 1):
            raise ValueError(f"warm must be 0 or 1, got {warm!r}")
        s = BMinSep(int(p["min_sep"]), p.get("p", 1.0), bool(warm))
    return MatrixMechanism(p["sigma"], int(p["steps"]), s, c_col=c)



def _format(m: MatrixMechanism) -> str:
    if m.c_col is None:
        raise ValueError("a MatrixMechanism with a full matrix has no command-line form; "
                         "give it by c_col= (banded Toeplitz) to use the command line")
    c = ":".join(_g(x) for x in m.c_col)
    s = m.sampler
    if isinstance(s, FixedBin):
        tail = f"bins={s.bins}"
    elif isinstance(s, EpochBin):
        tail = f"epoch_bins={s.bins}"
    elif isinstance(s, CyclicPoisson):
        tail = f"cycle={s.bins} p={_g(s.p)}"
    else:
        tail = f"min_sep={s.min_sep} p={_g(s.p)}" + (" warm=1" if s.warm_start else "")
    return f"bandmf c_col={c} sigma={_g(m.sigma)} steps={m.steps} {tail}"


FAMILY = register(Family(
    name="matrix_mechanism", types=(MatrixMechanism,),
    loss_pair=no_closed_form_law("spec) (count=1: the spec is the whole run"),
    cli=(CliKind("bandmf", (("sigma",), ("steps",)),
                 ("c_col", "bins", "cycle", "min_sep", "epoch_bins", "p", "warm"),
                 ("sigma",),
                 "bandmf c_col=1:0.5:0.25 sigma=3 steps=100 bins=10",
                 "a whole DP-MF / DP-FTRL run, y = Cx + N(0, sigma^2) with banded Toeplitz C "
                 "(c_col), fixed bin (bins=), cyclic Poisson (cycle= p=), b-min-sep "
                 "(min_sep= p= warm=) or the bin redrawn every epoch (epoch_bins=, "
                 "c_col=1 only: a band would cross the epochs); sampled accountant only",
                 _build, aliases=("banded-mf", "dp-ftrl", "matrix-mechanism"),
                 integers=("steps", "bins", "cycle", "min_sep", "epoch_bins", "warm"),
                 vectors=("c_col",)),),
    format=_format,
    relations_note="add/remove (zero-out) only",
    extras={"sampled_only": True}, renyi_costly=True,
    **method_hooks(*SAMPLED_HOOKS, "tilted_law")))
