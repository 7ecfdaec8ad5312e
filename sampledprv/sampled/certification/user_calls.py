"""Calls into the user's functions, with their expected signature in any error.

A sampler written ``sample(size, rng)`` instead of ``sample(rng, size)``, or a
log-density written with :mod:`math` instead of numpy (not vectorized), fails deep in the
user's own code with an error that says nothing about what the accountant expected
(``AttributeError: 'int' object has no attribute 'normal'``, ``TypeError: only length-1
arrays can be converted``).  :func:`call_user` re-raises it as a :class:`ValueError` that
names the function, what it was called with, the signature it must have and the usual
cause; the original exception is chained (``raise ... from``), so its traceback is kept.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

__all__ = ["call_user", "SAMPLER_SIGNATURE", "LOGDENSITY_SIGNATURE", "LOSS_SAMPLER_SIGNATURE"]

SAMPLER_SIGNATURE = ("sample(rng, size) -> array of shape (size,) or (size, d), with rng a "
                     "numpy.random.Generator and size an int (in that order)")
LOSS_SAMPLER_SIGNATURE = ("sample(rng, size) -> privacy losses, a float array of shape (size,), "
                          "with rng a numpy.random.Generator and size an int (in that order)")
LOGDENSITY_SIGNATURE = ("logp(w) -> array of shape (n,), vectorized over an array w of shape "
                        "(n,) or (n, d): use numpy functions (np.exp, np.log, ...), not math's, "
                        "or wrap a scalar function in np.vectorize")


def _describe(arg: Any) -> str:
    if isinstance(arg, np.random.Generator):
        return "<numpy Generator>"
    if isinstance(arg, np.ndarray):
        return f"an array of shape {arg.shape}"
    return repr(arg) if len(repr(arg)) < 40 else type(arg).__name__


def _cause(exc: BaseException, args: tuple) -> str:
    """The usual mistake behind ``exc``, when it can be told."""
    text = str(exc)
    if any(isinstance(a, np.random.Generator) for a in args):
        if isinstance(exc, (AttributeError, TypeError)) and ("'int' object" in text
                                                             or "Generator" in text):
            return "; the arguments look swapped: the rng comes first, then the size"
        return ""
    if isinstance(exc, TypeError) and ("length-1" in text or "size-1" in text or
                                       "scalar" in text or "must be real number" in text):
        return "; the function is not vectorized (it expects one number, got an array)"
    if isinstance(exc, ValueError) and "truth value of an array" in text:
        return ("; the function is not vectorized (an 'if' on an array): use np.where "
                "instead")
    return ""


def call_user(fn: Callable, name: str, signature: str, *args: Any) -> Any:
    """``fn(*args)``; an exception from the user's code becomes a :class:`ValueError`
    naming ``name``, the call and ``signature``."""
    try:
        return fn(*args)
    except Exception as exc:  # noqa: BLE001 - re-raised with the contract, chained
        if getattr(exc, "_sampledprv_wrapped", False):
            raise
        call = ", ".join(_describe(a) for a in args)
        err = ValueError(f"{name} raised {type(exc).__name__}: {exc} when called as "
                         f"{name}({call}){_cause(exc, args)}. It must be {signature}")
        err._sampledprv_wrapped = True  # type: ignore[attr-defined]
        raise err from exc
