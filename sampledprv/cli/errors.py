"""Program name, exit codes and the bad-input exception shared by every subcommand.

Exit codes: :data:`EXIT_OK` (0) success; :data:`EXIT_USAGE` (2) bad input, with a message on
stderr that says how to fix it; :data:`EXIT_INTERNAL` (1) internal error (a bug); and
:data:`EXIT_INTERRUPTED` (130) interrupted by Ctrl-C.
"""

from __future__ import annotations

__all__ = ["PROG", "EXIT_OK", "EXIT_INTERNAL", "EXIT_USAGE", "EXIT_INTERRUPTED", "UsageError"]

EXIT_OK, EXIT_INTERNAL, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130

PROG = "sampledprv"


class UsageError(ValueError):
    """Bad input to the command line (exit code 2)."""
