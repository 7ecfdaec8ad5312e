"""Old module paths of sampledprv, kept for one release with a ``DeprecationWarning``.

The package was reorganised into layers (``core`` < ``mechanisms`` < ``engine``/``rdp`` <
``analytic``/``sampled`` < ``gg`` < ``torch``/``cli``; see the design notes, "Package
layout").  A module that moved is still importable under its old name: the first import
of the old name warns and binds the new module (the same object, so attributes and
monkeypatching act on the real module).  ``sampledprv.prv``, a package that was split
between :mod:`sampledprv.core.law` and :mod:`sampledprv.mechanisms.relations`, is a
read-only view over both.

No file exists at the old paths (a file there would hide the move from git's rename
detection), so the old names are served by a :mod:`importlib` finder installed by
``sampledprv/__init__.py``.  New code imports the new paths.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types
import warnings
from typing import Any, Optional, Sequence

__all__ = ["MOVED", "install"]

#: old module name -> new module(s); a tuple is a view whose names come from the first
#: module that has them
MOVED: dict[str, "str | tuple[str, ...]"] = {
    # core: the law types and the accountant contract
    "sampledprv.interval": "sampledprv.core.interval",
    "sampledprv.contract": "sampledprv.core.contract",
    "sampledprv.advice": "sampledprv.core.advice",
    "sampledprv._validation": "sampledprv.core.validation",
    "sampledprv.prv": ("sampledprv.mechanisms.relations", "sampledprv.mechanisms.laws",
                       "sampledprv.core.law"),
    "sampledprv.prv.loss_distribution": "sampledprv.core.law",
    "sampledprv.prv.subsampled": "sampledprv.core.subsampled_law",
    "sampledprv.prv.analytic": "sampledprv.mechanisms.laws",
    # the analytic accountant
    "sampledprv.accountant": "sampledprv.analytic.accountant",
    "sampledprv._online": "sampledprv.analytic._online",
    "sampledprv._error_terms": "sampledprv.analytic._error_terms",
    # Generalized Gaussian tools
    "sampledprv.gg_vector": "sampledprv.gg.vector",
    "sampledprv.gg_vector_lower": "sampledprv.gg.vector_lower",
    "sampledprv.gg_dimension": "sampledprv.gg.dimension",
    "sampledprv.gg_tails": "sampledprv.gg.tails",
    "sampledprv.ggnmax": "sampledprv.gg.noisy_max",
    "sampledprv.dpsgd_accounting": "sampledprv.gg.dpsgd_accounting",
    # compiled-kernel cache housekeeping
    "sampledprv._numba_cache": "sampledprv.sampled._numba_cache",
}

#: old names that were packages (their old submodules are listed in MOVED)
_PACKAGES = frozenset({"sampledprv.prv"})


class _View(types.ModuleType):
    """A module whose attributes are looked up in other modules (for a split package)."""

    def __init__(self, name: str, targets: Sequence[str]) -> None:
        super().__init__(name, f"Deprecated alias of {', '.join(targets)}.")
        self._targets = tuple(targets)

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        for target in self._targets:
            module = importlib.import_module(target)
            if hasattr(module, attr):
                return getattr(module, attr)
        raise AttributeError(f"module {self.__name__!r} has no attribute {attr!r}")

    def __dir__(self) -> list[str]:
        names: set[str] = set()
        for target in self._targets:
            names.update(dir(importlib.import_module(target)))
        return sorted(names)


class _Loader(importlib.abc.Loader):
    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        target = MOVED[spec.name]
        new = target if isinstance(target, str) else ", ".join(target)
        warnings.warn(f"{spec.name} is deprecated and will be removed in the next release; "
                      f"import {new} instead (or the public names from sampledprv)",
                      DeprecationWarning, stacklevel=_user_stacklevel())
        if isinstance(target, str):
            module = importlib.import_module(target)
            self._spec = module.__spec__      # the import system overwrites it; restored below
            return module
        view = _View(spec.name, target)
        if spec.name in _PACKAGES:
            view.__path__ = []          # old submodules resolve through the finder
        return view

    def exec_module(self, module: types.ModuleType) -> None:
        spec = getattr(self, "_spec", None)
        if spec is not None:
            module.__spec__ = spec           # the module keeps its own name and spec


def _user_stacklevel() -> int:
    """The stack level, for a ``warnings.warn`` in :meth:`_Loader.create_module`, of the
    first frame outside importlib and this module (so that the warning names the line that
    imported the old path).  ``warnings`` does not count importlib's bootstrap frames."""
    frame, level = sys._getframe(1), 1            # create_module's frame is level 1
    while frame is not None and frame.f_code.co_filename == __file__:
        frame = frame.f_back
        while frame is not None and _internal(frame.f_code.co_filename):
            frame = frame.f_back
        level += 1
    return level


def _internal(filename: str) -> bool:
    return "importlib" in filename and "_bootstrap" in filename


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: Optional[Sequence[str]] = None,
                  target: Optional[types.ModuleType] = None
                  ) -> Optional[importlib.machinery.ModuleSpec]:
        if fullname not in MOVED:
            return None
        return importlib.machinery.ModuleSpec(fullname, _Loader(),
                                              is_package=fullname in _PACKAGES)


_FINDER = _Finder()


def install() -> None:
    """Put the old-path finder on :data:`sys.meta_path` (idempotent)."""
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _FINDER)   # before editable-install finders
