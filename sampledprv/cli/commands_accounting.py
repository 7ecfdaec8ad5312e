"""The accounting subcommands: ``epsilon``, ``delta`` and ``curve``."""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
import sys
from typing import List

from .argv_checks import check_output_path
from .composition import Setup, accountant_description, build_setup, composed, \
    make_accountant_factory
from .errors import EXIT_OK, UsageError
from .output import (certification_lines, composition_json, composition_lines, emit,
                     format_triplets, text_table, interval_json, jsonable)

__all__ = ["cmd_epsilon", "cmd_delta", "cmd_curve"]


def _query(args: argparse.Namespace, s, *, command: str, given: str, values: list,
           ask: str, curve: str, notes: list[str]) -> int:
    """Shared body of ``epsilon`` and ``delta``: one interval per queried value.

    ``command`` names the query (``"epsilon"`` or ``"delta"``), ``given`` the argument it
    takes, ``ask`` the accountant method; ``notes`` are extra lines for infinite uppers."""
    acc = composed(s, make_accountant_factory(s))
    ivs = [(x, getattr(acc, ask)(**{given: x})) for x in values]
    cells = format_triplets([[iv.lower, iv.estimate, iv.upper] for _, iv in ivs])
    rows = [[f"{x:g}", *c] for (x, _), c in zip(ivs, cells)]
    text = composition_lines(s, acc) + [""] + text_table(
        [given, f"{command} lower", "estimate", "upper"], rows) + [""]
    text.append(certification_lines(ivs[0][1], curve))
    if any(not math.isfinite(iv.upper) for _, iv in ivs):
        text.extend(notes)
    payload = {"command": command, "accountant": accountant_description(acc, s),
               "composition": composition_json(s),
               "results": [{given: x, **interval_json(iv)} for x, iv in ivs]}
    emit(args, payload, text)
    return EXIT_OK


def cmd_epsilon(args: argparse.Namespace) -> int:
    s = build_setup(args)
    deltas = args.delta or s.deltas
    if not deltas:
        raise UsageError("give --delta (e.g. --delta 1e-5), or delta = 1e-5 in the config")
    return _query(args, s, command="epsilon", given="delta", values=deltas, ask="epsilon",
                  curve="epsilon(delta)",
                  notes=["note: upper = inf means no finite bound could be certified at that "
                         "delta (sampled: too few samples -- see 'sampledprv plan')"])


def cmd_delta(args: argparse.Namespace) -> int:
    s = build_setup(args)
    epss = args.epsilon or s.epsilons
    if not epss:
        raise UsageError("give --epsilon (e.g. --epsilon 2), or epsilon = 2 in the config")
    return _query(args, s, command="delta", given="epsilon", values=epss, ask="delta",
                  curve="delta(epsilon)", notes=[])


def _eps_grid(args: argparse.Namespace, s: Setup) -> List[float]:
    if args.epsilons:
        grid = list(args.epsilons)
    elif s.epsilons and len(s.epsilons) > 1:
        grid = list(s.epsilons)
    else:
        if args.points < 2:
            raise UsageError(f"--points must be >= 2, got {args.points}")
        if not 0 <= args.eps_min < args.eps_max:
            raise UsageError(f"need 0 <= --eps-min < --eps-max, got {args.eps_min} and "
                             f"{args.eps_max}")
        step = (args.eps_max - args.eps_min) / (args.points - 1)
        # 12 significant digits: 0.1 * 3 is queried (and written) as 0.3, not
        # 0.30000000000000004; the grid is what the output says it is
        grid = [float(f"{args.eps_min + i * step:.12g}") for i in range(args.points)]
    if any(not (e >= 0 and math.isfinite(e)) for e in grid):
        raise UsageError("epsilon grid values must be finite and >= 0")
    return grid


def cmd_curve(args: argparse.Namespace) -> int:
    from .. import plotting

    s = build_setup(args)
    grid = _eps_grid(args, s)
    check_output_path("--output", args.output)      # before the (long) computation
    check_output_path("--plot", args.plot)
    acc = composed(s, make_accountant_factory(s))
    curve = plotting.privacy_curve(acc, grid)
    out = args.output
    fmt = "json" if args.json or (out and out.lower().endswith(".json")) else "csv"
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["epsilon", "delta_lower", "delta_estimate", "delta_upper"])
        for row in zip(curve.epsilons, curve.lower, curve.estimate, curve.upper):
            w.writerow([repr(float(x)) for x in row])
        body = buf.getvalue()
    else:
        body = json.dumps(jsonable({
            "command": "curve", "accountant": accountant_description(acc, s),
            "composition": composition_json(s), "certification": curve.certification,
            "confidence": curve.confidence, "method": curve.method,
            "epsilon": curve.epsilons, "delta_lower": curve.lower,
            "delta_estimate": curve.estimate, "delta_upper": curve.upper}),
            indent=2, allow_nan=False) + "\n"
    if out and out != "-":
        with open(out, "w", encoding="utf-8") as f:
            f.write(body)
        print(f"wrote {len(grid)} points to {out} ({fmt})", file=sys.stderr)
    else:
        sys.stdout.write(body)
    if args.plot:
        try:
            import matplotlib
        except ImportError:
            raise UsageError("--plot needs matplotlib: pip install 'sampledprv[plot]'") from None
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        title = " + ".join(f"{c:,} x {spec.text}" for spec, c in s.mechanisms)
        ax = plotting.plot_privacy_curve(curve, title=title if len(title) < 90 else None)
        ax.figure.savefig(args.plot, dpi=120, bbox_inches="tight")
        plt.close(ax.figure)
        print(f"wrote plot to {args.plot}", file=sys.stderr)
    return EXIT_OK
