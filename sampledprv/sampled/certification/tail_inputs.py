r"""Renyi bounds and loss ranges as users supply them: validation and normal form.

A Renyi bound is a callable ``renyi(order, direction) -> float`` or a table
``{order: value}`` (both directions) or ``{"remove": {...}, "add": {...}}``
(:class:`RenyiTable`, hashable); a loss range is ``(lo, hi)`` or
``{"remove": (lo, hi), "add": (lo, hi)}``.  :func:`as_renyi` and :func:`as_loss_range`
check them and raise :class:`ValueError` naming the entry at fault.  What they mean is
in :mod:`.tails`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Real
from typing import Any, Callable, Mapping, Optional, Union

import numpy as np

__all__ = ["RenyiTable", "RenyiInput", "as_renyi", "as_loss_range", "as_order",
           "as_divergence", "DIRECTIONS"]

DIRECTIONS = ("remove", "add")

RenyiInput = Union[Callable[[float, str], float], Mapping[Any, Any], "RenyiTable"]



def as_order(x: Any, where: str) -> float:
    try:
        lam = float(x)
    except (TypeError, ValueError):
        raise ValueError(f"{where}: Renyi order {x!r} is not a number; use orders > 1 "
                         "such as 2, 4, 8") from None
    if not (lam > 1.0 and math.isfinite(lam)):
        raise ValueError(f"{where}: Renyi order {x!r} must be a finite number > 1 (orders "
                         "<= 1 give no tail bound); drop it from the table")
    return lam


def as_divergence(x: Any, where: str) -> float:
    if isinstance(x, bool) or not isinstance(x, (Real, str)):
        raise ValueError(f"{where}: Renyi divergence {x!r} must be a number >= 0 (or inf)")
    try:
        d = float(x)
    except ValueError:
        raise ValueError(f"{where}: Renyi divergence {x!r} is not a number") from None
    if math.isnan(d) or d < 0:
        raise ValueError(f"{where}: Renyi divergence {x!r} must be >= 0 (a divergence is "
                         "never negative) or inf where no bound is known")
    return d


@dataclass(frozen=True)
class RenyiTable:
    r"""Upper bounds on Renyi divergences at finitely many orders, per direction.

    Attributes
    ----------
    remove, add : tuple of (order, value)
        :math:`\bar D_\lambda(P\|Q)` ("remove") and :math:`\bar D_\lambda(Q\|P)` ("add"),
        orders ``> 1`` in increasing order (nats).
    """

    remove: tuple[tuple[float, float], ...]
    add: tuple[tuple[float, float], ...]

    @classmethod
    def from_mapping(cls, table: Mapping[Any, Any]) -> "RenyiTable":
        """``{order: value}`` (both directions) or ``{"remove": {...}, "add": {...}}``.

        Orders may be strings (TOML/JSON keys), ``"inf"`` values are allowed."""
        if not isinstance(table, Mapping) or not table:
            raise ValueError(f"renyi table must be a non-empty mapping {{order: divergence}} "
                             f"or {{'remove': {{...}}, 'add': {{...}}}}, got {table!r}")
        keys = set(table)
        if keys & set(DIRECTIONS):
            if not keys <= set(DIRECTIONS):
                raise ValueError(f"renyi table mixes directions and orders ({sorted(map(str, keys))}); "
                                 "give either {order: value} for both directions or "
                                 "{'remove': {order: value}, 'add': {order: value}}")
            parts = {d: table.get(d, {}) for d in DIRECTIONS}
        else:
            parts = {d: table for d in DIRECTIONS}
        out = {}
        for d, tab in parts.items():
            if not isinstance(tab, Mapping):
                raise ValueError(f"renyi[{d!r}] must be a mapping {{order: divergence}}, "
                                 f"got {tab!r}")
            rows = {}
            for k, v in tab.items():
                lam = as_order(k, f"renyi[{d!r}]")
                rows[lam] = as_divergence(v, f"renyi[{d!r}][{k!r}]")
            out[d] = tuple(sorted(rows.items()))
        return cls(out["remove"], out["add"])

    def __call__(self, order: float, direction: str) -> float:
        """The tabulated bound (``inf`` for orders not in the table)."""
        return dict(getattr(self, direction)).get(float(order), math.inf)

    def orders(self, direction: str) -> np.ndarray:
        return np.array([o for o, _ in getattr(self, direction)], dtype=np.float64)


def as_renyi(renyi: Optional[RenyiInput]) -> Optional[Union[Callable, RenyiTable]]:
    """Validate a ``renyi=`` argument: ``None``, a callable or a table (-> RenyiTable)."""
    if renyi is None or isinstance(renyi, RenyiTable):
        return renyi
    if isinstance(renyi, Mapping):
        return RenyiTable.from_mapping(renyi)
    if callable(renyi):
        return renyi
    raise ValueError(f"renyi must be a callable renyi(order, direction) -> float, a table "
                     f"{{order: divergence}} or None, got {renyi!r}")


def as_loss_range(loss_range: Any) -> Optional[tuple]:
    """Validate ``loss_range``: ``None``, ``(lo, hi)`` or ``{"remove": (lo, hi), "add": ...}``.

    Returns ``None`` or ``((lo, hi) for remove, (lo, hi) for add)``."""
    if loss_range is None:
        return None

    def pair(x: Any, where: str) -> tuple[float, float]:
        try:
            lo, hi = (float(v) for v in x)
        except (TypeError, ValueError):
            raise ValueError(f"{where} must be a pair (lo, hi) of numbers with lo < hi, got "
                             f"{x!r}") from None
        if math.isnan(lo) or math.isnan(hi) or not lo < hi or lo == math.inf \
                or hi == -math.inf:
            raise ValueError(f"{where} must be a pair (lo, hi) with lo < hi, got {x!r}")
        return lo, hi
    if isinstance(loss_range, tuple) and len(loss_range) == 2 and \
            all(isinstance(x, tuple) for x in loss_range):      # normalized per direction
        return tuple(pair(x, f"loss_range[{d!r}]") for x, d in zip(loss_range, DIRECTIONS))
    if isinstance(loss_range, Mapping):
        if not set(loss_range) <= set(DIRECTIONS):
            raise ValueError(f"loss_range keys must be 'remove'/'add', got {sorted(loss_range)}")
        full = (-math.inf, math.inf)
        return tuple(pair(loss_range[d], f"loss_range[{d!r}]") if d in loss_range else full
                     for d in DIRECTIONS)
    p = pair(loss_range, "loss_range")
    return (p, p)
