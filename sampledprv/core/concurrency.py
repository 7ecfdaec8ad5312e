r"""Thread safety and pickling of accountants: one re-entrant lock per instance.

An accountant caches what it computed for its current composition (discretized laws,
composed curves, online spectra, histograms).  A query that runs while another thread
composes would otherwise finish on the old composition and store its curves as the
answer for the new one (a stale cache: an under-reported epsilon with a certificate on
it).  :func:`guarded` makes the methods named at the class definition hold the
instance's :class:`threading.RLock` for their whole run, so every ``compose`` and every
query is atomic: each answer is the answer for one composition state the accountant
passed through, in some serial order of the calls.  Concurrent queries of one
accountant run one after the other (the numerical kernels inside a query still use
their own threads); separate accountants do not share a lock.

The same class decorator makes instances picklable and deep-copyable: the lock is not
part of the state (it is recreated on first use); attributes listed as ``transient``
(caches rebuilt on demand) are ``None`` in a pickle and in a copy; attributes listed as
``shared`` (resources such as an executor) are ``None`` in a pickle and shared, not
copied, by :func:`copy.deepcopy`.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import threading
from typing import Any, Callable, Iterable, TypeVar

__all__ = ["guarded", "instance_lock"]

#: attribute that holds an instance's lock (absent until first use, never pickled)
LOCK_ATTR = "_sampledprv_lock"
#: guards the creation of instance locks
_CREATE = threading.Lock()

T = TypeVar("T", bound=type)


def instance_lock(obj: object) -> "threading.RLock":
    """The re-entrant lock of ``obj``, created on first use (also after unpickling)."""
    lock = obj.__dict__.get(LOCK_ATTR)
    if lock is None:
        with _CREATE:
            lock = obj.__dict__.get(LOCK_ATTR)
            if lock is None:
                lock = threading.RLock()
                obj.__dict__[LOCK_ATTR] = lock
    return lock


def _locked(func: Callable) -> Callable:
    @functools.wraps(func)
    def wrapper(self: object, *args: Any, **kwargs: Any) -> Any:
        with instance_lock(self):
            return func(self, *args, **kwargs)
    wrapper.__sampledprv_guarded__ = True   # type: ignore[attr-defined]
    return wrapper


def guarded(*names: str, transient: Iterable[str] = (),
            shared: Iterable[str] = ()) -> Callable[[T], T]:
    """Class decorator: the methods (or properties) ``names`` hold the instance lock.

    Parameters
    ----------
    *names : str
        Methods and properties defined on (or inherited by) the class.  A name the class
        lacks raises :class:`AttributeError` at import time, so a renamed method cannot
        silently lose its lock.
    transient : iterable of str
        Caches that the class rebuilds when they are ``None``: ``None`` in a pickle and in
        a copy.
    shared : iterable of str
        Resources, not state: ``None`` in a pickle, shared by :func:`copy.deepcopy`.  A
        key of a ``dict`` attribute is written ``"attr.key"``.

    Pickling and copying take the lock, so a snapshot is never taken mid-``compose``.
    """
    transient, shared = tuple(transient), tuple(shared)

    def decorate(cls: T) -> T:
        for name in names:
            attr = None
            for klass in cls.__mro__:
                if name in klass.__dict__:
                    attr = klass.__dict__[name]
                    break
            if attr is None:
                raise AttributeError(f"{cls.__name__} has no method {name!r} to guard")
            if isinstance(attr, property):
                setattr(cls, name, property(_locked(attr.fget), attr.fset, attr.fdel,
                                            attr.__doc__))
            elif not getattr(attr, "__sampledprv_guarded__", False):
                setattr(cls, name, _locked(attr))
        cls.__getstate__ = _getstate(transient + shared)   # type: ignore[attr-defined]
        cls.__setstate__ = _setstate                       # type: ignore[attr-defined]
        cls.__deepcopy__ = _deepcopy(transient, shared)    # type: ignore[attr-defined]
        return cls

    return decorate


def _state(obj: object) -> dict:
    """The instance dictionary without the lock (a shallow copy; call under the lock)."""
    state = dict(obj.__dict__)
    state.pop(LOCK_ATTR, None)
    return state


def _resources(state: dict, transient: tuple[str, ...]) -> list:
    """The transient objects of ``state`` (``attr`` or ``attr.key`` paths; ``key`` is a
    dict key or a field of a frozen dataclass)."""
    found = []
    for path in transient:
        attr, _, key = path.partition(".")
        value = state.get(attr)
        if key:
            if isinstance(value, dict):
                value = value.get(key)
            else:
                value = getattr(value, key, None) if dataclasses.is_dataclass(value) else None
        if value is not None:
            found.append(value)
    return found


def _drop(state: dict, paths: tuple[str, ...]) -> dict:
    """``state`` with the ``paths`` (``attr`` or ``attr.key``) set to ``None`` (a frozen
    dataclass is replaced by a copy with that field ``None``, not changed)."""
    for path in paths:
        attr, _, key = path.partition(".")
        value = state.get(attr)
        if key:
            if isinstance(value, dict) and key in value:
                state[attr] = {**value, key: None}
            elif dataclasses.is_dataclass(value) and not isinstance(value, type) \
                    and getattr(value, key, None) is not None:
                state[attr] = dataclasses.replace(value, **{key: None})
        elif attr in state:
            state[attr] = None
    return state


def _getstate(dropped: tuple[str, ...]) -> Callable[[object], dict]:
    def __getstate__(self: object) -> dict:
        # a deep snapshot taken under the lock: the pickler writes it after this returns,
        # when another thread may be composing again
        with instance_lock(self):
            return copy.deepcopy(_drop(_state(self), dropped))
    return __getstate__


def _setstate(self: object, state: dict) -> None:
    self.__dict__.update(state)


def _deepcopy(transient: tuple[str, ...],
              shared: tuple[str, ...]) -> Callable[[object, dict], object]:
    def __deepcopy__(self: object, memo: dict) -> object:
        cls = type(self)
        new = cls.__new__(cls)
        memo[id(self)] = new
        with instance_lock(self):
            state = _drop(_state(self), transient)
            for resource in _resources(state, shared):
                memo[id(resource)] = resource       # shared, not copied
            new.__dict__.update(copy.deepcopy(state, memo))
        return new
    return __deepcopy__
