"""Composition files: TOML or JSON ``--config`` files, and the number parsing they share
with the command-line flags."""

from __future__ import annotations

import json
import math
import os
from typing import Any, Dict, List, Optional, Tuple

from .errors import UsageError
from .mechanism_strings import (PARAM_ALIASES, MechanismSpec, kind_of, parse_number,
                                mechanism_from_fields, parse_mechanism, suggest)

__all__ = ["load_config", "mechanisms_from_config", "parse_count", "parse_int", "number_list"]

_CONFIG_KEYS = {"accountant", "eps_error", "delta_error", "max_grid_size", "n_samples", "alpha",
                "seed", "certify", "bins", "mechanism", "mechanisms", "delta", "epsilon",
                "neighbouring"}


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
    unknown = sorted(set(data) - _CONFIG_KEYS)
    if unknown:
        raise UsageError(f"{path}: unknown key(s) {', '.join(unknown)}"
                         f"{suggest(unknown[0], _CONFIG_KEYS) or ';'} allowed: "
                         f"{', '.join(sorted(_CONFIG_KEYS))}")
    return data


def _tails_from_entry(e: dict, where: str) -> dict:
    """Pop ``renyi`` (a table of orders and divergences) and ``loss_range`` (``[lo, hi]``)
    from a mechanism entry: tail information for the sampled accountant."""
    from ..sampled.certification.tail_inputs import as_loss_range, as_renyi

    out = {}
    try:
        if "renyi" in e:
            r = e.pop("renyi")
            if not isinstance(r, dict):
                raise ValueError("renyi must be a table of orders and divergences, e.g. "
                                 "renyi = {\"2\" = 0.25, \"8\" = 1.0}")
            out["renyi"] = as_renyi(r)
        if "loss_range" in e:
            lr = e.pop("loss_range")
            out["loss_range"] = as_loss_range(tuple(lr) if isinstance(lr, list) else lr)
    except ValueError as exc:
        raise UsageError(f"{where}: {exc}") from None
    return out


def mechanisms_from_config(data: dict, path: str, allow_free: bool,
                           tails: Optional[Dict[int, dict]] = None
                           ) -> List[Tuple[MechanismSpec, int]]:
    """The ``[[mechanism]]`` entries of a loaded config as ``(spec, count)`` pairs;
    ``tails`` (if given) receives, by entry index, the
    ``renyi``/``loss_range`` keyword arguments of :meth:`SampledAccountant.compose`."""
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
        extra = _tails_from_entry(e, where)
        if extra and tails is not None:
            tails[len(out)] = extra
        try:
            out.append(_entry(e, where, allow_free))
        except UsageError as exc:
            msg = str(exc)
            raise UsageError(msg if msg.startswith(where) else f"{where}: {msg}") from None
    return out


_ENTRY_KEYS = ("spec", "kind", "count", "renyi", "loss_range")


def _entry(e: dict, where: str, allow_free: bool) -> Tuple[MechanismSpec, int]:
    """One ``[[mechanism]]`` table: ``spec = "..."`` or ``kind = "..."`` with the kind's
    parameters (checked against its table in the registry), and ``count``."""
    if "spec" in e and "kind" in e:
        raise UsageError(f"{where}: give either spec= or kind= with parameters, not both")
    if "spec" in e:
        extra = sorted(set(e) - {"spec", "count"})
        if extra:
            raise UsageError(f"{where}: unknown key {extra[0]!r}"
                             f"{suggest(extra[0], ('spec', 'count')) or ';'} with spec= a "
                             "table takes only spec and count (parameters go in the spec "
                             "string)")
        count = parse_count(e.get("count", 1), where)
        return parse_mechanism(str(e["spec"]), allow_free=allow_free), count
    if "kind" in e:
        kind, sampling = kind_of(str(e["kind"]), str(e["kind"]))
        params = {k: val for k, val in e.items() if k not in ("kind", "count")}
        names = set(kind.parameters) | {"count"} | (
            {"q"} if sampling == "poisson" else
            {"batch_size", "dataset_size"} if sampling == "fixed" else set())
        for k in params:
            key = str(k).strip().lower()
            key = PARAM_ALIASES.get(key, key).replace("-", "_")
            if key not in names:
                raise UsageError(f"{where}: unknown key {k!r}{suggest(key, names) or ';'} "
                                 f"{kind.name} takes {', '.join(sorted(names))}")
        count = parse_count(e.get("count", 1), where)
        return mechanism_from_fields(str(e["kind"]), list(params.items()),
                                     allow_free=allow_free), count
    keys = sorted(e)
    hint = suggest(keys[0], _ENTRY_KEYS) if keys else ""
    raise UsageError(f"{where} needs spec = \"gaussian sigma=1\" or kind = \"gaussian\" "
                     f"with its parameters{hint}")


def parse_count(x: Any, where: str) -> int:
    """A composition count (>= 1) from a config value; ``where`` prefixes the error."""
    if isinstance(x, bool):
        raise UsageError(f"{where}: count must be a positive integer, got {x!r}")
    if isinstance(x, str):
        try:
            x = parse_int("count", x)
        except UsageError as exc:
            raise UsageError(f"{where}: {exc}") from None
    if isinstance(x, float) and x.is_integer():
        x = int(x)
    if not isinstance(x, int) or x < 1:
        raise UsageError(f"{where}: count must be a positive integer, got {x!r}")
    return x


def parse_int(name: str, text: str) -> int:
    """An integer from ``1000``, ``1_000``, ``1,000`` or ``1e6``; :class:`UsageError` naming ``name``."""
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


def number_list(x: Any, name: str, where: str) -> List[float]:
    """One number or a list of numbers (``delta = [1e-5, 1e-6]``) from a config value."""
    vals = x if isinstance(x, list) else [x]
    out = []
    for v in vals:
        if isinstance(v, bool) or not isinstance(v, (int, float, str)):
            raise UsageError(f"{where}: {name} must be a number or a list of numbers")
        out.append(parse_number(name, str(v)) if isinstance(v, str) else float(v))
    return out
