"""Rendering results: strict JSON, aligned text tables and the certification lines."""

from __future__ import annotations

import argparse
import json
import math
from typing import Any, Dict, List, Sequence

from .composition import Setup, accountant_description
from ..core.interval import confidence_label
from .mechanism_strings import format_mechanism

__all__ = ["jsonable", "interval_json", "format_triplets", "format_triplet",
           "certification_lines", "composition_lines", "text_table", "composition_json",
           "emit"]

_NONFINITE = "_nonfinite"   #: suffix of the sibling key that says what a null stands for


def _nonfinite_name(x: float) -> str:
    return "nan" if math.isnan(x) else ("+inf" if x > 0 else "-inf")


def jsonable(x: Any) -> Any:
    """Strict-JSON version of ``x`` (numpy scalars/arrays become numbers/lists).

    Non-finite floats are encoded JSON-safely and the same way everywhere: the value is
    ``null`` and the enclosing object gets a sibling key ``"<key>_nonfinite"`` saying
    what the null stands for: ``"+inf"``, ``"-inf"`` or ``"nan"`` for a scalar field,
    ``{"<index>": "+inf", ...}`` for a list field.  For example an upper bound that
    could not be certified is ``"upper": null, "upper_nonfinite": "+inf"``.
    """
    try:
        import numpy as np
    except ImportError:  # pragma: no cover
        np = None  # type: ignore[assignment]
    if np is not None and isinstance(x, np.ndarray):
        x = x.tolist()
    if np is not None and isinstance(x, np.generic):
        x = x.item()
    if isinstance(x, dict):
        out: Dict[str, Any] = {}
        for k, v in x.items():
            k = str(k)
            if np is not None and isinstance(v, (np.ndarray, np.generic)):
                v = v.tolist() if isinstance(v, np.ndarray) else v.item()
            if isinstance(v, float) and not math.isfinite(v):
                out[k] = None
                out[k + _NONFINITE] = _nonfinite_name(v)
            elif isinstance(v, (list, tuple)) and any(
                    isinstance(e, float) and not math.isfinite(e) for e in v):
                out[k] = jsonable(list(v))
                out[k + _NONFINITE] = {str(i): _nonfinite_name(e) for i, e in enumerate(v)
                                         if isinstance(e, float) and not math.isfinite(e)}
            else:
                out[k] = jsonable(v)
        return out
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    if isinstance(x, bool) or x is None or isinstance(x, (int, str)):
        return x
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    return str(x)


def interval_json(iv: Any) -> Dict[str, Any]:
    """An :class:`~sampledprv.Interval` as a JSON object (non-finite bounds as in :func:`jsonable`)."""
    return jsonable({"lower": iv.lower, "estimate": iv.estimate, "upper": iv.upper,
                     "certification": iv.certification, "confidence": iv.confidence,
                     "method": iv.method, "details": dict(iv.details)})


def _needed_digits(vals: Sequence[float], sci: bool) -> int:
    """Significant digits (``sci``) or decimals (fixed) that show lower/estimate/upper apart."""
    fin = [v for v in vals if math.isfinite(v)]
    w = max(fin) - min(fin) if fin else 0.0
    if sci:
        big = max((abs(v) for v in fin), default=0.0)
        if big == 0.0:
            return 3
        return 4 if w <= 0 else max(3, min(12, 2 + math.floor(math.log10(big / w))))
    return 4 if w <= 0 else max(2, min(12, 2 - math.floor(math.log10(w))))


def format_triplets(triplets: Sequence[Sequence[float]]) -> List[List[str]]:
    """Format rows of (lower, estimate, upper) in one style for the whole table.

    Scientific notation when some nonzero finite value is below ``1e-3`` (small deltas),
    fixed-point otherwise; the digits are the most any row needs to show its three
    values apart, so a column never mixes formats or precisions.
    """
    fin = [v for t in triplets for v in t if math.isfinite(v)]
    sci = any(0.0 < abs(v) < 1e-3 for v in fin)
    digits = max((_needed_digits(t, sci) for t in triplets), default=4)
    if sci:
        fmt = lambda v: f"{v:.{digits - 1}e}"  # noqa: E731
    else:
        fmt = lambda v: f"{v:.{digits}f}"  # noqa: E731
    return [[fmt(v) if math.isfinite(v) else str(v) for v in t] for t in triplets]


def format_triplet(vals: Sequence[float]) -> List[str]:
    """Format one (lower, estimate, upper) with enough digits to show their differences."""
    return format_triplets([vals])[0]


def certification_lines(iv: Any, what: str) -> str:
    """What the interval's certificate says, and the method (one or two lines)."""
    if iv.certification == "deterministic":
        how = (f"certified: deterministic -- the true {what} lies in [lower, upper] with "
               "certainty (floating-point error included)")
    else:
        a = 1.0 - iv.confidence
        how = (f"certified: with probability >= {confidence_label(iv.confidence)} over the "
               f"sampling -- the true {what} lies in [lower, upper] unless the "
               f"{a:.2g}-probable sampling failure happened")
    return how + (f"\nmethod: {iv.method}" if iv.method else "")


def composition_lines(s: Setup, acc: Any) -> List[str]:
    """The accountant's settings and the composed mechanisms, for the text output."""
    d = accountant_description(acc, s)
    if d["type"] == "analytic":
        head = (f"analytic accountant (eps_error={d['eps_error']:g}, "
                f"delta_error={d['delta_error']:g})")
    elif d["type"] == "vector-gg":
        head = ("vector GG accountant (upper: Renyi DP over the l_beta ball; lower: PLD of "
                f"concrete vectors; eps_error={d['eps_error']:g}, "
                f"delta_error={d['delta_error']:g})")
    elif d["type"] == "shuffle":
        head = ("shuffle accountant (lower: attained pair of Chua et al. 2024; upper: "
                f"{'deterministic batches' if d['upper'] == 'deterministic' else 'none'}; "
                f"eps_error={d['eps_error']:g})")
    else:
        n = d["n_samples"]
        n = (f"{n:,}" if isinstance(n, int) else
             f"remove {n['remove']:,} / add {n['add']:,}")
        head = (f"sampled accountant (n_samples={n}, alpha={d['alpha']:g}, "
                f"certify={d['certify']}, seed={d['seed']})")
    if d.get("neighbouring", "add_remove") != "add_remove":
        head += f", {d['neighbouring']} neighbours"
    lines = [f"composition, {head}:"]
    for spec, count in s.mechanisms:
        lines.append(f"  {count:>8,} x {spec.text}")
    return lines


def text_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> List[str]:
    """Right-aligned text table."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    out = ["  " + "  ".join(h.rjust(w) for h, w in zip(header, widths))]
    for r in rows:
        out.append("  " + "  ".join(c.rjust(w) for c, w in zip(r, widths)))
    return out


def composition_json(s: Setup) -> List[Dict[str, Any]]:
    """The composition as JSON: mechanism (normalized), input string and count."""
    return [{"mechanism": format_mechanism(spec.build()) if spec.free is None else spec.text,
             "input": spec.text, "count": c} for spec, c in s.mechanisms]


def emit(args: argparse.Namespace, payload: Dict[str, Any], text: List[str]) -> None:
    """Print the JSON payload (``--json``) or the text lines."""
    if args.json:
        print(json.dumps(jsonable(payload), indent=2, allow_nan=False))
    else:
        print("\n".join(text))
