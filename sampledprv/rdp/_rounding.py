"""Outward rounding of floating-point results that are promised as bounds (defined in
:mod:`sampledprv.mechanisms._outward`, the lower layer, where the families' Renyi
divergences use it)."""

from __future__ import annotations

from ..mechanisms._outward import REL, down, up

__all__ = ["REL", "up", "down"]
