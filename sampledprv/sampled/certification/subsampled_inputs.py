r"""Poisson subsampling of a user-supplied mechanism (:class:`LogDensityPair`,
:class:`PrivacyLossSampler`) for the sampled accountant.

``sp.PoissonSubsampled(pair, q)`` with ``pair`` a user input is resolved (under
add/remove, :func:`sampledprv.mechanisms.substitution.subsampled_for_relation`) to a
:class:`SubsampledUserPair`, a source of the sampled accountant through the hook
protocol of :mod:`sampledprv.sampled.draws.hooks`.

The pair
--------
Let :math:`(P_0, Q_0)` be the user's pair (``P_0`` the output law with the record) and
:math:`\ell = \log p_0/q_0`.  Poisson sampling at rate :math:`q` gives
:math:`P = (1-q)Q_0 + qP_0`, :math:`Q = Q_0`, whose loss is
:math:`g(\ell) = \log(1 - q + q e^{\ell})` (because
:math:`p/q_0 = 1 - q + q\,p_0/q_0`), so

* remove: :math:`g(\ell(w))`, :math:`w \sim (1-q)Q_0 + qP_0`: with probability ``q``
  a draw of :math:`\ell` under :math:`P_0` (the pair's remove loss), else a draw of
  :math:`\ell` under :math:`Q_0` (minus the pair's add loss);
* add: :math:`-g(\ell(w))`, :math:`w \sim Q_0`.

Only the laws of :math:`\ell` under :math:`P_0` and under :math:`Q_0` enter, so a
:class:`PrivacyLossSampler` (remove draws :math:`\ell | P_0`, add draws
:math:`-\ell | Q_0`; without ``sample_add`` the add loss has the remove loss's law)
serves as well as a :class:`LogDensityPair`.  These are the modes ``MODE_SUB_REMOVE``
and ``MODE_SUB_ADD`` of the built-in kernel (:mod:`sampledprv.sampled.draws._mechloss`),
drawn here from the pair's own samplers.

What the interval means.  If :math:`(P_0, Q_0)` dominates the base mechanism in both
directions (the premise of every user pair), then :math:`((1-q)Q_0 + qP_0, Q_0)`
dominates the Poisson-subsampled mechanism in both directions (Zhu, Dong and Wang,
"Optimal accounting of differential privacy via characteristic function", AISTATS 2022,
arXiv 2106.08567, Theorem 11: remove for the remove relation, its mirror for add), and
it is attained by a mechanism the pair dominates (output :math:`P_0` when the record
is in the batch, :math:`Q_0` otherwise).  So the interval brackets the privacy of the
worst subsampled mechanism the user's pair allows.

Fixed-size batches.  ``sp.FixedSizeSubsampled(pair, b, n)`` under substitution, for a
symmetric pair, takes its lower end from the member
:math:`((1-\gamma)Q_0 + \gamma P_0, Q_0)` (a :class:`SubsampledUserPair` at rate
:math:`\gamma = b/n`) and its upper end from the symmetric dominating pair of Dong, Roth
and Su's theorem, whose histogram is spliced from the member's two directions
(:class:`SplicedSymmetricPair`).

Renyi bounds.  The pair's own Renyi bound (``renyi=``) is amplified by
:mod:`sampledprv.rdp.subsampled`; :attr:`SubsampledUserPair.renyi_source` says which
theorem was used per direction.  A tabulated bound missing an integer order ``k`` uses
the next tabulated order above (Renyi divergences are nondecreasing in the order).
The loss ranges follow from :math:`g` being increasing with :math:`g(-\infty) = \log(1-q)`:
the remove loss is at least :math:`\log(1-q)` and the add loss at most :math:`-\log(1-q)`
whatever the pair.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import numpy as np
from numba import njit

from ...mechanisms.base import NeighbouringRelation, as_relation
from ...mechanisms.registry import Family, UnsupportedRelationError, method_hooks, register
from ...mechanisms.subsampled import USER_PAIR_HOOKS
from ...mechanisms.substitution import FixedSizeSubsampled
from ...rdp.subsampled import (integer_order, subsampled_fractional_bound,
                               subsampled_general_bound, subsampled_remove_bound)
from ..draws.rng import uniform_aux
from ..draws.samplers import subsampled_loss
from ..histograms.empirical import EmpiricalPRV
from ..histograms.histogram import LossHistogram, tail_counts
from ..histograms.sharding import HistogramJob
from ..histograms.window import choose_window
from .inputs import LogDensityPair, PrivacyLossSampler
from .tail_inputs import RenyiTable, as_loss_range, as_renyi
from .tail_sources import DEFAULT_ORDERS

__all__ = ["SubsampledUserPair", "is_user_input", "poisson_user_pair"]

Sampler = Callable[[np.random.Generator, int], np.ndarray]


def is_user_input(obj: object) -> bool:
    """True for the user inputs that can be subsampled (:class:`LogDensityPair`,
    :class:`PrivacyLossSampler`)."""
    return isinstance(obj, (LogDensityPair, PrivacyLossSampler))


def _g(l0: np.ndarray, q: float) -> np.ndarray:
    r""":math:`\log(1 - q + q e^{\ell})`, elementwise (``-inf -> log(1-q)``, ``+inf -> +inf``)."""
    log1mq = math.log1p(-q) if q < 1.0 else -math.inf
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return np.logaddexp(log1mq, math.log(q) + l0)


def _base_losses(base: Any) -> tuple[Sampler, Sampler]:
    r"""Samplers of :math:`\ell` under :math:`P_0` and under :math:`Q_0` (numpy path)."""
    rem = base.numpy_loss_sampler("remove")
    if getattr(base, "symmetric", False):
        # the add loss -l | Q0 has the law of the remove loss l | P0
        return rem, (lambda r, n: -rem(r, n))
    add = base.numpy_loss_sampler("add")
    return rem, (lambda r, n: -add(r, n))


#: largest Renyi order amplified (beyond it the bound is inf: only tightness is lost,
#: and subsampled bounds at such orders are far above what the tail needs)
MAX_ORDER = 4096


class _Table:
    """A base Renyi table with O(1) look-up of the bound at an order or the next
    tabulated order above it (Renyi divergences are nondecreasing in the order)."""

    def __init__(self, table: dict) -> None:
        self.orders = np.array(sorted(table), dtype=np.float64)
        self.values = np.array([table[o] for o in self.orders.tolist()], dtype=np.float64)
        # the bound at order o is min over tabulated orders >= o (a suffix minimum)
        self.suffix = np.minimum.accumulate(self.values[::-1])[::-1] if self.values.size \
            else self.values
        ints = np.arange(MAX_ORDER + 1, dtype=np.float64)
        self.at_int = np.array([self(o) for o in ints]) if self.values.size else \
            np.full(ints.size, math.inf)

    def __call__(self, order: float) -> float:
        i = int(np.searchsorted(self.orders, float(order) - 1e-12, side="left"))
        return float(self.suffix[i]) if i < self.suffix.size else math.inf

    def integer(self, k: int) -> float:
        return float(self.at_int[k]) if k <= MAX_ORDER else math.inf


@dataclass(frozen=True, eq=False)
class SubsampledUserPair:
    r"""The Poisson-subsampled pair of a user input (module docstring): a privacy-loss
    source of the sampled accountant.

    Attributes
    ----------
    base : LogDensityPair or PrivacyLossSampler
        The user's pair :math:`(P_0, Q_0)`.
    q : float
        Poisson sampling rate in ``(0, 1]``.
    """

    base: Any
    q: float
    symmetric: bool = False
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def name(self) -> str:
        return f"PoissonSubsampled({getattr(self.base, 'name', repr(self.base))}, q={self.q!r})"

    def __repr__(self) -> str:
        return self.name

    # ---- sampling (hooks of sampledprv.sampled.draws.hooks) ---------------------------------
    def numpy_loss_sampler(self, direction: str) -> Sampler:
        """``f(rng, size)`` of the subsampled loss in ``direction`` (module docstring)."""
        q = self.q
        under_p0, under_q0 = _base_losses(self.base)
        if str(direction) == "remove":
            def remove(r: np.random.Generator, n: int) -> np.ndarray:
                pick = r.random(n) < q
                k = int(pick.sum())
                l0 = np.empty(n)
                if k:
                    l0[pick] = under_p0(r, k)
                if n - k:
                    l0[~pick] = under_q0(r, n - k)
                return _g(l0, q)
            return remove
        return lambda r, n: -_g(under_q0(r, n), q)

    def loss_sampler(self, direction: str) -> Any:
        """Kernel source (:mod:`sampledprv.sampled.draws.hooks`): a fused jitted
        ``fill(state, out)`` when the pair is in kernel form (``kernel=True``), else the
        numpy sampler."""
        if not getattr(self.base, "kernel", False):
            return self.numpy_loss_sampler(direction)
        key = "fill-" + str(direction)
        if key not in self._cache:
            self._cache[key] = _subsampled_fill(self.base, self.q, str(direction) == "remove")
        return self._cache[key]

    def check(self, rng: Optional[np.random.Generator] = None, n: int = 4096) -> dict:
        """The base pair's checks (:meth:`LogDensityPair.check`)."""
        return self.base.check(rng, n)

    # ---- tail information (read by sampled.certification.tail_sources) -----------------------
    @property
    def loss_range(self) -> tuple:
        """Per-direction ranges: the base's ranges pushed through :math:`g`, and always
        ``remove >= log(1-q)``, ``add <= -log(1-q)``."""
        if "range" not in self._cache:
            lr = as_loss_range(getattr(self.base, "loss_range", None))
            (lo_r, hi_r), (lo_a, hi_a) = lr if lr is not None else \
                ((-math.inf, math.inf), (-math.inf, math.inf))
            if getattr(self.base, "symmetric", False) and lr is not None:
                lo_a, hi_a = max(lo_a, lo_r), min(hi_a, hi_r)
                lo_r, hi_r = lo_a, hi_a
            lo_l = min(lo_r, -hi_a)          # l over the mixture's support
            hi_l = max(hi_r, -lo_a)
            q = self.q
            g = lambda x: float(_g(np.array([x]), q)[0])  # noqa: E731
            rem = (g(lo_l), g(hi_l))
            add = (-g(-lo_a), -g(-hi_a))     # l | Q0 lies in [-hi_a, -lo_a]
            if not rem[0] < rem[1]:
                rem = (rem[0], rem[0] + 1e-12)
            if not add[0] < add[1]:
                add = (add[1] - 1e-12, add[1])
            self._cache["range"] = (rem, add)
        return self._cache["range"]

    @property
    def loss_range_source(self) -> str:
        """Where :attr:`loss_range` comes from, in words (for ``Interval.method``)."""
        return ("loss range of the subsampled loss log(1 - q + q e^L) (remove >= log(1-q), "
                "add <= -log(1-q); the pair's declared range pushed through it)")

    def _base_table(self, direction: str) -> Optional[_Table]:
        """The base's bound in ``direction`` as a :class:`_Table` (None: no bound at all).

        A callable is evaluated at the integer orders 2..64 and at the default orders
        (:data:`~.tail_sources.DEFAULT_ORDERS`) up to :data:`MAX_ORDER`; a symmetric pair's
        bounds of either direction bound both."""
        key = "table-" + direction
        if key in self._cache:
            return self._cache[key]
        r = as_renyi(getattr(self.base, "renyi", None))
        if r is None:
            self._cache[key] = None
            return None
        sym = bool(getattr(self.base, "symmetric", False))
        dirs = ("remove", "add") if sym else (direction,)
        if isinstance(r, RenyiTable):
            orders = np.unique(np.concatenate([r.orders(d) for d in dirs]))
        else:
            orders = np.union1d(np.arange(2.0, 65.0), DEFAULT_ORDERS[DEFAULT_ORDERS <= MAX_ORDER])
        out: dict = {}
        for o in orders.tolist():
            vals = []
            for d in dirs:
                try:
                    vals.append(float(r(float(o), d)))
                except (OverflowError, ValueError):
                    vals.append(math.inf)
            v = min(vals)
            if math.isfinite(v):
                out[float(o)] = max(v, 0.0)
        self._cache[key] = _Table(out)
        return self._cache[key]

    def _amplified(self, order: float, direction: str) -> float:
        r"""Upper bound on the order-``order`` Renyi divergence of the subsampled pair in
        ``direction`` (:attr:`renyi_source` names the theorems)."""
        order = float(order)
        if not order > 1.0 or order > MAX_ORDER:
            return math.inf
        rem = self._base_table("remove")
        if rem is None:
            return math.inf
        q = self.q
        if direction == "remove" or getattr(self.base, "symmetric", False):
            # remove: binomial expansion (exact for a fixed base pair); symmetric base: the
            # add direction is at most the remove direction (sampledprv.rdp.subsampled)
            if order < 2.0:
                base = rem(order)
                return subsampled_fractional_bound(order, q, base) if math.isfinite(base) \
                    else math.inf
            return subsampled_remove_bound(integer_order(order), q, rem.integer)
        add = self._base_table("add")
        if add is None:
            return math.inf
        both = lambda k: max(rem.integer(k), add.integer(k))  # noqa: E731
        return subsampled_general_bound(integer_order(order), q, both)

    @property
    def renyi(self) -> Optional[Callable[[float, str], float]]:
        """The amplified Renyi bound ``renyi(order, direction)`` (None when the base has
        none)."""
        if as_renyi(getattr(self.base, "renyi", None)) is None:
            return None
        return self._amplified

    @property
    def renyi_source(self) -> str:
        """Which theorem amplified the pair's Renyi bound, in words (for ``Interval.method``)."""
        rem = ("remove: binomial expansion of the Poisson mixture (Mironov, Talwar and Zhang "
               "2019, arXiv 1908.10530, Sec. 3.3; Zhu and Wang 2019, arXiv 1808.00087, Thm 5) "
               "at integer orders, the fractional bound of sampledprv.rdp.subsampled below 2")
        if getattr(self.base, "symmetric", False):
            add = ("add: at most the remove direction for a symmetric pair "
                   "(sampledprv.rdp.subsampled, extending Mironov, Talwar and Zhang 2019, Thm 5)")
        else:
            add = "add: Zhu and Wang 2019, Thm 6 (general upper bound, both directions of the pair)"
        return f"Renyi bound of the user's pair amplified by Poisson subsampling ({rem}; {add})"


def poisson_user_pair(base: Any, q: float) -> SubsampledUserPair:
    """The :class:`SubsampledUserPair` of ``PoissonSubsampled(base, q)``."""
    return SubsampledUserPair(base, float(q))


class SampledOnlyError(ValueError, TypeError):
    """A subsampled user pair asked for an analytic law (it has none).  A
    :class:`ValueError` for callers, a :class:`TypeError` for the code paths that treat
    "no analytic law" as "sample it" (window choice, Renyi orders)."""


def _refuse_analytic(pair: SubsampledUserPair) -> Any:
    raise SampledOnlyError(
        f"{pair!r} has no analytic privacy-loss law: the analytic Accountant accounts the "
        "built-in specs only, and a LogDensityPair or PrivacyLossSampler is known only "
        "through its samples. Account it with sp.SampledAccountant(n_samples=...), which "
        "draws the subsampled loss log(1 - q + q e^L) from the pair's own samplers")


def _unsupported(spec: Any, relation: Any, why: str) -> Exception:
    return UnsupportedRelationError(
        f"{type(spec).__name__} of a {type(spec.mechanism).__name__} cannot certify the "
        f"neighbouring relation {getattr(relation, 'value', relation)!r}: {why}")


def user_for_relation(spec: Any, relation: Any) -> Any:
    """The source of a subsampled user pair under ``relation`` (called by
    :func:`sampledprv.mechanisms.substitution.subsampled_for_relation`)."""
    rel = as_relation(relation)
    if isinstance(spec, FixedSizeSubsampled):
        if rel is NeighbouringRelation.ADD_REMOVE:
            raise _unsupported(spec, rel, "a fixed batch size is defined for datasets of one "
                               "size; account it with neighbouring='substitute', or use "
                               "PoissonSubsampled under add/remove")
        # the attained member ((1-gamma) Q0 + gamma P0, Q0): the lower end
        return poisson_user_pair(spec.mechanism, spec.gamma)
    if rel is NeighbouringRelation.SUBSTITUTE:
        raise _unsupported(spec, rel, "under substitution the Poisson pair mixes the law of "
                           "the batch without the record with those of the two records, "
                           "which the pair (P0, Q0) does not give; use neighbouring="
                           "'add_remove' (give the pair of the record added or removed), or "
                           "FixedSizeSubsampled under substitution")
    return poisson_user_pair(spec.mechanism, spec.q)


def fixed_size_user_bounds(spec: Any, relation: Any) -> tuple:
    """``(upper, lower)`` sources of a fixed-size batch of a user pair under substitution:
    the :class:`SplicedSymmetricPair` of the member, and the member (module docstring of
    :mod:`sampledprv.mechanisms.substitution`, and *Fixed-size batches of a user pair* in
    the design notes)."""
    member = user_for_relation(spec, relation)
    if not getattr(spec.mechanism, "symmetric", False):
        raise _unsupported(spec, relation, "sampling without replacement of a user pair is "
                           "certified for symmetric pairs only (LogDensityPair(symmetric="
                           "True), or a PrivacyLossSampler without sample_add): the upper "
                           "end is Dong, Roth and Su's C_gamma(f) with f = T(P0, Q0), whose "
                           "dominating pair is known when the pair is symmetric")
    return SplicedSymmetricPair(member), member


@dataclass(frozen=True, eq=False)
class SplicedEmpiricalPRV(EmpiricalPRV):
    """An :class:`EmpiricalPRV` of the symmetric dominating pair spliced from a member's
    two histograms (:meth:`SplicedSymmetricPair.empirical`), with its Renyi bound."""

    renyi: Any = None
    renyi_source: str = ""


@dataclass(frozen=True, eq=False)
class SplicedSymmetricPair:
    r"""The symmetric dominating pair :math:`S` of a fixed-size batch of a symmetric user
    pair under substitution, known through the member
    :math:`(P^*, Q^*) = ((1-\gamma)Q_0 + \gamma P_0, Q_0)`.

    Dong, Roth and Su (2022, "Gaussian differential privacy", JRSS-B, arXiv 1905.02383,
    Theorem 4.2) make the batch :math:`C_\gamma(f)`-DP for :math:`f = T(P_0, Q_0)`; the
    profile of :math:`C_\gamma(f)` is that of :math:`S`, whose loss has the law of the
    member's remove loss :math:`R` on :math:`(0, \infty)`, of the member's add loss
    :math:`A` on :math:`(-\infty, 0)` and an atom at 0 (the remove direction of the member
    is the larger for :math:`\alpha \ge 1` because the pair is symmetric: the perspective
    argument of the design notes uses only the symmetry of the base profile).  Hence
    :math:`P[S \ge t] = P[A \ge t]` for :math:`t \le 0` and :math:`P[R \ge t]` for
    :math:`t > 0`: the tail counts of :math:`S` at the edges :math:`t_j \le 0` are those of
    an ``n``-draw histogram of :math:`A`, at :math:`t_j > 0` those of one of :math:`R`, each
    binomial with the right rate, and the envelope's Clopper-Pearson tests are marginal
    (union bound), so the spliced histogram certifies the upper end without the masses
    :math:`P^*(\ell > 0)`, :math:`Q^*(\ell > 0)` that a sampler of :math:`S` would need.
    Where the spliced counts are not monotone they are raised (valid for the upper end,
    the only end taken from :math:`S`).
    """

    member: SubsampledUserPair
    symmetric = True

    @property
    def name(self) -> str:
        return f"symmetric dominating pair of the fixed-size {self.member!r}"

    def __repr__(self) -> str:
        return self.name

    def check(self, rng: Optional[np.random.Generator] = None, n: int = 4096) -> dict:
        return self.member.check(rng, n)

    def renyi(self, order: float, direction: str) -> float:
        r""":math:`D_a(S) \le \log(e^{(a-1) D_a(P^*\|Q^*)} + 1)/(a-1)` (the loss of
        :math:`S` is the member's remove loss on :math:`\{\ell > 0\}` and at most 0
        elsewhere)."""
        d = self.member._amplified(float(order), "remove")
        if not math.isfinite(d):
            return math.inf
        a1 = float(order) - 1.0
        return float(np.logaddexp(a1 * d, 0.0)) / a1 * (1.0 + 1e-12)

    def empirical(self, bank: Any, index: int) -> SplicedEmpiricalPRV:
        """Sample the member's two histograms on one window with the settings of ``bank``
        (the :class:`~.histogram_bank.HistogramBank` of an inner accountant of a
        bracketed composition) and splice them."""
        n, bins = min(bank.n_for("remove"), bank.n_for("add")), bank.bins_now()
        root = np.random.SeedSequence([int(bank.seed_value), 0x5B1CE, int(index)])
        seeds = root.spawn(4)
        wins = [choose_window(self.member, d, n, bins, np.random.default_rng(seeds[i]))
                for i, d in enumerate(("add", "remove"))]
        lo = min(wins[0][0], 0.0)
        hi = max(wins[1][0] + wins[1][1] * wins[1][2], wins[0][1])
        h = 2.0 ** math.ceil(math.log2((hi - lo) / (bins - 2)))
        lo = math.floor(lo / h) * h
        nb = int(math.ceil((hi - lo) / h)) + 1
        jobs = [HistogramJob(self.member, d, n, lo, h, nb, seeds[2 + i],
                             shard_size=bank.shard_size,
                             label=f"spliced{index}-{d}", backend=bank.backend,
                             device=bank.device)
                for i, d in enumerate(("add", "remove"))]
        h_add, h_rem = bank.run(jobs)
        edges = lo + h * np.arange(nb + 1)
        t = np.where(edges <= 0.0, tail_counts(h_add), tail_counts(h_rem))
        t = np.maximum.accumulate(t[::-1])[::-1]           # nonincreasing, raised only
        pos = int(h_rem.pos_inf)
        above = int(t[-1]) - pos
        counts = (t[:-1] - t[1:]).astype(np.int64)
        neg = int(h_add.neg_inf)
        below = max(int(n - t[0]) - neg, 0)
        total = int(counts.sum()) + below + above + pos + neg
        hist = LossHistogram(counts, below, above, pos, neg, total, float(lo), float(h))
        return SplicedEmpiricalPRV(hist, None, self.name, renyi=self.renyi,
                                   renyi_source=self.renyi_source)

    @property
    def renyi_source(self) -> str:
        return ("Renyi bound of the symmetric dominating pair, log(e^{(a-1) D_a} + 1)/(a-1) "
                "from the member's " + self.member.renyi_source)


def _subsampled_fill(base: Any, q: float, remove: bool) -> Callable:
    r"""A jitted ``fill(state, out)`` of the subsampled loss of a kernel-form pair: remove
    draws ``w`` from ``P0`` with probability ``q`` (else ``Q0``) and writes
    :math:`g(\ell(w))`; add draws ``w`` from ``Q0`` and writes :math:`-g(\ell(w))`.  For a
    :class:`PrivacyLossSampler` the pair's fills give :math:`\ell` under ``P0`` and
    :math:`-\ell` under ``Q0`` block by block."""
    if isinstance(base, LogDensityPair):
        sample_p, sample_q, logp, logq = base.sample_p, base.sample_q, base.logp, base.logq

        @njit
        def fill(state, out):  # pragma: no cover - numba
            for i in range(out.shape[0]):
                if remove and uniform_aux(state) < q:
                    w = sample_p(state)
                else:
                    w = sample_q(state)
                y = subsampled_loss(logp(w) - logq(w), q)
                out[i] = y if remove else -y
        return fill
    fill_rem = base.sample_remove
    fill_add = base.sample_add if base.sample_add is not None else base.sample_remove

    @njit
    def fill_pls(state, out):  # pragma: no cover - numba
        n = out.shape[0]
        under_q = np.empty(n)
        fill_add(state, under_q)          # -l under Q0 (or l under P0 when symmetric)
        under_p = np.empty(n)
        if remove:
            fill_rem(state, under_p)      # l under P0
        for i in range(n):
            if remove and uniform_aux(state) < q:
                l0 = under_p[i]
            else:
                l0 = -under_q[i]
            y = subsampled_loss(l0, q)
            out[i] = y if remove else -y
    return fill_pls


def _register() -> None:
    register(Family(name="subsampled_user_pair", types=(SubsampledUserPair,),
                    loss_pair=_refuse_analytic, numpy_losses=_refuse_analytic,
                    relations_note="sampled accountant only",
                    **method_hooks("loss_sampler", "numpy_loss_sampler")))
    # no sampler of its own: the accountant splices its two histograms (``empirical``)
    register(Family(name="spliced_symmetric_pair", types=(SplicedSymmetricPair,),
                    loss_pair=_refuse_analytic, numpy_losses=_refuse_analytic,
                    relations_note="sampled accountant only"))


_register()


USER_PAIR_HOOKS.update(for_relation=user_for_relation, fixed_size_bounds=fixed_size_user_bounds)
