"""Interoperability with other accounting libraries.

* :func:`from_dp_event` / :func:`to_dp_event` -- dp-accounting's ``DpEvent`` trees
  (:mod:`sampledprv.interop.reader`, :mod:`sampledprv.interop.writer`, the result type
  in :mod:`sampledprv.interop.composition`; :mod:`sampledprv.interop.dp_accounting`
  re-exports all of them; dp-accounting itself is needed only to *build* events,
  optional extra ``sampledprv[dp-accounting]``);
* the Opacus accountant lives in :mod:`sampledprv.torch.opacus_accountant`.
"""

from .composition import DpEventComposition, RdpPart
from .reader import SUPPORTED_EVENTS, from_dp_event
from .writer import to_dp_event

__all__ = ["from_dp_event", "to_dp_event", "DpEventComposition", "RdpPart", "SUPPORTED_EVENTS"]
