"""The argument parser: subcommands, flags, help text and examples."""

from __future__ import annotations

import argparse
import textwrap
from typing import Callable, Dict, Mapping, Optional

from .commands_claims import add_claims_parser, cmd_check_claim, cmd_group
from .config import parse_int
from .errors import PROG, UsageError
from .mechanism_strings import kinds_help, parse_number

__all__ = ["build_parser", "default_commands"]

Handler = Callable[[argparse.Namespace], int]


def default_commands() -> Dict[str, Handler]:
    """The handler of each subcommand, by name.

    Returns
    -------
    dict of str to callable
        ``{"epsilon": cmd_epsilon, ...}``: each takes the parsed arguments and returns
        the exit code.
    """
    from .commands_accounting import cmd_curve, cmd_delta, cmd_epsilon
    from .commands_calibrate import cmd_calibrate
    from .commands_sampling import cmd_plan, cmd_validate

    from .commands_tradeoff import cmd_audit, cmd_tradeoff

    return {"epsilon": cmd_epsilon, "delta": cmd_delta, "calibrate": cmd_calibrate,
            "plan": cmd_plan, "validate": cmd_validate, "curve": cmd_curve,
            "tradeoff": cmd_tradeoff, "audit": cmd_audit, "check-claim": cmd_check_claim,
            "group": cmd_group}


# argparse "type" callables: raise ArgumentTypeError so argparse reports them (exit 2)
def _arg_float(text: str) -> float:
    try:
        return parse_number("value", text)
    except UsageError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _arg_int(text: str) -> int:
    try:
        return parse_int("value", text)
    except UsageError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _arg_n_samples(text: str) -> "int | tuple":
    """``N`` (both directions) or ``N_REMOVE,N_ADD``."""
    parts = text.split(",")
    if len(parts) not in (1, 2):
        raise argparse.ArgumentTypeError(
            f"{text!r}: give N (both directions) or N_REMOVE,N_ADD, e.g. 2e6,5e5")
    vals = tuple(_arg_int(x.strip()) for x in parts)
    return vals[0] if len(vals) == 1 else vals


_MAIN_EPILOG = """\
mechanisms ("<kind> key=value ...", parameters in any order):
{kinds}

examples:
  # DP-SGD: 1000 steps of the Poisson-subsampled Gaussian, certified epsilon at delta=1e-5
  {PROG} epsilon --delta 1e-5 --mechanism "subsampled-gaussian sigma=1 q=0.01" --count 1000

  # heterogeneous composition, both queries, machine-readable
  {PROG} epsilon --delta 1e-5 1e-6 -m "subsampled-gaussian sigma=1 q=0.01" -c 1000 \\
      -m "laplace scale=20" -c 10 --json

  # the GG scale for (2, 1e-5)-DP after 1000 steps of beta=1.5 noise at q=0.01
  {PROG} calibrate --epsilon 2 --delta 1e-5 -m "subsampled-gg beta=1.5 q=0.01" -c 1000

  # how many samples the sampled accountant needs (2.6e6 here), then run it with more
  {PROG} plan --delta 1e-3 -m "subsampled-gg beta=1.5 sigma=1 q=0.01" -c 100 --alpha 1e-6
  {PROG} epsilon --delta 1e-3 -m "subsampled-gg beta=1.5 sigma=1 q=0.01" -c 100 \\
      --accountant sampled --n-samples 1e7 --alpha 1e-6

  # a composition from a file, the privacy curve to CSV and a plot
  {PROG} curve --config job.toml --eps-max 4 --output curve.csv --plot curve.png

exit codes: 0 ok; 2 bad input (stderr says what to fix); 1 internal error (a bug; --debug
shows the traceback); 130 interrupted by Ctrl-C.
"""

_CONFIG_HELP = """\
config files (--config job.toml, or job.json with the same keys):
  accountant = "analytic"        # or "sampled"
  eps_error = 0.01               # analytic only
  delta_error = 1e-10            # analytic only
  # n_samples = 1_000_000        # sampled only (also alpha, seed, certify, bins)
  delta = [1e-5, 1e-6]           # default --delta (epsilon = ... for 'delta')

  [[mechanism]]
  spec = "subsampled-gaussian sigma=1 q=0.01"
  count = 1000

  [[mechanism]]                  # or a kind with its parameters as keys
  kind = "laplace"
  scale = 20
  count = 10
TOML needs Python >= 3.11 (or 'pip install tomli' on 3.10); JSON works everywhere.
Flags given on the command line override the file; --mechanism flags add to its list.
"""


def _main_epilog() -> str:
    """The epilog of ``sampledprv --help``: the mechanism kinds, examples, config files."""
    return _MAIN_EPILOG.format(kinds=kinds_help(), PROG=PROG) + "\n" + _CONFIG_HELP


class _MainParser(argparse.ArgumentParser):
    """The top-level parser, whose epilog is written when the help is: listing every
    mechanism kind imports the packages that register kinds on first use
    (``sampledprv.mechanisms.registry.DEFERRED``), which a command does not need."""

    def format_help(self) -> str:
        if self.epilog is None:
            self.epilog = _main_epilog()
        return super().format_help()


class _Formatter(argparse.RawDescriptionHelpFormatter):
    def __init__(self, prog: str) -> None:
        super().__init__(prog, max_help_position=30, width=100)


def _add_composition_args(p: argparse.ArgumentParser, *, accountant: bool = True) -> None:
    g = p.add_argument_group("composition")
    g.add_argument("-m", "--mechanism", action="append", metavar="SPEC",
                   help='a mechanism, e.g. "subsampled-gaussian sigma=1 q=0.01" (repeatable)')
    g.add_argument("-c", "--count", action="append", type=_arg_int, metavar="K",
                   help="how many times the matching --mechanism runs (repeatable, in order;"
                        " default 1)")
    g.add_argument("--config", metavar="FILE",
                   help="composition file (.toml or .json); see 'sampledprv --help'")
    if not accountant:
        return
    a = p.add_argument_group("accountant")
    a.add_argument("--accountant", choices=("analytic", "sampled"),
                   help="analytic (deterministic, default) or sampled (probability >= 1-alpha)")
    a.add_argument("--neighbouring", "--neighboring", metavar="REL",
                   help="neighbouring relation: add_remove (default) or substitute "
                        "(sensitivities stay per-record bounds; a sum moves by twice it)")
    a.add_argument("--eps-error", type=_arg_float, metavar="E",
                   help="analytic: half-width budget in epsilon (default 0.01)")
    a.add_argument("--delta-error", type=_arg_float, metavar="D",
                   help="analytic: additive delta error budget (default 1e-10)")
    a.add_argument("--max-grid-size", type=_arg_int, metavar="G",
                   help="analytic: largest FFT grid, ~24 bytes a point (default 2**26)")
    a.add_argument("--n-samples", type=_arg_n_samples, metavar="N",
                   help="sampled: privacy-loss draws per mechanism and direction (N, or "
                        "N_REMOVE,N_ADD for one per direction)")
    a.add_argument("--alpha", type=_arg_float, help="sampled: failure probability (1e-9)")
    a.add_argument("--seed", type=_arg_int, help="sampled: root seed (0)")
    a.add_argument("--certify", choices=("envelope", "seed"),
                   help="sampled: envelope (default) or seed (GG paper's SampledComposePRV)")
    a.add_argument("--bins", type=_arg_int,
                   help="sampled: histogram bins (default auto: 4096 sqrt(k) rounded up to "
                        "a power of two in [32768, 4194304]; k=1000 gives 131072)")


def _add_common(p: argparse.ArgumentParser) -> None:
    o = p.add_argument_group("output")
    o.add_argument("--json", action="store_true", help="machine-readable JSON on stdout")
    o.add_argument("--progress", dest="progress", action="store_true", default=None,
                   help="always show progress bars for sampling (default: runs > 2 s)")
    o.add_argument("--no-progress", dest="progress", action="store_false",
                   help="never show progress bars")
    o.add_argument("--debug", action="store_true", help="full tracebacks on errors")


def build_parser(commands: Optional[Mapping[str, Handler]] = None
                 ) -> argparse.ArgumentParser:
    """The argument parser of the ``sampledprv`` command.

    Parameters
    ----------
    commands : mapping of str to callable, optional
        The handler of each subcommand (``"epsilon"``, ``"delta"``, ``"calibrate"``,
        ``"plan"``, ``"validate"``, ``"curve"``), stored as ``func`` in the parsed
        arguments; by default the ``cmd_*`` functions of the command modules.

    Returns
    -------
    argparse.ArgumentParser
        The parser; ``parse_args`` exits 2 on bad flags.
    """
    from .. import __version__

    if commands is None:
        commands = default_commands()

    parser = _MainParser(
        prog=PROG, formatter_class=_Formatter,
        description=textwrap.fill(
            "Certified differential-privacy accounting. Every answer is an interval "
            "[lower, upper] with an estimate, and says how it is certified: deterministic "
            "(analytic mechanisms) or with probability >= 1 - alpha over the sampling "
            "(sampled accountant). Neighbouring datasets differ by adding or removing one "
            "record; both directions are accounted.", 92))   # epilog: _MainParser
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    p = sub.add_parser("epsilon", formatter_class=_Formatter,
                       help="certified epsilon(delta) of a composition",
                       description="Certified interval on epsilon(delta): the smallest epsilon "
                                   "for which the composition is (epsilon, delta)-DP.",
                       epilog=f"""examples:
  {PROG} epsilon --delta 1e-5 -m "subsampled-gaussian sigma=1 q=0.01" -c 1000
  {PROG} epsilon --delta 1e-5 -m "gg beta=1.5 sigma=2" -c 50 -m "pure-dp epsilon=0.1" -c 3
  {PROG} epsilon --config job.toml --json
""")
    p.add_argument("--delta", type=_arg_float, nargs="+", metavar="DELTA",
                   help="one or more deltas in (0, 1)")
    _add_composition_args(p)
    _add_common(p)
    p.set_defaults(func=commands["epsilon"])

    p = sub.add_parser("delta", formatter_class=_Formatter,
                       help="certified delta(epsilon) of a composition",
                       description="Certified interval on delta(epsilon), the hockey-stick "
                                   "divergence max over both directions.",
                       epilog=f"""examples:
  {PROG} delta --epsilon 1 2 4 -m "subsampled-gaussian sigma=1 q=0.01" -c 1000
""")
    p.add_argument("--epsilon", type=_arg_float, nargs="+", metavar="EPS",
                   help="one or more epsilons >= 0")
    _add_composition_args(p)
    _add_common(p)
    p.set_defaults(func=commands["delta"])

    p = sub.add_parser("calibrate", formatter_class=_Formatter,
                       help="noise parameter that meets a target (epsilon, delta)",
                       description="Smallest noise parameter whose certified upper bound on "
                                   "epsilon(delta) meets the target. Leave the parameter out "
                                   "of one --mechanism (or write it as sigma=? / scale=?); "
                                   "other --mechanism entries are fixed and use up part of "
                                   "the budget.",
                       epilog=f"""examples:
  # GG scale (and noise multiplier) for beta-DP-SGD
  {PROG} calibrate --epsilon 2 --delta 1e-5 -m "subsampled-gg beta=1.5 q=0.01" -c 1000
  # Gaussian noise multiplier sigma for DP-SGD
  {PROG} calibrate --epsilon 1 --delta 1e-5 -m "subsampled-gaussian q=0.004" -c 5000
  # GG solved in noise-multiplier units (scale = sqrt(2) sigma) instead of scale
  {PROG} calibrate --epsilon 3 --delta 1e-5 -m "subsampled-gg beta=3 sigma=? q=0.01" -c 1000
  # what is left of the budget after 10 Laplace releases
  {PROG} calibrate --epsilon 2 --delta 1e-5 -m "laplace scale=20" -c 10 \\
      -m "subsampled-gaussian q=0.01" -c 1000

solvable parameters: gaussian sigma, laplace scale, gg/ggnmax scale or sigma.
""")
    p.add_argument("--epsilon", type=_arg_float, required=True, help="target epsilon > 0")
    p.add_argument("--delta", type=_arg_float, required=True, help="target delta in (0, 1)")
    p.add_argument("--rtol", type=_arg_float, default=1e-3,
                   help="relative tolerance on the parameter (default 1e-3)")
    _add_composition_args(p)
    _add_common(p)
    p.set_defaults(func=commands["calibrate"])

    p = sub.add_parser("plan", formatter_class=_Formatter,
                       help="samples needed by the sampled accountant",
                       description="How many privacy-loss samples the sampled accountant "
                                   "needs: the floor below which no finite upper bound on "
                                   "epsilon(delta) is possible, and (with --target-width) an "
                                   "estimate for a target interval width from a pilot run.",
                       epilog=f"""examples:
  {PROG} plan --delta 1e-5 -m "subsampled-gaussian sigma=1 q=0.01" -c 1000
  {PROG} plan --delta 1e-3 -m "gg beta=1.5 sigma=1" -c 10 --target-width 0.2 --pilot-n 1e6
""")
    p.add_argument("--delta", type=_arg_float, nargs="+", metavar="DELTA",
                   help="the delta you will query")
    p.add_argument("--target-width", type=_arg_float, metavar="W",
                   help="width of the epsilon interval you want (runs a pilot)")
    p.add_argument("--pilot-n", type=_arg_int, default=10**6, metavar="N",
                   help="pilot sample size for --target-width (default 1e6)")
    p.add_argument("--predict-n", type=_arg_int, metavar="N",
                   help="predict the certified width at N draws per histogram (simulated "
                        "counts) and the sampling time")
    p.add_argument("--workers", type=_arg_int, metavar="W",
                   help="also give the expected time on W single-core workers")
    _add_composition_args(p, accountant=False)
    p.add_argument("--alpha", type=_arg_float, help="failure probability (default 1e-9)")
    p.add_argument("--bins", type=_arg_int,
                   help="histogram bins (default auto, as the sampled accountant: 4096 "
                        "sqrt(k) rounded up to a power of two in [32768, 4194304])")
    p.add_argument("--seed", type=_arg_int, help="pilot seed (default 0)")
    _add_common(p)
    p.set_defaults(func=commands["plan"])

    p = sub.add_parser("validate", formatter_class=_Formatter,
                       help="Monte Carlo check of an analytic privacy-loss law",
                       description="Sample the privacy loss of a built-in mechanism and test "
                                   "the samples against the exact law used by the analytic "
                                   "accountant (Kolmogorov-Smirnov on the histogram edges, "
                                   "both directions). Exits 1 if the law is rejected.",
                       epilog=f"""examples:
  {PROG} validate -m "subsampled-gaussian sigma=1 q=0.01" --n-samples 1e7
  {PROG} validate -m "gg beta=1.5 scale=2" --json
""")
    p.add_argument("-m", "--mechanism", action="append", metavar="SPEC", required=True,
                   help="the mechanism to check")
    p.add_argument("--n-samples", type=_arg_int, default=10**6, metavar="N",
                   help="draws per direction (default 1e6)")
    p.add_argument("--seed", type=_arg_int, default=0)
    p.add_argument("--bins", type=_arg_int, default=4096)
    p.add_argument("--level", type=_arg_float, default=1e-3,
                   help="significance level of the test (default 1e-3)")
    _add_common(p)
    p.set_defaults(func=commands["validate"])

    p = sub.add_parser("curve", formatter_class=_Formatter,
                       help="delta(epsilon) with its certified band on a grid",
                       description="The privacy curve delta(epsilon) with certified lower and "
                                   "upper bounds on a grid of epsilons, as CSV (default) or "
                                   "JSON, optionally plotted.",
                       epilog=f"""examples:
  {PROG} curve -m "subsampled-gaussian sigma=1 q=0.01" -c 1000 --eps-max 4 > curve.csv
  {PROG} curve --config job.toml --epsilons 0.5 1 2 --json
  {PROG} curve -m "gg beta=1.5 sigma=3" -c 20 --output curve.json --plot curve.png
""")
    p.add_argument("--eps-min", type=_arg_float, default=0.0, help="grid start (default 0)")
    p.add_argument("--eps-max", type=_arg_float, default=5.0, help="grid end (default 5)")
    p.add_argument("--points", type=_arg_int, default=51, help="grid points (default 51)")
    p.add_argument("--epsilons", type=_arg_float, nargs="+", metavar="EPS",
                   help="explicit grid instead of --eps-min/--eps-max/--points")
    p.add_argument("--output", "-o", metavar="FILE",
                   help="write to FILE (.csv or .json; default: stdout)")
    p.add_argument("--plot", metavar="FILE.png", help="also plot the curve and its band")
    _add_composition_args(p)
    _add_common(p)
    p.set_defaults(func=commands["curve"])

    if "tradeoff" in commands and "audit" in commands:
        from .commands_tradeoff import add_tradeoff_parsers
        add_tradeoff_parsers(sub, commands, _Formatter, PROG, _add_composition_args,
                             _add_common, _arg_float)
    if "check-claim" in commands:
        add_claims_parser(sub, commands, _Formatter, PROG, _add_common, _arg_float, _arg_int)
    return parser
