r"""Shuffled batches (DP-SGD with shuffling): a certified lower bound and the
deterministic-batch upper bound.

Each epoch the dataset is permuted uniformly at random and cut into ``steps`` batches of
equal size; each step releases the batch's sum of clipped contributions (norm at most
``sensitivity`` :math:`C`) plus :math:`N(0, \sigma^2 I)` (ABLQ with shuffled batches,
"ABLQ_S", of Chua, Ghazi, Kamath, Kumar, Manurangsi, Sinha and Zhang, "How Private are
DP-SGD Implementations?", ICML 2024, arXiv 2403.17673).  ``count = E`` composes ``E``
epochs, each with a fresh permutation.  Accounted by
:class:`sampledprv.ShuffleAccountant`; the other accountants refuse it.

Neighbouring relations (batch sizes stay fixed in both):

* ``"substitute"``: record ``i`` replaced by another (contributions ``x``, ``x'``,
  :math:`\|x - x'\| \le 2C`);
* ``"add_remove"``: read as **zero-out**, record ``i`` replaced by a null record that
  contributes 0 (:math:`\|x\| \le C`), the form of add/remove that keeps batch sizes
  fixed (Kairouz, McMahan, Song, Thakkar, Thakurta and Xu, "Practical and private (deep)
  learning without sampling or shuffling", ICML 2021, arXiv 2103.00039; Chua et al.).

No dominating pair of shuffled batches is known.  What is proved:

* **Lower end** (attained).  One-dimensional contributions, every other record
  contributing :math:`-C`, and record ``i`` contributing :math:`C` (against :math:`-C`
  under substitution, 0 under zero-out).  After subtracting the known :math:`-bC` from
  every step, one epoch releases :math:`X \in \mathbb R^T` with law
  :math:`\mathrm{MoG}(m) = \frac1T \sum_t N(m e_t, \sigma^2 I_T)` (the record's batch is
  uniform), :math:`m = 2C` on one dataset and :math:`m = 0` (substitution) or :math:`C`
  (zero-out) on the other; epochs are independent.  This is Chua et al.'s pair.  Any
  post-processing of the release gives a lower bound: as Chua et al. we keep the slice
  of :math:`M = \max_t X_t` in a fixed partition of the line (their "cube" sets
  :math:`\{\max_t x_t \le c\}`), whose laws are exact:
  :math:`P[M \le c] = \Phi((c - m)/\sigma)\,\Phi(c/\sigma)^{T-1}`.  The slice pair is a
  :class:`ShuffleSlicePair` (a finite pair), and the analytic accountant's certified
  **lower** end of its ``E``-fold composition bounds the mechanism's
  :math:`\varepsilon(\delta)` from below.
* **Upper end** (proved, loose).  For a fixed permutation, record ``i`` is in exactly one
  batch per epoch, so an epoch is dominated by one Gaussian mechanism with sensitivity
  :math:`\Delta` (:math:`2C` under substitution, :math:`C` under zero-out; the other
  steps do not depend on record ``i`` given the past).  The permutation is drawn
  independently of the data and the neighbouring datasets are aligned index by index,
  so the shuffled pair is a mixture, over the same permutation law, of pairs each
  dominated by the Gaussian: joint convexity of the hockey-stick divergence gives the
  bound, and ``E`` epochs compose to the Gaussian with :math:`\mu = \Delta\sqrt E/\sigma`
  ("deterministic batches", Chua et al.'s ABLQ_D).  Under literal add/remove (the
  dataset size changes, so the batches of the two datasets are not aligned) no upper
  bound is known at all.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, Dict

import numpy as np

from ..core import validation as v
from ._finite import FINITE_HOOKS, FiniteLaw, finite_law
from .base import Mechanism, NeighbouringRelation
from ..core.formatting import spec_number as _g
from .registry import CliKind, Family, register

__all__ = ["Shuffled"]


@dataclass(frozen=True)
class Shuffled(Mechanism):
    r"""One epoch of DP-SGD with shuffled batches: ``steps`` Gaussian releases over a
    random permutation cut into equal batches (module docstring).

    Parameters
    ----------
    sigma : float
        Standard deviation of the Gaussian noise added to each batch's sum.
    steps : int
        Batches (steps) per epoch, ``T``.
    sensitivity : float
        Per-record clipping norm ``C`` (the add/remove sensitivity).

    Notes
    -----
    ``count = E`` in an accountant composes ``E`` epochs (a fresh permutation each).
    Accounted by :class:`sampledprv.ShuffleAccountant`: certified lower end from
    Chua et al.'s worst known pair, upper end from deterministic batches.
    """

    sigma: float
    steps: int
    sensitivity: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "sigma", v.positive("sigma", self.sigma))
        object.__setattr__(self, "steps", v.positive_int("steps", self.steps))
        object.__setattr__(self, "sensitivity", v.positive("sensitivity", self.sensitivity))
        mu = 2.0 * self.sensitivity / self.sigma       # the larger shift (substitution)
        v.loss_limit(f"Shuffled(sigma={self.sigma!r}, steps={self.steps}, sensitivity="
                     f"{self.sensitivity!r})",
                     f"the privacy-loss mean mu^2/2 (mu = 2 sensitivity/sigma = {mu:.4g})",
                     0.5 * mu * mu,
                     f"Use sigma >= 2 sensitivity / {math.sqrt(2.0 * v.MAX_LOSS):.4g}")
        # the lower end slices the range of the released maximum in steps of SLICE sigma^2
        slices = (2.0 * mu * self.sigma + 20.0 * self.sigma) / (SLICE * self.sigma ** 2)
        if not slices <= MAX_SLICES:
            a = SLICE * MAX_SLICES         # smallest sigma: a s^2 - 20 s - 4 C = 0
            need = (20.0 + math.sqrt(400.0 + 16.0 * self.sensitivity * a)) / (2.0 * a)
            raise ValueError(
                f"Shuffled(sigma={self.sigma!r}, sensitivity={self.sensitivity!r}): the "
                f"lower end's slice pair would need about {slices:.3g} slices of width "
                f"{SLICE:g} sigma^2, more than {MAX_SLICES:.0e} (memory and time); use "
                f"sigma >= about {need:.3g} for this sensitivity (smaller noise is not "
                "private in any useful sense: the epoch's mu = 2 sensitivity/sigma is "
                f"{mu:.3g})")

    def shifts(self, relation: NeighbouringRelation) -> tuple[float, float]:
        r"""``(m_P, m_Q)``: the means of the attained pair :math:`(\mathrm{MoG}(m_P),
        \mathrm{MoG}(m_Q))` under ``relation`` (``"add_remove"`` read as zero-out)."""
        c = self.sensitivity
        return (2.0 * c, 0.0) if relation is NeighbouringRelation.SUBSTITUTE else (2.0 * c, c)

    def deterministic_sensitivity(self, relation: NeighbouringRelation) -> float:
        """The Gaussian sensitivity of one epoch of deterministic batches under ``relation``."""
        return 2.0 * self.sensitivity if relation is NeighbouringRelation.SUBSTITUTE \
            else self.sensitivity


class ShuffledAccountingError(ValueError, TypeError):
    """``Shuffled`` given to an accountant other than the shuffle accountant."""


def _refuse(spec: Any) -> Any:
    raise ShuffledAccountingError(
        f"{spec!r} has no known dominating pair, so neither Accountant nor "
        "SampledAccountant can certify an upper bound for it. Use "
        "sp.ShuffleAccountant(): certified lower end from the worst known pair (Chua et "
        "al., ICML 2024), upper end from deterministic batches")


def _same(spec: Any, relation: NeighbouringRelation) -> Any:
    return spec


def _build(p: Dict[str, Any]) -> Shuffled:
    return Shuffled(p["sigma"], int(p["steps"]), p.get("sensitivity", 1.0))


def _format(m: Shuffled) -> str:
    s = f"shuffled sigma={_g(m.sigma)} steps={m.steps}"
    return s + (f" sensitivity={_g(m.sensitivity)}" if m.sensitivity != 1.0 else "")


register(Family(
    name="shuffled", types=(Shuffled,), loss_pair=_refuse,
    numba_source=_refuse, numpy_losses=_refuse, for_relation=_same,
    cli=(CliKind("shuffled", (("sigma",), ("steps",)), ("sensitivity",), ("sigma",),
                 "shuffled sigma=1 steps=100",
                 "DP-SGD epoch with shuffled batches (count = epochs): certified lower end, "
                 "deterministic-batch upper end", _build, aliases=("shuffle",),
                 integers=("steps",)),),
    format=_format,
    relations_note="substitute, or add_remove read as zero-out (batch sizes fixed)"))


# ---- the attained pair, sliced by the max statistic -----------------------------------------
#: slice width in units of sigma^2 (Chua et al.'s ``discretization * sigma^2``, 1e-3)
SLICE = 1e-3
#: most slices of the slice pair (each costs a few float64 arrays' entries)
MAX_SLICES = 1e8
#: mass left in each of the two end slices is about this (they are outcomes, not dropped)
END_MASS = 1e-40
_EPS = float(np.finfo(np.float64).eps)
#: bound on the error of scipy's log_ndtr in ulps of |result|: documented as accurate to a
#: few ulp; 16 leaves room for the product with T - 1 and the sum
_NDTR_ULPS = 16.0


@dataclass(frozen=True)
class ShuffleSlicePair(Mechanism):
    r"""The attained shuffle pair (module docstring) seen through the slice of
    :math:`\max_t X_t`: outcomes :math:`M \le c_0`, :math:`c_{j} < M \le c_{j+1}`,
    :math:`M > c_J`, with :math:`c_{j+1} - c_j` = ``SLICE`` :math:`\sigma^2` (internal:
    the lower end of :class:`Shuffled`).  Means in units of :math:`\sigma`.
    """

    m_p: float
    m_q: float
    steps: int
    sigma: float = 1.0

    def _log_cube(self, c: np.ndarray, m: float) -> np.ndarray:
        from scipy import special
        s = self.sigma
        return special.log_ndtr((c - m) / s) + (self.steps - 1) * special.log_ndtr(c / s)

    def caps(self) -> np.ndarray:
        """The slice edges :math:`c_0 < \\dots < c_J`."""
        from scipy import stats
        t, s = self.steps, self.sigma
        lo = s * float(stats.norm.ppf(math.exp(math.log(END_MASS) / t)))
        top = max(self.m_p, self.m_q) + s * float(stats.norm.isf(-math.expm1(
            math.log1p(-END_MASS) / t)))
        gap = SLICE * s * s
        return lo + gap * np.arange(int(math.ceil((top - lo) / gap)) + 1)

    def law(self) -> FiniteLaw:
        return _slice_law(self)

    def _law(self) -> FiniteLaw:
        c = self.caps()
        sides = []
        worst = 0.0
        for m in (self.m_p, self.m_q):
            a = self._log_cube(c, m)                       # log P[M <= c_j]
            # both terms of a are <= 0 and each is accurate to a few ulp of itself, so a
            # is accurate to a few ulp of |a| (a sum of same-sign terms)
            err = _NDTR_ULPS * _EPS * np.abs(a) + 1e-300
            d = np.diff(a)                                 # > 0
            inner = a[:-1] + np.log(np.expm1(d))           # log P[c_j < M <= c_{j+1}]
            derr = err[:-1] + err[1:]
            slice_err = err[:-1] + derr * (1.0 + 1.0 / np.expm1(d))
            top = math.log(-math.expm1(float(a[-1])))      # log P[M > c_J]
            # d/da log(1 - e^a) = -e^a / (1 - e^a)
            top_err = float(err[-1]) * math.exp(float(a[-1])) / -math.expm1(float(a[-1]))
            sides.append(np.concatenate([[a[0]], inner, [top]]))
            worst = max(worst, float(err[0]), float(slice_err.max()), top_err)
        return finite_law(sides[0], sides[1], log_error=worst)

    def __repr__(self) -> str:
        return (f"ShuffleSlicePair(MoG({self.m_p:g}) vs MoG({self.m_q:g}), T={self.steps}, "
                f"sigma={self.sigma:g})")


@functools.lru_cache(maxsize=32)
def _slice_law(pair: ShuffleSlicePair) -> FiniteLaw:
    return pair._law()


register(Family(name="shuffle_slice_pair", types=(ShuffleSlicePair,), **FINITE_HOOKS,
                for_relation=_same))
