r"""User-level privacy: users holding different numbers of records.

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

__all__ = ["UserLevelReport", "user_level"]


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
