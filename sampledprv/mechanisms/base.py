r"""The base class of mechanism specs, and the two enums every accountant speaks.

* :class:`Direction`: which of the two hockey-stick divergences of a neighbouring pair
  ``(P, Q)`` is meant.  ``REMOVE`` is :math:`D_{e^\varepsilon}(P \| Q)` (the privacy loss
  :math:`\log p/q` under ``P``), ``ADD`` is :math:`D_{e^\varepsilon}(Q \| P)` (the loss
  :math:`\log q/p` under ``Q``).  Under add/remove neighbours ``P`` is the output law on the
  dataset *with* the record.
* :class:`NeighbouringRelation`: ``ADD_REMOVE`` (one record added or removed) or
  ``SUBSTITUTE`` (one record replaced by another).

Both enums subclass :class:`str`, so ``Direction.REMOVE == "remove"``; the validators
:func:`as_direction` and :func:`as_relation` accept the enum or its string value and are
the only place these strings are checked.
"""

from __future__ import annotations

import enum
from dataclasses import replace

__all__ = ["Mechanism", "Direction", "NeighbouringRelation", "as_direction", "as_relation",
           "doubled_under_substitution",
           "DIRECTIONS"]


class Direction(str, enum.Enum):
    """Direction of a privacy loss (see the module docstring)."""

    REMOVE = "remove"
    ADD = "add"

    def __str__(self) -> str:
        return self.value


class NeighbouringRelation(str, enum.Enum):
    """Neighbouring relation between datasets.

    ``ADD_REMOVE``: the datasets differ by one record added or removed.
    ``SUBSTITUTE``: the datasets have the same size and differ in one record.
    A spec's ``sensitivity`` is always the per-record (add/remove) bound, so under
    ``SUBSTITUTE`` a sum query can move by twice it (the convention of dp-accounting and
    Opacus).
    """

    ADD_REMOVE = "add_remove"
    SUBSTITUTE = "substitute"

    def __str__(self) -> str:
        return self.value


#: both directions, in the order the accountants report them
DIRECTIONS: tuple[Direction, Direction] = (Direction.REMOVE, Direction.ADD)

_RELATION_ALIASES = {"add_remove": "add_remove", "add-remove": "add_remove",
                     "addremove": "add_remove", "substitute": "substitute",
                     "substitution": "substitute", "replace_one": "substitute",
                     "replace-one": "substitute", "replace": "substitute"}


def as_direction(value: object, name: str = "direction") -> Direction:
    """``value`` as a :class:`Direction`; accepts the enum or ``"remove"`` / ``"add"``.

    Raises
    ------
    ValueError
        Naming ``name`` and the accepted values.
    """
    if isinstance(value, Direction):
        return value
    if isinstance(value, str):
        try:
            return Direction(value.strip().lower())
        except ValueError:
            pass
    raise ValueError(f"{name} must be 'remove' or 'add' (or sampledprv.Direction.REMOVE / "
                     f".ADD), got {value!r}")


def as_relation(value: object, name: str = "neighbouring") -> NeighbouringRelation:
    """``value`` as a :class:`NeighbouringRelation`; accepts the enum, ``"add_remove"`` or
    ``"substitute"`` (also ``"replace_one"``, dp-accounting's name).

    Raises
    ------
    ValueError
        Naming ``name`` and the accepted values.
    """
    if isinstance(value, NeighbouringRelation):
        return value
    if isinstance(value, str):
        key = _RELATION_ALIASES.get(value.strip().lower())
        if key is not None:
            return NeighbouringRelation(key)
    raise ValueError(f"{name} must be 'add_remove' or 'substitute' (or "
                     f"sampledprv.NeighbouringRelation), got {value!r}")


class Mechanism:
    """Base class of all mechanism specs (frozen dataclasses).

    A spec says *what* ran, never how to account it; the accountants find how through
    :mod:`sampledprv.mechanisms.registry`, which each spec's module fills.
    """

    #: True when the privacy loss has the same law in both directions, so that
    #: accountants may compute one direction only.
    symmetric: bool = False


def doubled_under_substitution(spec, relation: NeighbouringRelation):
    """``for_relation`` of an additive-noise family: ``sensitivity`` is the per-record
    (add/remove) bound, so under substitution a sum moves by twice it."""
    if relation is NeighbouringRelation.SUBSTITUTE:
        return replace(spec, sensitivity=2 * spec.sensitivity)
    return spec
