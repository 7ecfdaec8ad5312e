"""Checks on the raw command line that argparse cannot word well.

* A negative number in scientific notation (``--delta -1e-5``) is taken by argparse for
  an unknown flag ("expected at least one argument"); :func:`negative_value_error` names
  the flag it was meant for instead.
* Output paths (``--output``, ``--plot``) are checked before anything is computed
  (:func:`check_output_path`), so a long run does not end in a bare ``[Errno 2]``.
"""

from __future__ import annotations

import os
import re
from typing import Optional, Sequence

from .errors import UsageError

__all__ = ["negative_value_error", "check_output_path", "unrecognized_message",
           "PLOT_FORMATS"]

#: the file formats matplotlib's savefig writes (checked before computing)
PLOT_FORMATS = ("png", "pdf", "svg", "svgz", "eps", "ps", "jpg", "jpeg", "tif", "tiff",
                "webp", "pgf", "raw", "rgba", "gif", "avif")

# what argparse itself accepts as a negative number ('-3', '-0.5'); anything else that
# starts with '-' is read as a flag
_ARGPARSE_NEGATIVE = re.compile(r"^-\d+$|^-\d*\.\d+$")
_NEGATIVE_NUMBER = re.compile(r"^-(\d[\d_]*\.?\d*|\.\d+)([eE][-+]?\d+)?$|^-inf(inity)?$", re.I)


def negative_value_error(argv: Sequence[str]) -> Optional[str]:
    """The message for the first negative number argparse would misread as a flag, or
    ``None``.  Every numeric flag of this command line takes a value >= 0."""
    for i, tok in enumerate(argv):
        if not _NEGATIVE_NUMBER.match(tok) or _ARGPARSE_NEGATIVE.match(tok):
            continue
        flag = next((a for a in reversed(argv[:i])
                     if a.startswith("-") and not _NEGATIVE_NUMBER.match(a)), None)
        if flag is None or flag == "--":
            continue
        flag = flag.split("=", 1)[0]
        return (f"{flag} {tok}: {flag} takes a positive number, got the negative {tok} "
                f"(did you mean {flag} {tok[1:]}?)")
    return None


def check_output_path(flag: str, path: Optional[str]) -> None:
    """Refuse ``path`` for ``flag`` up front if it cannot be written: its directory must
    exist and be writable, and it must not be a directory."""
    if not path or path == "-":
        return
    parent = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise UsageError(f"{flag} {path}: is a directory; give a file name, e.g. "
                         f"{flag} {os.path.join(path, 'curve.png' if flag == '--plot' else 'curve.csv')}")
    if not os.path.isdir(parent):
        raise UsageError(f"{flag} {path}: the directory {parent} does not exist; create it "
                         f"or write to another {flag} path (checked before computing)")
    ext = os.path.splitext(path)[1].lstrip(".").lower()
    if flag == "--plot" and ext not in PLOT_FORMATS:
        raise UsageError(f"--plot {path}: the extension {'.' + ext if ext else '(none)'} is not "
                         f"an image format; use one of {', '.join(PLOT_FORMATS[:6])}, ... "
                         "(e.g. --plot curve.png; checked before computing)")
    if not os.access(parent, os.W_OK):
        raise UsageError(f"{flag} {path}: the directory {parent} is not writable; choose "
                         f"another {flag} path")


def unrecognized_message(command: Optional[str], extra: Sequence[str]) -> str:
    """The message for arguments argparse did not recognize, with the likely fix: an
    unquoted mechanism string (``-m gaussian sigma=1``), or ``--epsilon`` given to
    ``epsilon`` (``--delta`` to ``delta``)."""
    words = " ".join(extra)
    cmd = command or ""
    if cmd == "epsilon" and "--epsilon" in extra:
        return (f"unrecognized arguments: {words}; the epsilon command computes epsilon at "
                "each --delta D: did you mean --delta? (delta(epsilon) is 'sampledprv delta "
                "--epsilon E')")
    if cmd == "delta" and "--delta" in extra:
        return (f"unrecognized arguments: {words}; the delta command computes delta at each "
                "--epsilon E: did you mean --epsilon? (epsilon(delta) is 'sampledprv "
                "epsilon --delta D')")
    params = [t for t in extra if "=" in t and not t.startswith("-")]
    if params:
        return (f"unrecognized arguments: {words}; a mechanism string is one argument: "
                f"quote it, e.g. -m \"gaussian {params[0]}\" (the shell split it at the "
                "spaces)")
    return f"unrecognized arguments: {words}; see '{PROG_NAME} {cmd} --help'".replace(
        "  --help", " --help")


PROG_NAME = "sampledprv"
