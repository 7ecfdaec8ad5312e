"""The trade-off and audit subcommands: ``tradeoff`` and ``audit``."""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any, List, Optional

from .composition import accountant_description, build_setup, composed, \
    make_accountant_factory
from ..core.auditing import Audit, load_scores
from .errors import EXIT_INTERNAL, EXIT_OK, PROG, UsageError
from .output import (certification_lines, composition_json, composition_lines, emit,
                     format_triplets, interval_json, text_table)

__all__ = ["cmd_tradeoff", "cmd_audit", "add_tradeoff_parsers"]

DEFAULT_FPRS = (1e-3, 1e-2, 1e-1)


def _check_fprs(fprs: List[float]) -> List[float]:
    for x in fprs:
        if not (0.0 <= x <= 1.0):
            raise UsageError(f"--fpr values are false-positive rates in [0, 1], got {x:g}")
    return list(fprs)


def _save_plot(path: str, curve: Any, audit: Any = None, title: Optional[str] = None) -> None:
    try:
        import matplotlib
    except ImportError:
        raise UsageError("--plot needs matplotlib: pip install 'sampledprv[plot]'") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..plotting import plot_tradeoff

    ax = plot_tradeoff(curve, audit, title=title)
    ax.figure.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(ax.figure)
    print(f"wrote plot to {path}", file=sys.stderr)


def cmd_tradeoff(args: argparse.Namespace) -> int:
    s = build_setup(args)
    fprs = _check_fprs(args.fpr or list(DEFAULT_FPRS))
    acc = composed(s, make_accountant_factory(s))
    try:
        ivs = acc.tradeoff(fprs, direction=args.direction)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    cells = format_triplets([[iv.lower, iv.estimate, iv.upper] for iv in ivs])
    rows = [[f"{x:g}", *c] for x, c in zip(fprs, cells)]
    which = "worst case over both directions" if args.direction is None else \
        f"direction {args.direction}"
    text = composition_lines(s, acc) + ["", f"best attack true-positive rate ({which}):"]
    text += text_table(["fpr", "tpr lower", "estimate", "upper"], rows) + [""]
    text.append(certification_lines(ivs[0], "true-positive rate"))
    payload = {"command": "tradeoff", "accountant": accountant_description(acc, s),
               "composition": composition_json(s), "direction": args.direction,
               "results": [{"fpr": x, **interval_json(iv)} for x, iv in zip(fprs, ivs)]}
    if args.gdp:
        b = acc.gdp_mu(fpr_min=args.fpr_min)
        text.append(f"mu-GDP over fpr in [{args.fpr_min:g}, 1 - {args.fpr_min:g}]: "
                    f"mu in [{b.lower:.5g}, {b.upper:.5g}]"
                    + (f", {b.fit_note(5)}" if b.fit_note(5) else ""))
        payload["gdp_mu"] = {"lower": b.lower, "upper": b.upper, "best_fit": b.best_fit,
                             "fpr_range": list(b.fpr_range), "confidence": b.confidence}
    emit(args, payload, text)
    if args.plot:
        _save_plot(args.plot, acc.tradeoff_curve(direction=args.direction))
    return EXIT_OK


def cmd_audit(args: argparse.Namespace) -> int:

    try:
        s_in, s_out = load_scores(args.scores)
    except OSError as exc:
        raise UsageError(f"--scores {args.scores}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    acc, s = None, None
    if args.mechanism or args.config:
        s = build_setup(args)
        acc = composed(s, make_accountant_factory(s))
    curve = None
    if acc is not None and args.plot:
        curve = acc.tradeoff_curve(direction=args.direction)
    try:
        res = Audit(s_in, s_out, acc, delta=args.delta, confidence=args.confidence,
                    mode=args.mode, direction=args.direction, curve=curve).run()
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    text = [] if s is None else composition_lines(s, acc) + [""]
    text.append(f"audit ({res.mode}): {s_in.size} in-scores, {s_out.size} out-scores, "
                f"confidence {res.confidence:g} for all bounds together")
    text.append(f"empirical epsilon lower bound at delta={res.delta:g}: "
                f"{res.epsilon_lower:.4g}")
    if acc is not None:
        text.append(f"certified epsilon upper end:                 {res.epsilon_upper:.4g}")
    if res.points:
        rows = [[f"{p.threshold:.4g}", f"{p.fpr:.4g}", f"{p.fpr_upper:.4g}", f"{p.tpr:.4g}",
                 f"{p.tpr_lower:.4g}",
                 f"{p.curve_upper:.4g}" if math.isfinite(p.curve_upper) else "-",
                 "ABOVE" if p.violates else ""] for p in res.points]
        text += [""] + text_table(["threshold", "fpr", "fpr upper", "tpr", "tpr lower",
                                   "certified tpr upper", ""], rows)
    text += ["", f"verdict: {res.verdict}"]
    payload = {"command": "audit", "scores": args.scores, **res.as_dict()}
    if s is not None:
        payload["accountant"] = accountant_description(acc, s)
        payload["composition"] = composition_json(s)
    emit(args, payload, text)
    if args.plot:
        if curve is None:
            raise UsageError("--plot draws the audit on the certified curve: give the "
                             "composition (-m/-c or --config)")
        _save_plot(args.plot, curve, res)
    if res.consistent is False:
        print(f"{PROG} audit: {res.verdict} (the scores contradict the certified curve at "
              f"confidence {res.confidence:g})", file=sys.stderr)
        return EXIT_INTERNAL
    return EXIT_OK


def add_tradeoff_parsers(sub: Any, commands: Any, formatter: Any, prog: str,
                         add_composition: Any, add_common: Any, arg_float: Any) -> None:
    """Register ``tradeoff`` and ``audit`` on the subparsers ``sub``."""
    p = sub.add_parser("tradeoff", formatter_class=formatter,
                       help="certified trade-off curve: best attack TPR at given FPRs",
                       description="Certified intervals on the best true-positive rate of a "
                                   "membership attack at given false-positive rates (f-DP "
                                   "trade-off curve), from the certified privacy curve over "
                                   "all epsilon, negative included.",
                       epilog=f"""examples:
  {prog} tradeoff -m "subsampled-gaussian sigma=0.8 q=4e-3" -c 10000 --fpr 1e-3 1e-2 1e-1
  {prog} tradeoff -m "gaussian sigma=1" --fpr 0.01 --gdp --json
""")
    p.add_argument("--fpr", type=arg_float, nargs="+", metavar="FPR",
                   help="false-positive rates in [0, 1] (default 1e-3 1e-2 1e-1)")
    p.add_argument("--direction", choices=("remove", "add"),
                   help="one direction (remove: the membership test); default: worst case")
    p.add_argument("--gdp", action="store_true", help="also the certified mu-GDP bracket")
    p.add_argument("--fpr-min", type=arg_float, default=1e-6,
                   help="--gdp: the bracket holds for fpr in [fpr-min, 1 - fpr-min]")
    p.add_argument("--plot", metavar="FILE.png", help="also plot the certified band")
    add_composition(p)
    add_common(p)
    p.set_defaults(func=commands["tradeoff"])

    p = sub.add_parser("audit", formatter_class=formatter,
                       help="audit canary scores against the certified trade-off curve",
                       description="Empirical epsilon lower bound from canary scores "
                                   "(Clopper-Pearson bounds on the attack's rates), and a "
                                   "verdict: are the attack's points below the accountant's "
                                   "certified trade-off curve?",
                       epilog=f"""score files: two columns 'score member' (member 1 = in, 0 = out), or JSON
{{"in": [...], "out": [...]}}; higher scores mean "more likely a member" (e.g. minus the loss).

examples:
  {prog} audit --scores scores.txt -m "subsampled-gaussian sigma=1 q=0.01" -c 1000
  {prog} audit --scores scores.json --mode one-run -m "gaussian sigma=2" --json
""")
    p.add_argument("--scores", required=True, metavar="FILE",
                   help="canary scores (two columns or JSON)")
    p.add_argument("--delta", type=arg_float, default=1e-5,
                   help="delta of the epsilon bounds (default 1e-5)")
    p.add_argument("--confidence", type=arg_float, default=0.95,
                   help="confidence of all bounds together (default 0.95)")
    p.add_argument("--mode", choices=("runs", "one-run"), default="runs",
                   help="runs: independent in/out scores (default); one-run: canaries "
                        "included with probability 1/2 in one training run")
    p.add_argument("--direction", choices=("remove", "add"),
                   help="curve of the verdict (default: worst case over directions)")
    p.add_argument("--plot", metavar="FILE.png", help="plot the audit on the certified band")
    add_composition(p)
    add_common(p)
    p.set_defaults(func=commands["audit"])
