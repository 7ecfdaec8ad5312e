"""Program name, exit codes and the bad-input exception shared by every subcommand.

Exit codes: :data:`EXIT_OK` (0) success; :data:`EXIT_USAGE` (2) bad input, with a message on
stderr that says how to fix it; :data:`EXIT_INTERNAL` (1) internal error (a bug); and
:data:`EXIT_INTERRUPTED` (130) interrupted by Ctrl-C.
"""

from __future__ import annotations

__all__ = ["PROG", "EXIT_OK", "EXIT_INTERNAL", "EXIT_USAGE", "EXIT_INTERRUPTED", "UsageError",
           "SETTING_FLAGS", "error_message"]

EXIT_OK, EXIT_INTERNAL, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130

PROG = "sampledprv"


class UsageError(ValueError):
    """Bad input to the command line (exit code 2)."""


#: Library setting -> the flag that sets it.  Errors that carry remedies
#: (:class:`sampledprv.core.advice.AdvisedError`) are worded with these flags on the command
#: line; remedies without a flag (``bracket``, ``max_evaluations``) are left out.
SETTING_FLAGS = {
    "eps_error": "--eps-error", "delta_error": "--delta-error",
    "max_grid_size": "--max-grid-size", "n_samples": "--n-samples", "alpha": "--alpha",
    "bins": "--bins", "epsilon": "--epsilon", "delta": "--delta", "count": "--count",
    "rtol": "--rtol",
}


def error_message(exc: object) -> str:
    """A bad-input error or warning as the command line shows it (flags, not Python)."""
    from ..core.advice import AdvisedError, AdvisedWarning, flag_wording  # noqa: PLC0415

    if isinstance(exc, (AdvisedError, AdvisedWarning)):
        return exc.render(flag_wording(SETTING_FLAGS))
    return str(exc)
