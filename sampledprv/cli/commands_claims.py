"""The ``check-claim`` and ``group`` subcommands.

``check-claim``: check a stated privacy guarantee against the mechanism; exit code 0 when
no point is refuted, 1 when the claim is refuted (like ``validate`` when the law is
rejected), 2 on bad input.  ``group``: the certified epsilon of groups of records (users
holding several records) for a composition of one mechanism.
"""

from __future__ import annotations

import argparse
import json
import math
from typing import Any, Dict

from ..core.text_rows import text_rows
from .errors import EXIT_INTERNAL, EXIT_OK, UsageError
from .mechanism_strings import parse_mechanism
from .output import emit, text_table

__all__ = ["cmd_check_claim", "cmd_group", "add_claims_parser", "load_rdp_file"]


def _claims() -> Any:
    """The claim checker and group tools (imported when a command runs, so that the
    command line starts without the accountants)."""
    from .. import claims
    return claims


def load_rdp_file(path: str) -> Dict[float, float]:
    """A claimed RDP curve from ``path``: JSON ``{"2": 0.5, ...}`` (or a list of
    ``[order, epsilon]`` pairs), or text with one ``order epsilon`` pair per line
    (``#`` comments, commas or blanks between the two numbers)."""
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as exc:
        raise UsageError(f"--rdp-file {path}: {exc.strerror or exc}") from None
    out: Dict[float, float] = {}
    try:
        data: Any = json.loads(text)
    except ValueError:
        data = None
    try:
        if isinstance(data, dict):
            out = {float(k): float(v) for k, v in data.items()}
        elif isinstance(data, list):
            out = {float(a): float(e) for a, e in data}
        else:
            for _, _, parts in text_rows(text, f"--rdp-file {path}", "'order epsilon'",
                                         error=UsageError):
                out[float(parts[0])] = float(parts[1])
    except (TypeError, ValueError) as exc:
        if isinstance(exc, UsageError):
            raise
        raise UsageError(f"--rdp-file {path}: expected JSON {{order: epsilon}}, a list of "
                         "[order, epsilon] pairs, or lines 'order epsilon'") from None
    if not out:
        raise UsageError(f"--rdp-file {path} holds no (order, epsilon) pair")
    return out


def cmd_check_claim(args: argparse.Namespace) -> int:
    check_claim = _claims().check_claim
    spec = parse_mechanism(args.mechanism).build()
    rdp = load_rdp_file(args.rdp_file) if args.rdp_file else None
    if rdp is None and args.zcdp is None and args.epsilon is None:
        raise UsageError("no claim given: add --zcdp RHO, --rdp-file FILE or --epsilon EPS "
                         "[--delta DELTA]")
    try:
        res = check_claim(spec, rdp=rdp, zcdp=args.zcdp, epsilon=args.epsilon,
                          delta=args.delta, orders=args.orders, alpha=args.alpha,
                          method=args.method, n_samples=args.n_samples, seed=args.seed,
                          neighbouring=args.neighbouring)
    except ValueError as exc:
        raise UsageError(str(exc)) from None

    def f(x: float) -> str:
        return f"{x:.6g}" if math.isfinite(x) else "inf"

    rows = [[f"D_{p.order:g}" if p.quantity == "renyi" else f"delta({p.epsilon:g})",
             f(p.claimed), f(p.lower), f(p.estimate), f(p.upper), p.direction, p.verdict]
            for p in res.points]
    text = [f"mechanism: {res.mechanism}", f"claim: {res.claim}", ""]
    text += text_table(["point", "claimed", "lower", "estimate", "upper", "direction",
                        "verdict"], rows)
    text += ["", f"certification: {res.certification}, confidence {res.confidence:g}"
             + (f", {res.n_samples:,} draws per direction" if res.n_samples else ""),
             f"verdict: {res.verdict}"]
    emit(args, {"command": "check-claim", **res.as_dict()}, text)
    return EXIT_INTERNAL if res.refuted else EXIT_OK


def cmd_group(args: argparse.Namespace) -> int:
    claims = _claims()
    spec = parse_mechanism(args.mechanism).build()
    sizes = sorted(set(args.size))
    if any(g < 1 for g in sizes):
        raise UsageError(f"--size values are numbers of records (integers >= 1), got {sizes}")
    if args.count < 1:
        raise UsageError(f"--count must be a positive integer, got {args.count}")
    rows, results = [], []
    record_acc = None
    for g in sizes:
        try:
            grp = claims.Group(spec, g)
            iv = claims.Accountant(eps_error=args.eps_error).compose(
                grp.spec, args.count).epsilon(args.delta)
            lo, up, method = iv.lower, iv.upper, grp.method
        except ValueError as exc:
            if not args.from_curve:
                raise UsageError(f"{exc} (or add --from-curve)") from None
            if record_acc is None:
                record_acc = claims.Accountant(eps_error=args.eps_error).compose(spec,
                                                                                 args.count)
            ge = claims.group_epsilon(record_acc, g, args.delta)
            lo, up, method = math.nan, ge.epsilon, "bound: " + ge.method
        rows.append([str(g), "-" if math.isnan(lo) else f"{lo:.5g}", f"{up:.5g}", method])
        results.append({"size": g, "lower": None if math.isnan(lo) else lo, "upper": up,
                        "method": method})
    text = [f"mechanism: {args.mechanism} x {args.count:,}", f"delta: {args.delta:g}", ""]
    text += text_table(["size", "epsilon lower", "epsilon upper", "how"], rows)
    emit(args, {"command": "group", "mechanism": args.mechanism, "count": args.count,
                "delta": args.delta, "results": results}, text)
    return EXIT_OK


def add_claims_parser(sub: Any, commands: Any, formatter: Any, prog: str, add_common: Any,
                      arg_float: Any, arg_int: Any) -> None:
    """Register ``check-claim`` and ``group`` on the subparsers ``sub``."""
    p = sub.add_parser("check-claim", formatter_class=formatter,
                       help="check a stated privacy guarantee (RDP, zCDP, DP) against the "
                            "mechanism",
                       description="Certified lower bounds on the mechanism's Renyi "
                                   "divergences and delta(epsilon), compared with a claim: "
                                   "exact for built-in mechanisms and finite pairs, sampled "
                                   "with confidence 1 - alpha with --method sampled. Exits 1 "
                                   "when the claim is refuted.",
                       epilog=f"""claim files (--rdp-file): JSON {{"2": 1.0, "3": 1.5}} or lines 'order epsilon'.

examples:
  # permute-and-flip at epsilon = 2 (two candidates) against rho = eps^2/8 zCDP
  {prog} check-claim -m "finite-pair p=0.5:0.5 q=0.9323323584:0.0676676416" --zcdp 0.5
  {prog} check-claim -m "gaussian sigma=2" --rdp-file claim.txt
  {prog} check-claim -m "laplace scale=1" --epsilon 1 --method sampled --n-samples 1e6
""")
    p.add_argument("-m", "--mechanism", required=True, metavar="SPEC",
                   help="the mechanism (one run)")
    p.add_argument("--zcdp", type=arg_float, metavar="RHO", help="claimed rho-zCDP")
    p.add_argument("--rdp-file", metavar="FILE", help="claimed RDP curve (order, epsilon)")
    p.add_argument("--epsilon", type=arg_float, nargs="+", metavar="EPS",
                   help="claimed (epsilon, delta)-DP points")
    p.add_argument("--delta", type=arg_float, nargs="+", metavar="DELTA",
                   help="their deltas (default 0: pure DP)")
    p.add_argument("--orders", type=arg_float, nargs="+", metavar="A",
                   help="orders at which --zcdp is checked (default 1.25 ... 64)")
    p.add_argument("--method", choices=("auto", "exact", "sampled"), default="auto",
                   help="exact (built-in mechanisms) or sampled (default auto: exact)")
    p.add_argument("--n-samples", type=arg_int, default=10**6, metavar="N",
                   help="draws per direction for --method sampled (default 1e6)")
    p.add_argument("--alpha", type=arg_float, default=0.05,
                   help="failure probability of the sampled bounds (default 0.05)")
    p.add_argument("--seed", type=arg_int, default=0)
    p.add_argument("--neighbouring", choices=("add_remove", "substitute"),
                   default="add_remove", help="neighbouring relation (default add_remove)")
    add_common(p)
    p.set_defaults(func=commands["check-claim"])
    if "group" not in commands:
        return
    p = sub.add_parser("group", formatter_class=formatter,
                       help="certified epsilon of groups of records (users with several "
                            "records)",
                       description="Epsilon of a group of SIZE records after COUNT runs of the "
                                   "mechanism: the exact group pair for Poisson-subsampled "
                                   "Gaussian steps (mixture of Gaussians) and additive noise "
                                   "(sensitivity times SIZE), group privacy bounds for pure/"
                                   "approximate DP, and with --from-curve a bound from the "
                                   "record-level curve for any mechanism.",
                       epilog=f"""examples:
  {prog} group -m "subsampled-gaussian sigma=2 q=0.01" -c 1000 --size 1 2 4 16
  {prog} group -m "subsampled-laplace scale=2 q=0.05" -c 100 --size 4 --from-curve
""")
    p.add_argument("-m", "--mechanism", required=True, metavar="SPEC",
                   help="the record-level mechanism (one run)")
    p.add_argument("-c", "--count", type=arg_int, default=1, help="runs (default 1)")
    p.add_argument("--size", type=arg_int, nargs="+", required=True, metavar="G",
                   help="group sizes (records per user)")
    p.add_argument("--delta", type=arg_float, default=1e-5, help="delta (default 1e-5)")
    p.add_argument("--eps-error", type=arg_float, default=0.01,
                   help="analytic accountant's epsilon error (default 0.01)")
    p.add_argument("--from-curve", action="store_true",
                   help="for mechanisms without an exact group pair: group privacy of the "
                        "record-level curve (a valid, usually loose, upper bound)")
    add_common(p)
    p.set_defaults(func=commands["group"])
