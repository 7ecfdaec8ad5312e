"""Rendering results: strict JSON, aligned text tables and the certification lines."""

from __future__ import annotations

import argparse
import json
import math
from typing import Any, Dict, List, Sequence

from .composition import Setup, accountant_description
from .mechanism_strings import format_mechanism

__all__ = ["jsonable", "interval_json"]


def jsonable(x: Any) -> Any:
    """Strict-JSON version of ``x``: numpy scalars/arrays become Python numbers/lists,
    tuples lists, and non-finite floats the strings ``"inf"``, ``"-inf"``, ``"nan"``."""
    try:
        import numpy as np
    except ImportError:  # pragma: no cover
        np = None  # type: ignore[assignment]
    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    if np is not None and isinstance(x, np.ndarray):
        return [jsonable(v) for v in x.tolist()]
    if np is not None and isinstance(x, np.generic):
        x = x.item()
    if isinstance(x, bool) or x is None or isinstance(x, (int, str)):
        return x
    if isinstance(x, float):
        if math.isfinite(x):
            return x
        return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")
    return str(x)


def interval_json(iv: Any) -> Dict[str, Any]:
    return jsonable({"lower": iv.lower, "estimate": iv.estimate, "upper": iv.upper,
                     "certification": iv.certification, "confidence": iv.confidence,
                     "method": iv.method, "details": dict(iv.details)})


def _fmt_triplet(vals: Sequence[float]) -> List[str]:
    """Format lower/estimate/upper with enough digits to show their differences."""
    fin = [v for v in vals if math.isfinite(v)]
    if not fin:
        return [str(v) for v in vals]
    big = max(abs(v) for v in fin)
    w = max(fin) - min(fin)
    if 0 < big < 1e-3:      # small deltas: scientific with enough significant digits
        sig = 4 if w <= 0 else max(3, min(12, 2 + math.floor(math.log10(big / w))))
        return [f"{v:.{sig - 1}e}" if math.isfinite(v) else str(v) for v in vals]
    dec = 4 if w <= 0 else max(2, min(12, 2 - math.floor(math.log10(w))))
    return [f"{v:.{dec}f}" if math.isfinite(v) else str(v) for v in vals]


def _certified_line(iv: Any, what: str) -> str:
    if iv.certification == "deterministic":
        how = (f"certified: deterministic -- the true {what} lies in [lower, upper] with "
               "certainty (floating-point error included)")
    else:
        a = 1.0 - iv.confidence
        how = (f"certified: with probability >= 1 - {a:.3g} over the sampling -- the true "
               f"{what} lies in [lower, upper] unless the {a:.3g}-probable sampling failure "
               "happened")
    return how + (f"\nmethod: {iv.method}" if iv.method else "")


def _composition_lines(s: Setup, acc: Any) -> List[str]:
    d = accountant_description(acc, s)
    if d["type"] == "analytic":
        head = (f"analytic accountant (eps_error={d['eps_error']:g}, "
                f"delta_error={d['delta_error']:g})")
    else:
        head = (f"sampled accountant (n_samples={d['n_samples']:,}, alpha={d['alpha']:g}, "
                f"certify={d['certify']}, seed={d['seed']})")
    lines = [f"composition, {head}:"]
    for spec, count in s.mechanisms:
        lines.append(f"  {count:>8,} x {spec.text}")
    return lines


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> List[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    out = ["  " + "  ".join(h.rjust(w) for h, w in zip(header, widths))]
    for r in rows:
        out.append("  " + "  ".join(c.rjust(w) for c, w in zip(r, widths)))
    return out


def _composition_json(s: Setup) -> List[Dict[str, Any]]:
    return [{"mechanism": format_mechanism(spec.build()) if spec.free is None else spec.text,
             "input": spec.text, "count": c} for spec, c in s.mechanisms]


def _emit(args: argparse.Namespace, payload: Dict[str, Any], text: List[str]) -> None:
    if args.json:
        print(json.dumps(jsonable(payload), indent=2, allow_nan=False))
    else:
        print("\n".join(text))
