"""Errors that say which setting to change, in the caller's own vocabulary.

An :class:`AdvisedError` is a :class:`ValueError` whose message is a *problem* followed by
*remedies*, each naming a setting (``delta_error``, ``eps_error``, ``max_grid_size``,
``n_samples``, ``epsilon``, ...) and what to do with it.  Its ``str`` speaks Python
(``Accountant(delta_error=1e-07)``); :meth:`AdvisedError.render` lets another interface,
such as the command line, name the same settings its own way (``--delta-error 1e-07``).
"""

from __future__ import annotations

import os
import sys
import warnings
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping, Optional, Type, Union

__all__ = ["Remedy", "AdvisedError", "AdvisedWarning", "fmt_value"]


@dataclass(frozen=True)
class Remedy:
    """One way out: ``action`` (``"set"``, ``"raise"`` or ``"lower"``) applied to ``setting``.

    ``value`` is the suggested value for ``"set"`` (optional otherwise); ``owner`` is the
    Python object that takes the setting (``"Accountant"``), used in the Python wording;
    ``note`` is a short reason appended in parentheses.
    """

    setting: str
    action: str = "set"
    value: Optional[float] = None
    owner: str = ""
    note: str = ""

    def python(self) -> str:
        if self.action == "set" and self.value is not None:
            arg = f"{self.setting}={fmt_value(self.value)}"
            text = f"{self.owner}({arg})" if self.owner else arg
            text = f"use {text}"
        else:
            text = f"{self.action} {self.setting}"
            if self.value is not None:
                text += f" (to {fmt_value(self.value)})"
        return text + (f" ({self.note})" if self.note else "")


def fmt_value(v: float) -> str:
    """A suggested value: integers in full (grid sizes, sample counts), else 2 digits."""
    if float(v).is_integer() and 1 <= abs(v) < 1e15:
        return str(int(v))
    return f"{v:.2g}"


class AdvisedError(ValueError):
    """A :class:`ValueError` with a problem statement and structured :class:`Remedy` items."""

    def __init__(self, problem: str, remedies: Iterable[Remedy] = ()) -> None:
        self.problem = problem
        self.remedies = tuple(remedies)
        super().__init__(self.render(None))

    def render(self, name: Optional[Callable[[Remedy], Optional[str]]]) -> str:
        """The message with each remedy worded by ``name(remedy)``.

        ``name`` returns the remedy in the caller's vocabulary, or ``None`` to drop a
        remedy the caller cannot act on; ``None`` for ``name`` gives the Python wording.
        """
        words = [r.python() if name is None else name(r) for r in self.remedies]
        words = [w for w in words if w]
        if not words:
            return self.problem
        return f"{self.problem}; " + ("; or ".join(words))


class AdvisedWarning(RuntimeWarning):
    """A :class:`RuntimeWarning` with a problem statement and :class:`Remedy` items
    (same wording rules as :class:`AdvisedError`)."""

    def __init__(self, problem: str, remedies: Iterable[Remedy] = ()) -> None:
        self.problem = problem
        self.remedies = tuple(remedies)
        super().__init__(self.render(None))

    render = AdvisedError.render


def flag_wording(flags: Mapping[str, str]) -> Callable[[Remedy], Optional[str]]:
    """A ``name`` function for :meth:`AdvisedError.render` mapping settings to CLI flags."""
    def name(r: Remedy) -> Optional[str]:
        flag = flags.get(r.setting)
        if flag is None:
            return None
        if r.action == "set" and r.value is not None:
            text = f"use {flag} {fmt_value(r.value)}"
        else:
            text = f"{r.action} {flag}"
            if r.value is not None:
                text += f" (to {fmt_value(r.value)})"
        return text + (f" ({r.note})" if r.note else "")
    return name


__all__ += ["flag_wording"]

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep   # sampledprv/


def warn_user(message: Union[str, Warning], category: Optional[Type[Warning]] = None) -> None:
    """:func:`warnings.warn` attributed to the first caller outside this package.

    The ``stacklevel`` is found by walking up the stack past every frame whose file lies in
    ``sampledprv/``, so the warning names the user's own line however deep the library
    call was (a fixed ``stacklevel`` points into the library when the call path changes).
    """
    level = 2                                   # 1 is this function, 2 its caller
    frame = sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE_DIR):
        frame = frame.f_back
        level += 1
    if frame is None:                           # called from inside the package only
        level = 2
    warnings.warn(message, category, stacklevel=level)


__all__ += ["warn_user"]
