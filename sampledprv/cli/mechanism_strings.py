"""Mechanism strings: ``"<kind> key=value ..."`` to and from :mod:`sampledprv` specs.

:data:`KINDS` lists the mechanism kinds with their parameters; :func:`parse_mechanism`
turns ``"subsampled-gaussian sigma=1 q=0.01"`` into a :class:`MechanismSpec` (whose
:meth:`MechanismSpec.build` makes the library spec) and :func:`format_mechanism` writes a
spec back as a string.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Dict, Optional, Tuple

from .errors import UsageError

__all__ = ["KINDS", "FREE", "MechanismSpec", "parse_mechanism", "format_mechanism"]


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
