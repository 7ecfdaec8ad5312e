"""Mechanism strings: ``"<kind> key=value ..."`` to and from :mod:`sampledprv` specs.

:data:`KINDS` lists the mechanism kinds with their parameters; :func:`parse_mechanism`
turns ``"subsampled-gaussian sigma=1 q=0.01"`` into a :class:`MechanismSpec` (whose
:meth:`MechanismSpec.build` makes the library spec) and :func:`format_mechanism` writes a
spec back as a string.
"""

from __future__ import annotations

import difflib
import math
import re
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Dict, Iterable, Iterator, Mapping, Optional, Sequence, Tuple

from ..core.formatting import spec_number as _g
from ..mechanisms.registry import CliKind, cli_aliases, cli_kind, cli_kinds, family_of
from .errors import UsageError

__all__ = ["KINDS", "FREE", "MechanismSpec", "parse_mechanism", "format_mechanism", "CliKind",
           "mechanism_from_fields", "suggest", "parse_number", "kinds_help", "kind_of",
           "PARAM_ALIASES"]


class _KindTable(Mapping):
    """Read-only view of the command-line kinds (name -> CliKind).  A lookup by name
    imports only the package that registers that kind (the batch samplers' kinds are
    registered by :mod:`sampledprv.batch`, whose import loads Numba, the Renyi bounds and
    the sampled certification, about 0.5 s, which a command using none of its kinds does
    not need: :data:`sampledprv.mechanisms.registry.DEFERRED`); listing them imports all."""

    def __getitem__(self, name: str) -> CliKind:
        kind = cli_kind(name)
        if kind is None or kind.name != name:
            raise KeyError(name)
        return kind

    def __contains__(self, name: object) -> bool:
        try:
            self[name]                    # type: ignore[index]
        except (KeyError, TypeError):
            return False
        return True

    def __iter__(self) -> Iterator[str]:
        return iter(cli_kinds())

    def __len__(self) -> int:
        return len(cli_kinds())


#: the mechanism kinds of the command line, from :mod:`sampledprv.mechanisms.registry`
KINDS: Mapping[str, CliKind] = _KindTable()

PARAM_ALIASES = {"b": "scale", "eps": "epsilon", "noise-multiplier": "sigma",
                  "noise_multiplier": "sigma", "s": "scale", "rate": "q", "d": "dimension"}
#: other libraries' names of a parameter, for the did-you-mean hint (not accepted as
#: aliases: a rate under another name should be seen, not guessed)
_MEANT = {"sample_rate": "q", "sampling_rate": "q", "sampling_probability": "q",
          "sample_size": "batch_size", "std": "sigma", "stddev": "sigma"}
_SUB_PREFIXES = ("subsampled-", "poisson-subsampled-", "sub-")
_FIXED_PREFIXES = ("fixed-size-", "fixed-", "wor-")
_FIXED_KEYS = ("batch_size", "dataset_size")
FREE = "?"


def kinds_help() -> str:
    """The mechanism kinds, their parameters and an example each (for ``--help``)."""
    lines = []
    for k in KINDS.values():
        lines.append(f"  {k.example:<36s} {k.help}")
    lines.append(f"  {'subsampled-<kind> ... q=0.01':<36s} any kind above, Poisson-subsampled "
                 "at rate q (both directions accounted)")
    lines.append(f"  {'fixed-<kind> ... batch_size=B dataset_size=N':<36s} a batch of exactly "
                 "B of N records (without replacement; --neighbouring substitute)")
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
    #: ``(batch_size, dataset_size)`` of a fixed-size (without replacement) subsample
    batch: Optional[Tuple[int, int]] = None

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
        kind = KINDS[self.kind]
        for name in kind.integers:
            if name in p:
                p[name] = _as_int(name, p[name])
        try:
            m = kind.build(p)
        except ValueError as exc:
            raise UsageError(f"{self.kind}: {exc}") from None
        if self.q is not None:
            m = sp.PoissonSubsampled(m, self.q)
        if self.batch is not None:
            try:
                m = sp.FixedSizeSubsampled(m, *self.batch)
            except ValueError as exc:
                raise UsageError(f"{self.text}: {exc}") from None
        return m


def _as_int(name: str, x: float) -> int:
    if not float(x).is_integer():
        raise UsageError(f"{name} must be an integer, got {x!r}")
    return int(x)


_FRACTION = re.compile(r"^\s*([0-9][0-9_]*)\s*/\s*([0-9][0-9_]*)\s*$")


def parse_number(name: str, text: str) -> float:
    """A float from ``1.5``, ``1e-3``, ``1_000`` or a simple fraction ``256/60000``."""
    frac = _FRACTION.match(text)
    if frac is not None:
        num, den = (int(g.replace("_", "")) for g in frac.groups())
        if den == 0:
            raise UsageError(f"{name}={text!r} divides by zero; give e.g. {name}=256/60000")
        return float(Fraction(num, den))
    try:
        x = float(text.replace("_", ""))
    except ValueError:
        raise UsageError(f"{name}={text!r} is not a number; write e.g. {name}=1.5, "
                         f"{name}=1e-3 or a fraction {name}=256/60000") from None
    if math.isnan(x):
        raise UsageError(f"{name} is NaN; give a finite number")
    return x


def suggest(word: str, choices: Iterable[str]) -> str:
    """``"; did you mean 'count'?"`` for a near miss among ``choices``, else ``""``."""
    close = difflib.get_close_matches(str(word), list(choices), n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def _number(key: str, raw: Any) -> Any:
    """A float from a string (number or fraction) or a config number; ``?`` stays."""
    if isinstance(raw, str):
        if raw.strip() == FREE:
            return FREE
        return parse_number(key, raw)
    if isinstance(raw, bool) or not isinstance(raw, (int, float)):
        raise UsageError(f"{key} must be a number, got {raw!r}")
    x = float(raw)
    if math.isnan(x):
        raise UsageError(f"{key} is NaN; give a finite number")
    return x


def _vector(key: str, raw: Any) -> tuple:
    """A tuple of floats from ``"0.5:0.25:0.25"`` or a config list."""
    items = raw.split(":") if isinstance(raw, str) else raw
    if not isinstance(items, (list, tuple)) or not items:
        raise UsageError(f"{key} must be a list of numbers, written {key}=0.5:0.25:0.25 "
                         "(a list in config files)")
    return tuple(_number(key, x if not isinstance(x, str) else x.strip()) for x in items)


def parse_mechanism(text: str, *, allow_free: bool = False) -> MechanismSpec:
    """Parse ``"<kind> key=value ..."`` into a :class:`MechanismSpec`.

    Values are numbers (``1.5``, ``1e-3``, ``1_000``), simple fractions (``256/60000``),
    lists ``0.5:0.25:0.25`` (or ``0.5,0.25,0.25``) for list parameters, or ``?`` for the
    parameter ``calibrate`` solves for.  With ``allow_free`` (``calibrate``), one noise
    parameter may be ``?`` or omitted.  Raises :class:`ValueError` naming the fix.
    """
    if not isinstance(text, str) or not text.strip():
        raise UsageError("empty mechanism; write e.g. --mechanism \"gaussian sigma=1\"")
    tokens = [t for t in re.split(r"[\s,]+", text.strip()) if t]
    fields: list = []
    for tok in tokens[1:]:
        if "=" not in tok and fields and _vector_key(tokens[0], fields[-1][0], text):
            fields[-1] = (fields[-1][0], f"{fields[-1][1]}:{tok}")   # c_col=1,0.5,0.25
            continue
        if "=" not in tok:
            raise UsageError(f"expected key=value in mechanism {text!r}, got {tok!r}; e.g. "
                             f"{kind_of(tokens[0], text)[0].example!r}")
        key, _, val = tok.partition("=")
        fields.append((key, val))
    return mechanism_from_fields(tokens[0], fields, allow_free=allow_free, text=text.strip())


def _vector_key(kind_token: str, key: str, text: str) -> bool:
    """Whether ``key`` is a list parameter of the kind (its entries may be separated by
    commas as well as by ``:``)."""
    raw = str(key).strip().lower()
    return PARAM_ALIASES.get(raw, raw).replace("-", "_") in kind_of(kind_token, text)[0].vectors


def kind_of(token: str, text: str) -> Tuple[CliKind, str]:
    """The kind of ``token`` and its sampling: ``""``, ``"poisson"`` (``subsampled-``)
    or ``"fixed"`` (``fixed-``: a batch of fixed size, without replacement)."""
    head = str(token).strip().lower().replace("_", "-")
    q_needed, typed = "", ""
    for pre in _SUB_PREFIXES:
        if head.startswith(pre):
            head, q_needed, typed = head[len(pre):], "poisson", pre
            break
    else:
        for pre in _FIXED_PREFIXES:
            if head.startswith(pre):
                head, q_needed, typed = head[len(pre):], "fixed", pre
                break
    known = cli_kind(head)      # imports only the package registering it (batch kinds)
    head = head if known is None else known.name
    if known is None:
        names = list(KINDS) + list(cli_aliases())
        # suggest a full kind name, with the sampling prefix as typed: 'subsampled-gausian'
        # gets 'subsampled-gaussian', not 'gaussian'
        full = [typed + n for n in names] + [pre + n for pre in
                                             ("subsampled-", "fixed-") for n in names]
        hint = suggest(str(token).strip().lower().replace("_", "-"), full) \
            or suggest(head, names)
        if hint:        # a near miss: the suggestion, not the whole list after it
            raise UsageError(f"unknown mechanism kind {token!r} in {text!r}{hint} "
                             "('sampledprv epsilon --help' lists the kinds)")
        raise UsageError(f"unknown mechanism kind {token!r} in {text!r}; known kinds:\n"
                         + kinds_help())
    return KINDS[head], q_needed


def mechanism_from_fields(kind_token: str, fields: Sequence[Tuple[str, Any]], *,
                          allow_free: bool = False, text: str = "") -> MechanismSpec:
    """A :class:`MechanismSpec` from a kind name and ``(key, value)`` pairs.

    The one table-driven parser behind mechanism strings and config tables: the kind's
    parameters, integers, lists and free parameters come from its
    :class:`~sampledprv.mechanisms.registry.CliKind`.  Values may be strings (as typed)
    or numbers and lists (from TOML/JSON).
    """
    text = text or f"{kind_token} " + " ".join(f"{k}={v}" for k, v in fields)
    kind, sampling = kind_of(kind_token, text)
    q_needed = sampling == "poisson"
    head = kind.name
    params: Dict[str, Any] = {}
    q: Optional[float] = None
    batch: Dict[str, int] = {}
    allowed = set(kind.parameters)
    for key, val in fields:
        raw = str(key).strip().lower()
        key = PARAM_ALIASES.get(raw, raw).replace("-", "_")
        if key == "q" and "q" in allowed and raw != "rate":
            key = "q_param"   # the kind's own q (e.g. finite-pair); the rate is rate=
        if key in _FIXED_KEYS and sampling == "fixed":
            batch[key] = _as_int(key, _number(key, val))
            continue
        if key == "q":
            if not q_needed:
                raise UsageError(f"q= is the Poisson sampling rate: write 'subsampled-{head} "
                                 f"...' to subsample the {head} mechanism")
            q = parse_number("q", val) if isinstance(val, str) else _number("q", val)
            continue
        if key == "q_param":
            key = "q"
        elif key not in allowed:
            more = {"poisson": ("q",), "fixed": _FIXED_KEYS}.get(sampling, ())
            extra = "".join(" " + m for m in more)
            hint = suggest(key, allowed | set(more))
            meant = _MEANT.get(key)
            if meant and (meant in allowed or meant in more):
                hint = f"; did you mean {meant!r}?"
            elif meant == "q":
                hint = (f"; the sampling rate is q=, on a subsampled kind: 'subsampled-{head} "
                        f"... q=0.01';")
            raise UsageError(f"unknown parameter {key!r} for {head}{hint or ';'} it takes: "
                             f"{' '.join(sorted(allowed))}{extra} (e.g. {kind.example!r})")
        if key in params:
            raise UsageError(f"parameter {key!r} given twice in {text!r}")
        value = _vector(key, val) if key in kind.vectors else _number(key, val)
        if value == FREE:
            if not allow_free:
                raise UsageError(f"{key}=? is only meaningful for 'calibrate'; give a value")
            if key not in kind.free:
                raise UsageError(f"calibrate can solve for {' or '.join(kind.free) or 'nothing'}"
                                 f" of {head}, not {key}")
        params[key] = value
    if q_needed and q is None:
        raise UsageError(f"{kind_token} needs the sampling rate q=..., e.g. "
                         f"'subsampled-{kind.example} q=0.01'")
    for alts in kind.required:
        given = [a for a in alts if a in params]
        if len(given) > 1:
            raise UsageError(f"give only one of {' / '.join(alts)} for {head} in {text!r}")
        if not given:
            if allow_free and any(a in kind.free for a in alts):
                params[next(a for a in alts if a in kind.free)] = FREE
            else:
                raise UsageError(f"{head} needs {' or '.join(a + '=...' for a in alts)}, e.g. "
                                 f"{kind.example!r}")
    if sampling == "fixed" and set(batch) != set(_FIXED_KEYS):
        raise UsageError(f"{kind_token} needs batch_size=... and dataset_size=..., e.g. "
                         f"'fixed-{kind.example} batch_size=256 dataset_size=60000'")
    spec = MechanismSpec(head, params, q, text.strip(),
                         (batch["batch_size"], batch["dataset_size"]) if batch else None)
    if sum(1 for v in params.values() if v == FREE) > 1:
        raise UsageError(f"only one parameter can be left open in {text!r}")
    return spec



def format_mechanism(mech: Any) -> str:
    """The mechanism string of a :mod:`sampledprv` spec (inverse of :func:`parse_mechanism`)."""
    import sampledprv as sp

    if isinstance(mech, sp.PoissonSubsampled):
        base = format_mechanism(mech.mechanism)
        rate = "rate" if re.search(r"\sq=", base) else "q"   # the kind has its own q=
        return f"subsampled-{base} {rate}={_g(mech.q)}"
    if isinstance(mech, sp.FixedSizeSubsampled):
        return (f"fixed-{format_mechanism(mech.mechanism)} batch_size={mech.batch_size} "
                f"dataset_size={mech.dataset_size}")
    try:
        fam = family_of(mech)
    except TypeError:
        return repr(mech)
    return fam.format(mech) if fam.format is not None else repr(mech)
