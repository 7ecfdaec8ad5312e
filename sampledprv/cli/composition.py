"""The merged setup of a subcommand (``--config`` file plus flags) and its accountant."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

from .config import parse_count, mechanisms_from_config, number_list, load_config
from .errors import UsageError
from .mechanism_strings import MechanismSpec, parse_mechanism

__all__ = ["Setup", "build_setup", "make_accountant_factory", "accountant_description",
           "composed"]


@dataclass
class Setup:
    """Everything a subcommand needs: the composition and how to account it."""

    mechanisms: List[Tuple[MechanismSpec, int]]
    accountant: str = "analytic"
    eps_error: Optional[float] = None
    delta_error: Optional[float] = None
    max_grid_size: Optional[int] = None
    n_samples: Optional[int] = None
    alpha: Optional[float] = None
    seed: Optional[int] = None
    certify: Optional[str] = None
    bins: Optional[int] = None
    deltas: Optional[List[float]] = None
    epsilons: Optional[List[float]] = None
    progress: Optional[bool] = None
    neighbouring: Optional[str] = None
    #: per mechanism index: ``renyi``/``loss_range`` for the sampled accountant's compose
    tails: Dict[int, dict] = field(default_factory=dict)


def build_setup(args: argparse.Namespace, *, allow_free: bool = False,
                check_accountant: bool = True) -> Setup:
    """Merge ``--config`` and the command-line flags (flags win)."""
    data: dict = {}
    mechs: List[Tuple[MechanismSpec, int]] = []
    tails: Dict[int, dict] = {}
    if getattr(args, "config", None):
        data = load_config(args.config)
        mechs = mechanisms_from_config(data, args.config, allow_free, tails)
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
    s = Setup(mechs, tails=tails)
    where = getattr(args, "config", None) or "config"
    acc = getattr(args, "accountant", None) or data.get("accountant", "analytic")
    if acc not in ("analytic", "sampled"):
        raise UsageError(f"accountant must be 'analytic' or 'sampled', got {acc!r}")
    s.accountant = acc
    for key in ("eps_error", "delta_error", "alpha"):
        val = getattr(args, key, None)
        s.__dict__[key] = val if val is not None else (
            float(data[key]) if key in data else None)
    for key in ("n_samples", "seed", "bins", "max_grid_size"):
        val = getattr(args, key, None)
        if val is None and key in data:
            val = parse_count(data[key], f"{where}: {key}") if key != "seed" else data[key]
            if key == "seed" and (isinstance(val, bool) or not isinstance(val, int)):
                raise UsageError(f"{where}: seed must be an integer, got {val!r}")
        s.__dict__[key] = val
    s.certify = getattr(args, "certify", None) or data.get("certify")
    rel = getattr(args, "neighbouring", None) or data.get("neighbouring")
    if rel is not None:
        from ..mechanisms.base import as_relation
        s.neighbouring = as_relation(rel, "--neighbouring").value
    if "delta" in data:
        s.deltas = number_list(data["delta"], "delta", where)
    if "epsilon" in data:
        s.epsilons = number_list(data["epsilon"], "epsilon", where)
    s.progress = getattr(args, "progress", None)
    if not check_accountant:
        return s
    if s.accountant == "analytic":
        bad = [k for k in ("n_samples", "alpha", "seed", "certify", "bins")
               if s.__dict__[k] is not None]
        if s.tails:
            raise UsageError("renyi / loss_range in the config bound the unseen tail of the "
                             "sampled accountant; the analytic accountant does not use them: "
                             "add accountant = \"sampled\" (or --accountant sampled)")
        if bad:
            raise UsageError(f"{', '.join('--' + b.replace('_', '-') for b in bad)}: only used by "
                             "the sampled accountant; add --accountant sampled (or "
                             "accountant = \"sampled\" in the config)")
    else:
        bad = [k for k in ("eps_error", "delta_error", "max_grid_size")
               if s.__dict__[k] is not None]
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
        if s.max_grid_size is not None:
            kw["max_grid_size"] = s.max_grid_size
        if s.neighbouring is not None:
            kw["neighbouring"] = s.neighbouring
        sp.Accountant(**kw)  # validate now, with the library's messages
        if any(_is_vector(spec) for spec, _ in s.mechanisms):
            return _vector_factory(kw)
        if any(spec.kind == "shuffled" for spec, _ in s.mechanisms):
            # no dominating pair is known: lower end from the attained pair, upper end from
            # deterministic batches (sampledprv.analytic.shuffle)
            sh = {k: kw[k] for k in ("eps_error", "delta_error", "neighbouring") if k in kw}
            return lambda: sp.ShuffleAccountant(**sh)
        return lambda: sp.Accountant(**kw)
    kw2: Dict[str, Any] = {"n_samples": s.n_samples, "progress": s.progress}
    for k in ("alpha", "seed", "certify", "bins", "neighbouring"):
        if s.__dict__[k] is not None:
            kw2[k] = s.__dict__[k]
    sp.SampledAccountant(**kw2)
    return lambda: sp.SampledAccountant(**kw2)


def _is_vector(spec: MechanismSpec) -> bool:
    """The spec is the ``gg-vector`` kind (aliases are resolved by the parser)."""
    return spec.kind == "gg-vector"


def _vector_factory(kw: Dict[str, Any]) -> Callable[[], Any]:
    """:class:`sampledprv.VectorGGAccountant` for compositions with ``gg-vector`` kinds
    (upper bound from Renyi DP over the l_beta ball, lower from concrete vectors)."""
    import sampledprv as sp

    if kw.get("neighbouring", "add_remove") != "add_remove":
        raise UsageError("gg-vector is accounted under add/remove neighbours only (the "
                         "worst case over the l_beta ball); drop --neighbouring substitute")
    inner = {k: kw[k] for k in ("eps_error", "delta_error", "max_grid_size") if k in kw}
    errors = {k: kw[k] for k in ("eps_error", "delta_error") if k in kw}
    return lambda: sp.VectorGGAccountant(**errors, accountant=lambda: sp.Accountant(**inner))


def accountant_description(acc: Any, s: Optional[Setup] = None) -> Dict[str, Any]:
    """The accountant's own :meth:`~sampledprv.core.contract.PrivacyAccountant.settings`."""
    from ..core.contract import PrivacyAccountant

    if not isinstance(acc, PrivacyAccountant):
        raise TypeError(f"expected a sampledprv accountant, got {type(acc).__name__}")
    return acc.settings()


def composed(s: Setup, factory: Callable[[], Any], free_value: Optional[float] = None):
    acc = factory()
    for i, (spec, count) in enumerate(s.mechanisms):
        try:
            acc.compose(spec.build(free_value), count, **s.tails.get(i, {}))
        except ValueError as exc:
            if type(exc).__name__ != "NoClosedFormError":
                raise
            # the library's advice names Python; on the command line it is a flag
            raise UsageError(f"{spec.build(free_value)!r} has no closed-form privacy-loss "
                             "law, so the analytic accountant cannot account it: add "
                             "--accountant sampled (e.g. --accountant sampled --n-samples "
                             "1e6; SampledAccountant in Python)") from None
    return acc
