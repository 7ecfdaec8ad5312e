"""Checks and reports built on the accountants: :func:`check_claim` (does a mechanism
have the privacy a library states?) and :func:`user_level` (epsilon per user when users
hold different numbers of records)."""

from ..analytic import Accountant
from ..mechanisms.group import Group
from .check import ClaimPoint, ClaimResult, check_claim
from .users import GroupEpsilon, UserLevelReport, group_epsilon, user_level

__all__ = ["Accountant", "Group", "ClaimPoint", "ClaimResult", "check_claim", "UserLevelReport", "user_level",
           "GroupEpsilon", "group_epsilon"]
