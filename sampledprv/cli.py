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
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
import os
import re
import sys
import textwrap
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

__all__ = ["main", "parse_mechanism", "format_mechanism", "load_config", "MechanismSpec",
           "KINDS", "EXIT_OK", "EXIT_INTERNAL", "EXIT_USAGE", "EXIT_INTERRUPTED"]

EXIT_OK, EXIT_INTERNAL, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130

PROG = "sampledprv"


class UsageError(ValueError):
    """Bad input to the command line (exit code 2)."""


# ---------------------------------------------------------------------------------------
# mechanism strings
# ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Kind:
    name: str
    required: Tuple[Tuple[str, ...], ...]   # each entry: alternatives, exactly one needed
    optional: Tuple[str, ...]
    free: Tuple[str, ...]                   # parameters calibrate may solve for
    example: str
    help: str


KINDS: Dict[str, _Kind] = {k.name: k for k in (
    _Kind("gaussian", (("sigma",),), ("sensitivity",), ("sigma",),
          "gaussian sigma=1", "Gaussian noise N(0, sigma^2), L2 sensitivity (default 1)"),
    _Kind("laplace", (("scale",),), ("sensitivity",), ("scale",),
          "laplace scale=2", "Laplace noise with scale b, L1 sensitivity (default 1)"),
    _Kind("gg", (("beta",), ("scale", "sigma")), ("sensitivity", "dimension"),
          ("scale", "sigma"), "gg beta=1.5 sigma=1",
          "Generalized Gaussian, density ~ exp(-|x/scale|^beta), beta >= 1; "
          "sigma= is a noise multiplier (scale = sqrt(2) sigma)"),
    _Kind("randomized-response", (("p", "epsilon"),), (), (),
          "randomized-response p=0.75",
          "binary randomized response, true bit with probability p (or epsilon=)"),
    _Kind("pure-dp", (("epsilon",),), (), (), "pure-dp epsilon=0.5",
          "any epsilon-DP mechanism (worst case)"),
    _Kind("approx-dp", (("epsilon",), ("delta",)), (), (), "approx-dp epsilon=0.5 delta=1e-6",
          "any (epsilon, delta)-DP mechanism (worst case)"),
    _Kind("ggnmax", (("beta",), ("scale", "sigma")), (), ("scale", "sigma"),
          "ggnmax beta=2 scale=5", "noisy argmax with GG(beta, scale) noise on vote counts"),
)}

_ALIASES = {"gauss": "gaussian", "normal": "gaussian", "lap": "laplace",
            "generalized-gaussian": "gg", "generalised-gaussian": "gg", "gen-gaussian": "gg",
            "rr": "randomized-response", "randomised-response": "randomized-response",
            "puredp": "pure-dp", "pure": "pure-dp", "approxdp": "approx-dp",
            "approximate-dp": "approx-dp", "gnmax": "ggnmax"}
_PARAM_ALIASES = {"b": "scale", "eps": "epsilon", "noise-multiplier": "sigma",
                  "noise_multiplier": "sigma", "s": "scale", "rate": "q", "d": "dimension"}
_SUB_PREFIXES = ("subsampled-", "poisson-subsampled-", "sub-")
FREE = "?"


def _kinds_help() -> str:
    lines = []
    for k in KINDS.values():
        lines.append(f"  {k.example:<36s} {k.help}")
    lines.append(f"  {'subsampled-<kind> ... q=0.01':<36s} any kind above, Poisson-subsampled "
                 "at rate q (both directions accounted)")
    return "\n".join(lines)


@dataclass(frozen=True)
class MechanismSpec:
    """A parsed mechanism string: ``kind``, ``params`` (floats, or ``"?"`` for the
    parameter that ``calibrate`` solves for) and the Poisson rate ``q`` (None if not
    subsampled)."""

    kind: str
    params: Dict[str, Any] = field(default_factory=dict)
    q: Optional[float] = None
    text: str = ""

    @property
    def free(self) -> Optional[str]:
        """The parameter left open (``sigma=?`` or omitted), if any."""
        for k, v in self.params.items():
            if v == FREE:
                return k
        return None

    def build(self, value: Optional[float] = None):
        """The :mod:`sampledprv` spec, with ``value`` substituted for the free parameter."""
        import sampledprv as sp

        p = dict(self.params)
        fr = self.free
        if fr is not None:
            if value is None:
                raise UsageError(
                    f"mechanism {self.text!r} leaves {fr} open; only 'calibrate' solves for "
                    f"a parameter; give {fr}=<value>")
            p[fr] = float(value)
        k = self.kind
        if k == "gaussian":
            m = sp.Gaussian(p["sigma"], p.get("sensitivity", 1.0))
        elif k == "laplace":
            m = sp.Laplace(p["scale"], p.get("sensitivity", 1.0))
        elif k == "gg":
            scale = p["scale"] if "scale" in p else _sigma_to_scale(p["sigma"])
            m = sp.GeneralizedGaussian(p["beta"], scale, p.get("sensitivity", 1.0),
                                       _as_int("dimension", p.get("dimension", 1)))
        elif k == "randomized-response":
            if "p" in p:
                m = sp.RandomizedResponse(p["p"])
            else:
                eps = p["epsilon"]
                if not eps >= 0:
                    raise UsageError(f"randomized-response epsilon must be >= 0, got {eps}")
                m = sp.RandomizedResponse(1.0 / (1.0 + math.exp(-eps)))
        elif k == "pure-dp":
            m = sp.PureDP(p["epsilon"])
        elif k == "approx-dp":
            m = sp.ApproxDP(p["epsilon"], p["delta"])
        elif k == "ggnmax":
            scale = p["scale"] if "scale" in p else _sigma_to_scale(p["sigma"])
            m = sp.GGNMax(p["beta"], scale)
        else:  # pragma: no cover - parse_mechanism guarantees the kind
            raise UsageError(f"unknown mechanism kind {k!r}")
        if self.q is not None:
            m = sp.PoissonSubsampled(m, self.q)
        return m


def _sigma_to_scale(sigma: float) -> float:
    if not (isinstance(sigma, float) and sigma > 0 and math.isfinite(sigma)):
        raise UsageError(f"sigma must be a positive finite number, got {sigma!r}")
    return math.sqrt(2.0) * sigma


def _as_int(name: str, x: float) -> int:
    if not float(x).is_integer():
        raise UsageError(f"{name} must be an integer, got {x!r}")
    return int(x)


def _parse_number(name: str, text: str) -> float:
    try:
        x = float(text.replace("_", ""))
    except ValueError:
        raise UsageError(f"{name}={text!r} is not a number; write e.g. {name}=1.5 or "
                         f"{name}=1e-3") from None
    if math.isnan(x):
        raise UsageError(f"{name} is NaN; give a finite number")
    return x


def parse_mechanism(text: str, *, allow_free: bool = False) -> MechanismSpec:
    """Parse ``"<kind> key=value ..."`` into a :class:`MechanismSpec`.

    With ``allow_free`` (``calibrate``), one noise parameter may be ``?`` or omitted.
    Raises :class:`ValueError` naming the fix.
    """
    if not isinstance(text, str) or not text.strip():
        raise UsageError("empty mechanism; write e.g. --mechanism \"gaussian sigma=1\"")
    tokens = [t for t in re.split(r"[\s,]+", text.strip()) if t]
    head = tokens[0].lower().replace("_", "-")
    q_needed = False
    for pre in _SUB_PREFIXES:
        if head.startswith(pre):
            head, q_needed = head[len(pre):], True
            break
    head = _ALIASES.get(head, head)
    if head not in KINDS:
        raise UsageError(f"unknown mechanism kind {tokens[0]!r} in {text!r}; known kinds:\n"
                         + _kinds_help())
    kind = KINDS[head]
    params: Dict[str, Any] = {}
    q: Optional[float] = None
    allowed = {a for alts in kind.required for a in alts} | set(kind.optional)
    for tok in tokens[1:]:
        if "=" not in tok:
            raise UsageError(f"expected key=value in mechanism {text!r}, got {tok!r}; e.g. "
                             f"{kind.example!r}")
        key, _, val = tok.partition("=")
        key = key.strip().lower()
        key = _PARAM_ALIASES.get(key, key).replace("-", "_")
        if key == "q":
            if not q_needed:
                raise UsageError(f"q= is the Poisson sampling rate: write 'subsampled-{head} "
                                 f"...' to subsample the {head} mechanism")
            q = _parse_number("q", val)
            continue
        if key not in allowed:
            extra = " q" if q_needed else ""
            raise UsageError(f"unknown parameter {key!r} for {head}; it takes: "
                             f"{' '.join(sorted(allowed))}{extra} (e.g. {kind.example!r})")
        if key in params:
            raise UsageError(f"parameter {key!r} given twice in {text!r}")
        if val.strip() == FREE:
            if not allow_free:
                raise UsageError(f"{key}=? is only meaningful for 'calibrate'; give a value")
            if key not in kind.free:
                raise UsageError(f"calibrate can solve for {' or '.join(kind.free) or 'nothing'}"
                                 f" of {head}, not {key}")
            params[key] = FREE
        else:
            params[key] = _parse_number(key, val)
    if q_needed and q is None:
        raise UsageError(f"{tokens[0]} needs the sampling rate q=..., e.g. "
                         f"'subsampled-{kind.example} q=0.01'")
    for alts in kind.required:
        given = [a for a in alts if a in params]
        if len(given) > 1:
            raise UsageError(f"give only one of {' / '.join(alts)} for {head} in {text!r}")
        if not given:
            if allow_free and set(alts) <= set(kind.free) | {a for a in alts} and \
                    any(a in kind.free for a in alts):
                params[next(a for a in alts if a in kind.free)] = FREE
            else:
                raise UsageError(f"{head} needs {' or '.join(a + '=...' for a in alts)}, e.g. "
                                 f"{kind.example!r}")
    spec = MechanismSpec(head, params, q, text.strip())
    if sum(1 for v in params.values() if v == FREE) > 1:
        raise UsageError(f"only one parameter can be left open in {text!r}")
    return spec


def _g(x: float) -> str:
    return format(float(x), ".12g")


def format_mechanism(mech: Any) -> str:
    """The mechanism string of a :mod:`sampledprv` spec (inverse of :func:`parse_mechanism`)."""
    import sampledprv as sp

    if isinstance(mech, sp.PoissonSubsampled):
        return f"subsampled-{format_mechanism(mech.mechanism)} q={_g(mech.q)}"
    sens = lambda m: "" if m.sensitivity == 1.0 else f" sensitivity={_g(m.sensitivity)}"  # noqa: E731
    if isinstance(mech, sp.Gaussian):
        return f"gaussian sigma={_g(mech.sigma)}{sens(mech)}"
    if isinstance(mech, sp.Laplace):
        return f"laplace scale={_g(mech.scale)}{sens(mech)}"
    if isinstance(mech, sp.GeneralizedGaussian):
        dim = "" if mech.dimension == 1 else f" dimension={mech.dimension}"
        return f"gg beta={_g(mech.beta)} scale={_g(mech.scale)}{sens(mech)}{dim}"
    if isinstance(mech, sp.GGNMax):
        return f"ggnmax beta={_g(mech.beta)} scale={_g(mech.scale)}"
    if isinstance(mech, sp.RandomizedResponse):
        return f"randomized-response p={_g(mech.p)}"
    if isinstance(mech, sp.PureDP):
        return f"pure-dp epsilon={_g(mech.epsilon)}"
    if isinstance(mech, sp.ApproxDP):
        return f"approx-dp epsilon={_g(mech.epsilon)} delta={_g(mech.delta)}"
    return repr(mech)


# ---------------------------------------------------------------------------------------
# configuration (compositions in files)
# ---------------------------------------------------------------------------------------

_CONFIG_KEYS = {"accountant", "eps_error", "delta_error", "n_samples", "alpha", "seed",
                "certify", "bins", "mechanism", "mechanisms", "delta", "epsilon"}


@dataclass
class Setup:
    """Everything a subcommand needs: the composition and how to account it."""

    mechanisms: List[Tuple[MechanismSpec, int]]
    accountant: str = "analytic"
    eps_error: Optional[float] = None
    delta_error: Optional[float] = None
    n_samples: Optional[int] = None
    alpha: Optional[float] = None
    seed: Optional[int] = None
    certify: Optional[str] = None
    bins: Optional[int] = None
    deltas: Optional[List[float]] = None
    epsilons: Optional[List[float]] = None
    progress: Optional[bool] = None


def _read_toml(path: str) -> dict:
    try:
        import tomllib  # Python >= 3.11
    except ModuleNotFoundError:  # pragma: no cover - Python 3.10
        try:
            import tomli as tomllib  # type: ignore[no-redef]
        except ModuleNotFoundError:
            raise UsageError(f"reading {path} needs a TOML parser: Python >= 3.11 has one; on "
                             "Python 3.10 run 'pip install tomli' or write the same "
                             "configuration as JSON") from None
    with open(path, "rb") as f:
        try:
            return tomllib.load(f)
        except tomllib.TOMLDecodeError as exc:
            raise UsageError(f"{path} is not valid TOML: {exc}") from None


def load_config(path: str) -> dict:
    """Read a TOML (``.toml``) or JSON (anything else) composition file into a dict."""
    if not os.path.isfile(path):
        raise UsageError(f"config file {path!r} does not exist")
    if path.lower().endswith(".toml"):
        data = _read_toml(path)
    else:
        with open(path, encoding="utf-8") as f:
            try:
                data = json.load(f)
            except json.JSONDecodeError as exc:
                raise UsageError(f"{path} is not valid JSON ({exc}); TOML files must end "
                                 "in .toml") from None
    if not isinstance(data, dict):
        raise UsageError(f"{path} must hold a table/object at the top level")
    unknown = set(data) - _CONFIG_KEYS
    if unknown:
        raise UsageError(f"{path}: unknown key(s) {', '.join(sorted(unknown))}; allowed: "
                         f"{', '.join(sorted(_CONFIG_KEYS))}")
    return data


def _mechanisms_from_config(data: dict, path: str, allow_free: bool
                            ) -> List[Tuple[MechanismSpec, int]]:
    entries = data.get("mechanism", data.get("mechanisms", []))
    if isinstance(entries, dict):
        entries = [entries]
    if not isinstance(entries, list):
        raise UsageError(f"{path}: 'mechanism' must be a list of tables "
                         "([[mechanism]] in TOML)")
    out = []
    for i, e in enumerate(entries):
        where = f"{path}: mechanism #{i + 1}"
        if isinstance(e, str):
            e = {"spec": e}
        if not isinstance(e, dict):
            raise UsageError(f"{where} must be a table with spec= (or kind= and parameters) "
                             "and count=")
        e = dict(e)
        count = _count(e.pop("count", 1), where)
        if "spec" in e:
            text = e.pop("spec")
            if e:
                raise UsageError(f"{where}: give either spec= or kind= with parameters, not "
                                 f"both (extra keys: {', '.join(sorted(e))})")
        elif "kind" in e:
            kind = str(e.pop("kind"))
            text = kind + "".join(f" {k}={v}" for k, v in e.items())
        else:
            raise UsageError(f"{where} needs spec = \"gaussian sigma=1\" or kind = "
                             "\"gaussian\" with its parameters")
        try:
            out.append((parse_mechanism(str(text), allow_free=allow_free), count))
        except UsageError as exc:
            raise UsageError(f"{where}: {exc}") from None
    return out


def _count(x: Any, where: str) -> int:
    if isinstance(x, bool):
        raise UsageError(f"{where}: count must be a positive integer, got {x!r}")
    if isinstance(x, str):
        try:
            x = _parse_int("count", x)
        except UsageError as exc:
            raise UsageError(f"{where}: {exc}") from None
    if isinstance(x, float) and x.is_integer():
        x = int(x)
    if not isinstance(x, int) or x < 1:
        raise UsageError(f"{where}: count must be a positive integer, got {x!r}")
    return x


def _parse_int(name: str, text: str) -> int:
    t = str(text).strip().replace("_", "").replace(",", "")
    try:
        return int(t)
    except ValueError:
        pass
    try:
        x = float(t)
    except ValueError:
        raise UsageError(f"{name} must be an integer (1000, 1e6, 1_000_000), got {text!r}") \
            from None
    if not (math.isfinite(x) and x.is_integer()):
        raise UsageError(f"{name} must be an integer (1000, 1e6, 1_000_000), got {text!r}")
    return int(x)


def _num_list(x: Any, name: str, where: str) -> List[float]:
    vals = x if isinstance(x, list) else [x]
    out = []
    for v in vals:
        if isinstance(v, bool) or not isinstance(v, (int, float, str)):
            raise UsageError(f"{where}: {name} must be a number or a list of numbers")
        out.append(_parse_number(name, str(v)) if isinstance(v, str) else float(v))
    return out


# argparse "type" callables: raise ArgumentTypeError so argparse reports them (exit 2)
def _arg_float(text: str) -> float:
    try:
        return _parse_number("value", text)
    except UsageError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _arg_int(text: str) -> int:
    try:
        return _parse_int("value", text)
    except UsageError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def build_setup(args: argparse.Namespace, *, allow_free: bool = False,
                check_accountant: bool = True) -> Setup:
    """Merge ``--config`` and the command-line flags (flags win)."""
    data: dict = {}
    mechs: List[Tuple[MechanismSpec, int]] = []
    if getattr(args, "config", None):
        data = load_config(args.config)
        mechs = _mechanisms_from_config(data, args.config, allow_free)
    texts = getattr(args, "mechanism", None) or []
    counts = getattr(args, "count", None) or []
    if counts and len(counts) != len(texts):
        raise UsageError(f"got {len(texts)} --mechanism and {len(counts)} --count: give one "
                         "--count per --mechanism (they pair up in order), or none for count 1")
    for i, t in enumerate(texts):
        c = counts[i] if counts else 1
        if c < 1:
            raise UsageError(f"--count must be a positive integer, got {c}")
        mechs.append((parse_mechanism(t, allow_free=allow_free), c))
    if not mechs:
        raise UsageError("no mechanism given: add --mechanism \"subsampled-gaussian sigma=1 "
                         "q=0.01\" --count 1000, or --config FILE.toml (see --help)")
    s = Setup(mechs)
    where = getattr(args, "config", None) or "config"
    acc = getattr(args, "accountant", None) or data.get("accountant", "analytic")
    if acc not in ("analytic", "sampled"):
        raise UsageError(f"accountant must be 'analytic' or 'sampled', got {acc!r}")
    s.accountant = acc
    for key in ("eps_error", "delta_error", "alpha"):
        val = getattr(args, key, None)
        s.__dict__[key] = val if val is not None else (
            float(data[key]) if key in data else None)
    for key in ("n_samples", "seed", "bins"):
        val = getattr(args, key, None)
        if val is None and key in data:
            val = _count(data[key], f"{where}: {key}") if key != "seed" else data[key]
            if key == "seed" and (isinstance(val, bool) or not isinstance(val, int)):
                raise UsageError(f"{where}: seed must be an integer, got {val!r}")
        s.__dict__[key] = val
    s.certify = getattr(args, "certify", None) or data.get("certify")
    if "delta" in data:
        s.deltas = _num_list(data["delta"], "delta", where)
    if "epsilon" in data:
        s.epsilons = _num_list(data["epsilon"], "epsilon", where)
    s.progress = getattr(args, "progress", None)
    if not check_accountant:
        return s
    if s.accountant == "analytic":
        bad = [k for k in ("n_samples", "alpha", "seed", "certify", "bins")
               if s.__dict__[k] is not None]
        if bad:
            raise UsageError(f"{', '.join('--' + b.replace('_', '-') for b in bad)}: only used by "
                             "the sampled accountant; add --accountant sampled (or "
                             "accountant = \"sampled\" in the config)")
    else:
        bad = [k for k in ("eps_error", "delta_error") if s.__dict__[k] is not None]
        if bad:
            raise UsageError(f"{', '.join('--' + b.replace('_', '-') for b in bad)}: only used by "
                             "the analytic accountant; the sampled accountant's width is "
                             "set by --n-samples (see 'sampledprv plan')")
        if s.n_samples is None:
            raise UsageError("the sampled accountant needs --n-samples N (or n_samples = N in "
                             "the config); 'sampledprv plan' tells you how many")
    return s


def make_accountant_factory(s: Setup) -> Callable[[], Any]:
    import sampledprv as sp

    if s.accountant == "analytic":
        kw = {}
        if s.eps_error is not None:
            kw["eps_error"] = s.eps_error
        if s.delta_error is not None:
            kw["delta_error"] = s.delta_error
        sp.Accountant(**kw)  # validate now, with the library's messages
        return lambda: sp.Accountant(**kw)
    kw2: Dict[str, Any] = {"n_samples": s.n_samples, "progress": s.progress}
    for k in ("alpha", "seed", "certify", "bins"):
        if s.__dict__[k] is not None:
            kw2[k] = s.__dict__[k]
    sp.SampledAccountant(**kw2)
    return lambda: sp.SampledAccountant(**kw2)


def accountant_description(acc: Any, s: Optional[Setup] = None) -> Dict[str, Any]:
    import sampledprv as sp

    if isinstance(acc, sp.Accountant):
        return {"type": "analytic", "eps_error": acc.eps_error, "delta_error": acc.delta_error}
    seed = s.seed if s is not None and s.seed is not None else 0
    return {"type": "sampled", "n_samples": acc.n_samples, "alpha": acc.alpha,
            "certify": acc.certify, "bins": acc.bins, "seed": seed}


def composed(s: Setup, factory: Callable[[], Any], free_value: Optional[float] = None):
    acc = factory()
    for spec, count in s.mechanisms:
        acc.compose(spec.build(free_value), count)
    return acc


# ---------------------------------------------------------------------------------------
# output helpers
# ---------------------------------------------------------------------------------------

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


# ---------------------------------------------------------------------------------------
# subcommands
# ---------------------------------------------------------------------------------------

def cmd_epsilon(args: argparse.Namespace) -> int:
    s = build_setup(args)
    deltas = args.delta or s.deltas
    if not deltas:
        raise UsageError("give --delta (e.g. --delta 1e-5), or delta = 1e-5 in the config")
    acc = composed(s, make_accountant_factory(s))
    ivs = [(d, acc.epsilon(delta=d)) for d in deltas]
    rows = [[f"{d:g}", *_fmt_triplet([iv.lower, iv.estimate, iv.upper])] for d, iv in ivs]
    text = _composition_lines(s, acc) + [""] + _table(
        ["delta", "epsilon lower", "estimate", "upper"], rows) + [""]
    text.append(_certified_line(ivs[0][1], "epsilon(delta)"))
    if any(not math.isfinite(iv.upper) for _, iv in ivs):
        text.append("note: upper = inf means no finite bound could be certified at that delta"
                    " (sampled: too few samples -- see 'sampledprv plan')")
    payload = {"command": "epsilon", "accountant": accountant_description(acc, s),
               "composition": _composition_json(s),
               "results": [{"delta": d, **interval_json(iv)} for d, iv in ivs]}
    _emit(args, payload, text)
    return EXIT_OK


def cmd_delta(args: argparse.Namespace) -> int:
    s = build_setup(args)
    epss = args.epsilon or s.epsilons
    if not epss:
        raise UsageError("give --epsilon (e.g. --epsilon 2), or epsilon = 2 in the config")
    acc = composed(s, make_accountant_factory(s))
    ivs = [(e, acc.delta(epsilon=e)) for e in epss]
    rows = [[f"{e:g}", *_fmt_triplet([iv.lower, iv.estimate, iv.upper])] for e, iv in ivs]
    text = _composition_lines(s, acc) + [""] + _table(
        ["epsilon", "delta lower", "estimate", "upper"], rows) + [""]
    text.append(_certified_line(ivs[0][1], "delta(epsilon)"))
    payload = {"command": "delta", "accountant": accountant_description(acc, s),
               "composition": _composition_json(s),
               "results": [{"epsilon": e, **interval_json(iv)} for e, iv in ivs]}
    _emit(args, payload, text)
    return EXIT_OK


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
                       delta=args.delta, accountant=accountant, rtol=args.rtol)
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
    lo, est, up = _fmt_triplet([iv.lower, iv.estimate, iv.upper])
    text += [f"target: ({args.epsilon:g}, {args.delta:g})-DP; at this {name}, epsilon({args.delta:g})"
             f" in [{lo}, {up}] (estimate {est}); slack {cal.slack:.2%} of the target",
             f"the smallest {name} whose certified upper bound meets the target "
             f"(relative tolerance {args.rtol:g}; {cal.evaluations} accountant evaluations)",
             _certified_line(iv, "epsilon(delta)")]
    payload = {"command": "calibrate", "parameter": name, "value": value, **extra,
               "mechanism": mech_text, "count": count, "target_epsilon": args.epsilon,
               "delta": args.delta, "evaluations": cal.evaluations, "slack": cal.slack,
               "composition": _composition_json(s), "interval": interval_json(iv)}
    _emit(args, payload, text)
    return EXIT_OK


def cmd_plan(args: argparse.Namespace) -> int:
    import sampledprv as sp

    s = build_setup(args, check_accountant=False)
    deltas = args.delta or s.deltas
    if not deltas:
        raise UsageError("give --delta (e.g. --delta 1e-5)")
    if len(deltas) != 1:
        raise UsageError("plan takes one --delta")
    delta = deltas[0]
    alpha = s.alpha if s.alpha is not None else 1e-9
    bins = s.bins if s.bins is not None else 2**15
    mechs = [(spec.build(), c) for spec, c in s.mechanisms]
    k = sum(c for _, c in mechs)
    hists = sum(1 if m.symmetric else 2 for m, _ in mechs)
    if args.target_width is not None and len(mechs) != 1:
        raise UsageError("--target-width runs a pilot for one mechanism: give a single "
                         "--mechanism (the floor is computed for any composition)")
    n_min = sp.min_samples(k, delta, alpha=alpha, bins=bins, histograms=hists)
    plan = None
    if args.target_width is not None:
        if not args.target_width > 0:
            raise UsageError(f"--target-width must be > 0, got {args.target_width}")
        plan = sp.plan_samples(mechs[0][0], mechs[0][1], delta, alpha=alpha, bins=bins,
                               target_width=args.target_width, pilot_n=args.pilot_n,
                               seed=s.seed or 0)
    text = [f"sample plan for the sampled accountant (alpha={alpha:g}, bins={bins:,}):"]
    text += [f"  {c:>8,} x {spec.text}" for spec, c in s.mechanisms]
    text += ["",
             f"minimum n_samples for a finite upper bound on epsilon({delta:g}): {n_min:,}",
             f"  (per histogram; {hists} histogram(s) -> {n_min * hists:,} draws in all)",
             "  below it the unseen tail mass alone exceeds delta: about "
             "k ln((2 bins + 3) H / alpha) / delta"]
    n_target = None
    if plan is not None:
        n_target = plan.n_target
        if n_target is None:
            text.append(f"target width {args.target_width:g}: the pilot ({plan.pilot_n:,} "
                        "samples) gave no finite bound; raise --pilot-n")
        else:
            text.append(f"n_samples for an epsilon interval about {args.target_width:g} wide: "
                        f"~{n_target:,} (extrapolated as n^-1/2 from a pilot of "
                        f"{plan.pilot_n:,} whose width was {plan.pilot_width:.4g}; an "
                        "estimate, not a guarantee)")
    payload = {"command": "plan", "delta": delta, "alpha": alpha, "bins": bins,
               "compositions": k, "histograms": hists, "n_min": n_min,
               "total_draws_min": n_min * hists, "target_width": args.target_width,
               "n_target": n_target,
               "pilot_n": None if plan is None else plan.pilot_n,
               "pilot_width": None if plan is None else plan.pilot_width,
               "composition": _composition_json(s)}
    _emit(args, payload, text)
    return EXIT_OK


def cmd_validate(args: argparse.Namespace) -> int:
    import sampledprv as sp

    if len(args.mechanism or []) != 1:
        raise UsageError("validate checks one mechanism: give exactly one --mechanism")
    spec = parse_mechanism(args.mechanism[0])
    mech = spec.build()
    if not 0 < args.level < 1:
        raise UsageError(f"--level must lie in (0, 1), got {args.level}")
    rep = sp.validate(mech, args.n_samples, seed=args.seed, bins=args.bins,
                      progress=args.progress)
    ok = rep.passed(args.level)
    text = [f"validate {spec.text}: Monte Carlo check of the analytic privacy-loss law",
            f"  {rep}",
            f"  {'PASS' if ok else 'FAIL'} at level {args.level:g}"
            + ("" if ok else " -- the samples reject the analytic law: please report this")]
    for d, (st, p, loc) in rep.per_direction.items():
        text.append(f"  {d:>6s}: KS distance {st:.3g} at loss {loc:.4g}, p-value {p:.3g}")
    payload = {"command": "validate", "mechanism": format_mechanism(mech),
               "n_samples": rep.n, "statistic": rep.statistic, "pvalue": rep.pvalue,
               "location": rep.location, "direction": rep.direction, "level": args.level,
               "passed": ok,
               "per_direction": {d: {"statistic": a, "pvalue": b, "location": c}
                                 for d, (a, b, c) in rep.per_direction.items()}}
    _emit(args, payload, text)
    if not ok:
        print(f"{PROG} validate: the samples reject the analytic law at level "
              f"{args.level:g} (p-value {rep.pvalue:.3g})", file=sys.stderr)
        return EXIT_INTERNAL
    return EXIT_OK


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
        grid = [args.eps_min + i * step for i in range(args.points)]
    if any(not (e >= 0 and math.isfinite(e)) for e in grid):
        raise UsageError("epsilon grid values must be finite and >= 0")
    return grid


def cmd_curve(args: argparse.Namespace) -> int:
    from . import plotting

    s = build_setup(args)
    grid = _eps_grid(args, s)
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
            "composition": _composition_json(s), "certification": curve.certification,
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


# ---------------------------------------------------------------------------------------
# argument parser
# ---------------------------------------------------------------------------------------

_MAIN_EPILOG = f"""\
mechanisms ("<kind> key=value ...", parameters in any order):
{_kinds_help()}

examples:
  # DP-SGD: 1000 steps of the Poisson-subsampled Gaussian, certified epsilon at delta=1e-5
  {PROG} epsilon --delta 1e-5 --mechanism "subsampled-gaussian sigma=1 q=0.01" --count 1000

  # heterogeneous composition, both queries, machine-readable
  {PROG} epsilon --delta 1e-5 1e-6 -m "subsampled-gaussian sigma=1 q=0.01" -c 1000 \\
      -m "laplace scale=20" -c 10 --json

  # the GG scale for (2, 1e-5)-DP after 1000 steps of beta=1.5 noise at q=0.01
  {PROG} calibrate --epsilon 2 --delta 1e-5 -m "subsampled-gg beta=1.5 q=0.01" -c 1000

  # how many samples the sampled accountant needs, then run it
  {PROG} plan --delta 1e-5 -m "subsampled-gg beta=1.5 sigma=1 q=0.01" -c 100
  {PROG} epsilon --delta 1e-3 -m "subsampled-gg beta=1.5 sigma=1 q=0.01" -c 100 \\
      --accountant sampled --n-samples 1e6 --alpha 1e-6

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
    a.add_argument("--eps-error", type=_arg_float, metavar="E",
                   help="analytic: half-width budget in epsilon (default 0.01)")
    a.add_argument("--delta-error", type=_arg_float, metavar="D",
                   help="analytic: additive delta error budget (default 1e-10)")
    a.add_argument("--n-samples", type=_arg_int, metavar="N",
                   help="sampled: privacy-loss draws per mechanism and direction")
    a.add_argument("--alpha", type=_arg_float, help="sampled: failure probability (1e-9)")
    a.add_argument("--seed", type=_arg_int, help="sampled: root seed (0)")
    a.add_argument("--certify", choices=("envelope", "seed"),
                   help="sampled: envelope (default) or seed (GG paper's SampledComposePRV)")
    a.add_argument("--bins", type=_arg_int, help="sampled: histogram bins (32768)")


def _add_common(p: argparse.ArgumentParser) -> None:
    o = p.add_argument_group("output")
    o.add_argument("--json", action="store_true", help="machine-readable JSON on stdout")
    o.add_argument("--progress", dest="progress", action="store_true", default=None,
                   help="always show progress bars for sampling (default: runs > 2 s)")
    o.add_argument("--no-progress", dest="progress", action="store_false",
                   help="never show progress bars")
    o.add_argument("--debug", action="store_true", help="full tracebacks on errors")


def build_parser() -> argparse.ArgumentParser:
    from . import __version__

    parser = argparse.ArgumentParser(
        prog=PROG, formatter_class=_Formatter,
        description=textwrap.fill(
            "Certified differential-privacy accounting. Every answer is an interval "
            "[lower, upper] with an estimate, and says how it is certified: deterministic "
            "(analytic mechanisms) or with probability >= 1 - alpha over the sampling "
            "(sampled accountant). Neighbouring datasets differ by adding or removing one "
            "record; both directions are accounted.", 92),
        epilog=_MAIN_EPILOG + "\n" + _CONFIG_HELP)
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
    p.set_defaults(func=cmd_epsilon)

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
    p.set_defaults(func=cmd_delta)

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
    p.set_defaults(func=cmd_calibrate)

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
    _add_composition_args(p, accountant=False)
    p.add_argument("--alpha", type=_arg_float, help="failure probability (default 1e-9)")
    p.add_argument("--bins", type=_arg_int, help="histogram bins (default 32768)")
    p.add_argument("--seed", type=_arg_int, help="pilot seed (default 0)")
    _add_common(p)
    p.set_defaults(func=cmd_plan)

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
    p.set_defaults(func=cmd_validate)

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
    p.set_defaults(func=cmd_curve)
    return parser


# ---------------------------------------------------------------------------------------
# entry point
# ---------------------------------------------------------------------------------------

def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    print(f"{PROG}: warning: {message}", file=sys.stderr)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the command line; returns the exit code (also used as the console script)."""
    parser = build_parser()
    args = parser.parse_args(argv)           # exits 2 on argparse errors
    debug = getattr(args, "debug", False) or bool(os.environ.get("SAMPLEDPRV_DEBUG"))
    old = warnings.showwarning
    warnings.showwarning = _show_warning      # one line per warning, on stderr
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        print(f"\n{PROG}: interrupted (Ctrl-C); no result was produced", file=sys.stderr)
        return EXIT_INTERRUPTED
    except (ValueError, FileNotFoundError, IsADirectoryError, PermissionError) as exc:
        if debug:
            raise
        print(f"{PROG} {args.command}: error: {exc}", file=sys.stderr)
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


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
