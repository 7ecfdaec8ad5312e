"""Call a compiled fill by its address: one sampling kernel for every source.

A kernel that calls its source's ``fill(state, params, out)`` directly links the fill's
code into its own, and Numba then optimizes and emits all of it again for the kernel
(and once more for the parallel loop's body): the compile time of a kernel grows with
its fill, and every source needs a kernel of its own.  Instead, the kernels of
:mod:`.kernels` take the address of the fill's compiled code as an integer argument and
call it through :func:`call_fill`, with Numba's own calling convention (so exceptions
raised in a fill propagate as usual).  The kernels are then compiled once, for every
source, and cached on disk; a fill compiles alone, on its own (and is cached when it is
a built-in one).  One call per block of draws costs nothing measurable.

The call is only valid for a fill compiled for exactly :data:`FILL_ARGS`:
:func:`fill_address` compiles it for those types, and :func:`call_fill` refuses at
compile time any other argument types.
"""

from __future__ import annotations

import threading
from typing import Any, Dict

import numba
from numba import types
from numba.core import cgutils
from numba.core.errors import TypingError
from numba.extending import intrinsic

from ..draws.rng import STATE_DTYPE

__all__ = ["FILL_ARGS", "fill_address", "call_fill"]

#: argument types of every fill the kernels call: the stream's state record, the
#: parameters and the output block (both C-contiguous, writable float64 vectors)
FILL_ARGS = (numba.from_dtype(STATE_DTYPE), types.float64[::1], types.float64[::1])

_ADDRESSES: Dict[Any, int] = {}
_LOCK = threading.Lock()


def fill_address(fill: Any) -> int:
    """Address of the code of the jitted ``fill`` compiled for :data:`FILL_ARGS`
    (compiled now, or loaded from Numba's disk cache, if needed)."""
    with _LOCK:
        addr = _ADDRESSES.get(fill)
        if addr is None:
            cres = fill.overloads.get(FILL_ARGS)
            if cres is None:
                fill.compile(FILL_ARGS)
                cres = fill.overloads[FILL_ARGS]
            addr = cres.library.get_pointer_to_function(cres.fndesc.llvm_func_name)
            if not addr:
                raise RuntimeError(f"no compiled code found for the fill {fill!r}")
            _ADDRESSES[fill] = addr      # keeps ``fill`` (and so its code) alive
    return addr


@intrinsic
def call_fill(typingctx, addr, state, params, out):  # pragma: no cover - numba
    """``fill(state, params, out)`` for the fill whose code is at ``addr``."""
    if not isinstance(addr, types.Integer) or (state, params, out) != FILL_ARGS:
        raise TypingError(f"call_fill takes (int, {FILL_ARGS}), got "
                          f"{(addr, state, params, out)}")
    sig = types.void(addr, state, params, out)

    def codegen(context, builder, signature, args):
        argtys = list(FILL_ARGS)
        fnty = context.call_conv.get_function_type(types.void, argtys)
        fptr = builder.inttoptr(args[0], fnty.as_pointer())
        status, _ = context.call_conv.call_function(builder, fptr, types.void, argtys,
                                                    args[1:])
        with cgutils.if_unlikely(builder, status.is_error):
            context.call_conv.return_status_propagate(builder, status)
        return context.get_dummy_value()

    return sig, codegen
