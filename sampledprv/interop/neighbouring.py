"""The ``neighbouring`` argument of :func:`sampledprv.from_dp_event`: dp-accounting's
``NeighboringRelation`` (or its names) -> :class:`sampledprv.NeighbouringRelation`.

``ADD_OR_REMOVE_ONE`` is add/remove, ``REPLACE_ONE`` is substitution (a sum moves by up
to twice the per-record bound), and ``REPLACE_SPECIAL`` is accounted as add/remove (the
reasons are in :mod:`sampledprv.interop.reader`, "Sensitivity convention").
"""

from __future__ import annotations

from ..mechanisms import NeighbouringRelation
from ..mechanisms.base import as_relation

_DPA_RELATIONS = {"ADD_OR_REMOVE_ONE": NeighbouringRelation.ADD_REMOVE,
                  "REPLACE_ONE": NeighbouringRelation.SUBSTITUTE,
                  "REPLACE_SPECIAL": NeighbouringRelation.ADD_REMOVE}


def _relation(value: object) -> NeighbouringRelation:
    """Our relation from ours, its strings, or dp-accounting's ``NeighboringRelation``."""
    name = getattr(value, "name", None)
    if type(value).__name__ == "NeighboringRelation" and name in _DPA_RELATIONS:
        return _DPA_RELATIONS[name]
    if isinstance(value, str) and value.strip().upper() in _DPA_RELATIONS:
        return _DPA_RELATIONS[value.strip().upper()]
    try:
        return as_relation(value)
    except ValueError:
        raise ValueError(
            "neighbouring must be 'add_remove', 'replace_one' (= 'substitute'), "
            "'replace_special' (accounted as add/remove), a sampledprv.NeighbouringRelation "
            f"or a dp_accounting.NeighboringRelation, got {value!r}") from None
