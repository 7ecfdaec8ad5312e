"""dp-accounting's ``DpEvent`` trees in and out: the public names in one place.

This module re-exports what is defined in

* :mod:`sampledprv.interop.reader` -- :func:`from_dp_event` (event trees read by class
  name, the sensitivity convention, :data:`SUPPORTED_EVENTS`), with the single events
  in :mod:`sampledprv.interop.leaf_events` and the ``neighbouring`` argument in
  :mod:`sampledprv.interop.neighbouring`;
* :mod:`sampledprv.interop.writer` -- :func:`to_dp_event`;
* :mod:`sampledprv.interop.composition` -- :class:`DpEventComposition` (what
  :func:`from_dp_event` returns) and :class:`RdpPart`.

It is kept so that ``from sampledprv.interop.dp_accounting import from_dp_event`` goes on
working; new code can use ``sampledprv.from_dp_event`` / ``sampledprv.interop``.
"""

from __future__ import annotations

from .composition import DpEventComposition, RdpPart
from .reader import SUPPORTED_EVENTS, from_dp_event
from .writer import to_dp_event

__all__ = ["from_dp_event", "to_dp_event", "DpEventComposition", "RdpPart", "SUPPORTED_EVENTS"]
