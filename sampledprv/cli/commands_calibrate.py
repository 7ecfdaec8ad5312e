"""The ``calibrate`` subcommand: the noise parameter that meets a target (epsilon, delta)."""

from __future__ import annotations

import argparse
import math
from typing import Any, Dict

from .composition import build_setup, make_accountant_factory
from .errors import EXIT_OK, UsageError
from .mechanism_strings import format_mechanism
from .output import certification_lines, composition_json, emit, format_triplet, interval_json

__all__ = ["cmd_calibrate"]


def cmd_calibrate(args: argparse.Namespace) -> int:
    import sampledprv as sp

    s = build_setup(args, allow_free=True)
    free = [(i, spec) for i, (spec, _) in enumerate(s.mechanisms) if spec.free is not None]
    if len(free) != 1:
        raise UsageError(
            "calibrate solves for one noise parameter: leave it out (or write it as =?) in "
            "exactly one --mechanism, e.g. --mechanism \"subsampled-gg beta=1.5 q=0.01\" "
            f"(scale solved) or \"subsampled-gaussian sigma=? q=0.01\"; found {len(free)}")
    idx, spec = free[0]
    factory = make_accountant_factory(s)
    count = s.mechanisms[idx][1]
    if len(s.mechanisms) > 1:   # calibrate the rest of a budget: fixed ones pre-composed
        template = factory()
        for j, (sp_j, c) in enumerate(s.mechanisms):
            if j != idx:
                template.compose(sp_j.build(), c)
        accountant: Any = template
    else:
        accountant = factory
    spec.build(1.0)  # validate the other parameters before searching
    cal = sp.calibrate(lambda x: spec.build(x), count=count, epsilon=args.epsilon,
                       delta=args.delta, accountant=accountant, rtol=args.rtol,
                       progress=getattr(args, "progress", None))
    iv = cal.interval
    name = spec.free
    value = cal.x
    extra: Dict[str, float] = {}
    if spec.kind in ("gg", "ggnmax"):
        scale = value if name == "scale" else math.sqrt(2.0) * value
        extra = {"scale": scale, "noise_multiplier": scale / math.sqrt(2.0)}
    mech_text = format_mechanism(cal.mechanism)
    text = [f"calibrated {name} = {value:.6g}   ({mech_text} x {count:,})"]
    if extra:
        text.append(f"  GG scale = {extra['scale']:.6g}, noise multiplier sigma = scale/sqrt(2)"
                    f" = {extra['noise_multiplier']:.6g}")
    if len(s.mechanisms) > 1:
        text.append("with the fixed part of the composition:")
        text += [f"  {c:>8,} x {sp_j.text}" for j, (sp_j, c) in enumerate(s.mechanisms)
                 if j != idx]
    text.append("")
    lo, est, up = format_triplet([iv.lower, iv.estimate, iv.upper])
    text += [f"target: ({args.epsilon:g}, {args.delta:g})-DP; at this {name}, epsilon({args.delta:g})"
             f" in [{lo}, {up}] (estimate {est}); slack {cal.slack:.2%} of the target",
             f"the smallest {name} whose certified upper bound meets the target "
             f"(relative tolerance {args.rtol:g}; {cal.evaluations} accountant evaluations)",
             certification_lines(iv, "epsilon(delta)")]
    payload = {"command": "calibrate", "parameter": name, "value": value, **extra,
               "mechanism": mech_text, "count": count, "target_epsilon": args.epsilon,
               "delta": args.delta, "evaluations": cal.evaluations, "slack": cal.slack,
               "composition": composition_json(s), "interval": interval_json(iv)}
    emit(args, payload, text)
    return EXIT_OK
