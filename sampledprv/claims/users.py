r"""User-level privacy: users holding different numbers of records.

:func:`group_epsilon` bounds the epsilon of a group of ``g`` records for *any* composition
from its certified record-level curve (group privacy of approximate DP).

:func:`user_level` accounts, for each record count ``k`` present, the group of ``k``
records (:class:`sampledprv.Group`, exact for additive noise and Poisson-subsampled
Gaussian steps) composed over the runs, and reports the certified epsilon of each kind
of user and the worst case.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Dict, Mapping, Optional

from ..core import validation as v
from ..mechanisms.base import Mechanism
from ..mechanisms.group import Group

from ..analytic import Accountant

__all__ = ["UserLevelReport", "user_level", "GroupEpsilon", "group_epsilon"]


@dataclass(frozen=True)
class UserLevelReport:
    """Per record count ``k``: the certified epsilon of a user holding ``k`` records
    (``intervals[k]``), the share of users with ``k`` records (``users[k]``), the
    worst case over the users present, and how each group was bounded."""

    delta: float
    count: int
    intervals: Mapping[int, Any]
    users: Mapping[int, float]
    methods: Mapping[int, str]

    @property
    def worst_case(self) -> Any:
        """The interval of the largest record count present (epsilon grows with it)."""
        return self.intervals[max(self.intervals)]

    def __str__(self) -> str:
        lines = [f"user-level epsilon at delta={self.delta:g} after {self.count} runs:"]
        for k in sorted(self.intervals):
            iv = self.intervals[k]
            lines.append(f"  {k:>4} records ({self.users[k]:.3g} of users): epsilon in "
                         f"[{iv.lower:.5g}, {iv.upper:.5g}]  ({self.methods[k]})")
        return "\n".join(lines)


def user_level(mechanism: Mechanism, count: int, records_per_user: Any, delta: float,
               accountant: Optional[Any] = None) -> UserLevelReport:
    r"""Certified user-level epsilon when users hold different numbers of records.

    Parameters
    ----------
    mechanism : Mechanism
        One run (e.g. one DP-SGD step), record-level.
    count : int
        Runs composed.
    records_per_user : mapping or sequence
        ``{k: number (or share) of users with k records}``, or one record count per user.
    delta : float
        The delta of the reported epsilons.
    accountant : callable, optional
        ``accountant()`` returns a fresh accountant (default ``sp.Accountant()``).

    Returns
    -------
    UserLevelReport
        One interval per distinct record count (the group of that size composed
        ``count`` times) and the worst case.
    """
    count = v.positive_int("count", count)
    delta = v.in_interval("delta", delta, 0.0, 1.0, low_open=True, high_open=True)
    if isinstance(records_per_user, Mapping):
        raw = {v.positive_int("records_per_user key", k): float(n)
               for k, n in records_per_user.items()}
    else:
        raw: Dict[int, float] = {}
        for k in records_per_user:
            k = v.positive_int("records_per_user entry", k)
            raw[k] = raw.get(k, 0.0) + 1.0
    raw = {k: n for k, n in raw.items() if n > 0}
    if not raw:
        raise ValueError("records_per_user is empty: give {records: users} or one count "
                         "per user")
    total = math.fsum(raw.values())
    if accountant is None:
        accountant = Accountant
    intervals, methods = {}, {}
    for k in sorted(raw):
        grp = Group(mechanism, k)
        intervals[k] = accountant().compose(grp.spec, count).epsilon(delta)
        methods[k] = grp.method
    return UserLevelReport(delta, count, intervals, {k: n / total for k, n in raw.items()},
                           methods)


@dataclass(frozen=True)
class GroupEpsilon:
    """Certified upper bound on a group's epsilon from the record-level curve.

    ``epsilon = size * eps_record`` where the record-level curve certifies
    ``delta(eps_record) * sum_{i<size} e^{i eps_record} <= delta``."""

    epsilon: float
    eps_record: float
    delta_record: float
    size: int
    delta: float
    method: str = ("group privacy of approximate DP applied to the certified composed "
                   "curve: (eps, d)-DP for a record gives (g eps, d sum_{i<g} e^{i eps}) "
                   "for g records")


def group_epsilon(accountant: Any, size: int, delta: float,
                  max_iter: int = 60) -> GroupEpsilon:
    r"""Certified group epsilon of any composition (group privacy of its curve).

    If the composition is :math:`(\varepsilon, \delta(\varepsilon))`-DP for one record
    (the accountant's certified upper curve), a chain of ``g`` neighbours gives
    :math:`(g\varepsilon, \delta(\varepsilon)\sum_{i<g} e^{i\varepsilon})` for ``g``
    records.  The smallest :math:`\varepsilon` with
    :math:`\delta_{up}(\varepsilon) \sum_{i<g} e^{i\varepsilon} \le \delta` is found by
    the increasing fixed-point iteration
    :math:`\varepsilon_{j+1} = \varepsilon_{up}(\delta / S(\varepsilon_j))` and checked
    at the end against the certified ``delta`` query.  A bound, usually loose (exact
    group pairs: :class:`sampledprv.Group`).

    Parameters
    ----------
    accountant : PrivacyAccountant
        The record-level composition (any accountant with ``epsilon`` and ``delta``).
    size : int
        Records in the group.
    delta : float
        Target delta of the group.
    """
    size = v.positive_int("size", size)
    delta = v.in_interval("delta", delta, 0.0, 1.0, low_open=True, high_open=True)

    def s(eps: float) -> float:
        return math.fsum(math.exp(i * eps) for i in range(size))

    eps = float(accountant.epsilon(delta / size).upper)
    for _ in range(max_iter):
        if not math.isfinite(eps):
            break
        d_up = float(accountant.delta(eps).upper)
        if d_up * s(eps) <= delta:
            return GroupEpsilon(size * eps, eps, d_up, size, delta)
        nxt = float(accountant.epsilon(delta / s(eps)).upper)
        eps = max(nxt, eps * (1 + 1e-9) + 1e-12)
    raise ValueError(f"no certified group epsilon for size={size} at delta={delta:g}: the "
                     "record-level curve cannot pay the factor sum_i e^(i eps); use a larger "
                     "delta, a smaller group, or the exact group pair (sp.Group)")
