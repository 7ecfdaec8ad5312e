r"""The ``sampledprv`` command line.

Subcommands (``sampledprv <command> --help`` teaches each one)::

    epsilon    certified epsilon(delta) of a composition
    delta      certified delta(epsilon) of a composition
    calibrate  the noise scale that meets a target (epsilon, delta)
    plan       samples needed by the sampled accountant
    validate   Monte Carlo check of an analytic privacy-loss law
    curve      delta(epsilon) with its certified band on a grid (CSV / JSON / PNG)

Mechanisms are written as ``"<kind> key=value ..."`` (see :data:`KINDS`), for example
``"subsampled-gaussian sigma=1 q=0.01"`` or ``"gg beta=1.5 sigma=1.2"``; a composition is
one or more ``--mechanism``/``--count`` pairs or a TOML/JSON file (``--config``).

Exit codes: 0 success; 2 bad input (the message on stderr says how to fix it); 1 internal
error (a bug: rerun with ``--debug`` for the traceback); 130 interrupted (Ctrl-C);
``validate`` also exits 1 when the samples reject the analytic law (that is a bug too).

The package, one concept a module: ``mechanism_strings`` (mechanism strings), ``config``
(composition files), ``composition`` (file and flags merged; the accountant), ``output``
(tables and JSON), ``parser`` (flags and help), the subcommands in ``commands_accounting``
(epsilon, delta, curve), ``commands_calibrate`` and ``commands_sampling`` (plan, validate),
and the entry point :func:`main` here.
"""

from __future__ import annotations

import os
import sys
import warnings
from typing import Dict, Optional, Sequence

from .argv_checks import negative_value_error, unrecognized_message
from .commands_accounting import cmd_curve, cmd_delta, cmd_epsilon
from .commands_calibrate import cmd_calibrate
from .commands_sampling import cmd_plan, cmd_validate
from .commands_tradeoff import cmd_audit, cmd_tradeoff
from .commands_claims import cmd_check_claim, cmd_group
from .config import load_config
from .errors import EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, PROG, error_message
from .mechanism_strings import KINDS, MechanismSpec, format_mechanism, parse_mechanism
# also importable from here, as when the command line was one module
from .composition import (Setup, accountant_description, build_setup,  # noqa: F401
                          composed, make_accountant_factory)
from .errors import UsageError  # noqa: F401
from .mechanism_strings import FREE  # noqa: F401
from .output import interval_json, jsonable  # noqa: F401
from .parser import Handler, build_parser

__all__ = ["main", "parse_mechanism", "format_mechanism", "load_config", "MechanismSpec",
           "KINDS", "EXIT_OK", "EXIT_INTERNAL", "EXIT_USAGE", "EXIT_INTERRUPTED"]


def _commands() -> Dict[str, Handler]:
    # Looked up in this package when main runs, so assigning sampledprv.cli.cmd_<name>
    # (as the tests do) replaces that subcommand.
    return {"epsilon": cmd_epsilon, "delta": cmd_delta, "calibrate": cmd_calibrate,
            "plan": cmd_plan, "validate": cmd_validate, "curve": cmd_curve,
            "tradeoff": cmd_tradeoff, "audit": cmd_audit, "check-claim": cmd_check_claim,
            "group": cmd_group}


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    print(f"{PROG}: warning: {error_message(message)}", file=sys.stderr)


def _check_progress_flag(args) -> None:
    """``--progress`` needs tqdm: refuse it up front, before any sampling, if it is missing."""
    if getattr(args, "progress", None) is not True:
        return
    try:
        import tqdm  # noqa: F401, PLC0415
    except ImportError:
        raise UsageError("--progress needs the tqdm package: install it (pip install tqdm) "
                         "or drop --progress (bars are then off)") from None


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the command line; returns the exit code (also used as the console script)."""
    parser = build_parser(_commands())
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv:                             # a bare 'sampledprv': the help, not an error
        parser.print_help()
        return EXIT_OK
    bad = negative_value_error(argv)
    if bad is not None:
        cmd = argv[0] if not argv[0].startswith("-") else ""
        print(f"{PROG}{' ' + cmd if cmd else ''}: error: {bad}", file=sys.stderr)
        return EXIT_USAGE
    args, extra = parser.parse_known_args(argv)   # exits 2 on other argparse errors
    if extra:
        cmd = getattr(args, "command", None)
        print(f"{PROG}{' ' + cmd if cmd else ''}: error: "
              f"{unrecognized_message(cmd, extra)}", file=sys.stderr)
        return EXIT_USAGE
    debug = getattr(args, "debug", False) or bool(os.environ.get("SAMPLEDPRV_DEBUG"))
    old = warnings.showwarning
    warnings.showwarning = _show_warning      # one line per warning, on stderr
    try:
        _check_progress_flag(args)
        return int(args.func(args))
    except KeyboardInterrupt:
        print(f"\n{PROG}: interrupted (Ctrl-C); no result was produced", file=sys.stderr)
        return EXIT_INTERRUPTED
    except (ValueError, FileNotFoundError, IsADirectoryError, PermissionError) as exc:
        if debug:
            raise
        print(f"{PROG} {args.command}: error: {error_message(exc)}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:  # e.g. '| head'
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:  # pragma: no cover
            pass
        return EXIT_OK
    except Exception as exc:  # noqa: BLE001 - the internal-error contract
        if debug:
            raise
        print(f"{PROG} {args.command}: internal error: {type(exc).__name__}: {exc}\n"
              "this is a bug in sampledprv: rerun with --debug for the traceback and report "
              "it", file=sys.stderr)
        return EXIT_INTERNAL
    finally:
        warnings.showwarning = old
