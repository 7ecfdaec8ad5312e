r"""One registry through which accountants, samplers and the command line find a mechanism.

Every mechanism family lives in one module that defines its spec(s) and registers one
:class:`Family`: the spec types it covers, its exact privacy-loss law, its loss samplers
(Numba, numpy, torch), its Renyi bound, how it behaves under each neighbouring relation,
its command-line kinds and, for a family with no closed-form law, the hooks the sampled
accountant calls.  The record holds every plug-in of the family; nothing else in the
package dispatches on spec types, so a new mechanism is one module (plus its tests).

One record, whatever was imported first
---------------------------------------
Most families live in :mod:`sampledprv.mechanisms` and are registered when it is
imported.  Two kinds of plug-in live higher up, and the registry finds both without
importing upward (the layer rule of ``tests/test_layout.py``) and without depending on
what was imported before:

* a plug-in computed by a higher layer (the Generalized Gaussian's quadrature bound is
  :mod:`sampledprv.rdp` numerics) is named in the record as a :class:`Lazy` reference,
  ``module:attribute``, imported when the field is first read;
* a family whose specs are defined by a higher layer (the batch samplers of
  :mod:`sampledprv.batch`) is declared in :data:`DEFERRED` with its module, its name and
  its command-line kinds; :func:`families`, :func:`family`, :func:`cli_kinds` and
  :func:`cli_kind` import that module when they need it, and :func:`register` refuses a
  family of a package module outside :mod:`sampledprv.mechanisms` that is not declared
  there (so a new one cannot be forgotten).

Both are plug-in declarations, like a package's entry points: the registry names where a
plug-in lives, and does not use its code until it is asked for it.

The canonical pair of a spec
----------------------------
Every hook speaks of one pair :math:`(P_0, Q_0)`: for an additive-noise mechanism
:math:`P_0` is the noise centred at 0 and :math:`Q_0` the noise centred at the
sensitivity; for a finite mechanism it is the two output laws the spec names.  The
privacy loss is :math:`\ell = \log p_0/q_0`.  Directions follow from the pair alone:
``remove`` is the law of :math:`\ell` under :math:`P_0`, ``add`` the law of
:math:`-\ell` under :math:`Q_0`.  The neighbouring relation enters only through
:meth:`Family.for_relation`, which returns the spec whose canonical pair is the worst
case under that relation (for example the same noise with twice the sensitivity under
substitution), or raises when the spec cannot certify the relation.
"""

from __future__ import annotations

import functools
import importlib
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterator, Mapping, Optional, Tuple

from .base import Mechanism, NeighbouringRelation, as_relation

__all__ = ["CliKind", "Family", "Lazy", "Deferred", "DEFERRED", "register", "family_of",
           "family", "families", "cli_kinds", "cli_kind", "cli_aliases", "for_relation",
           "hook", "is_registered", "method_hooks", "SPEC_HOOKS", "torch_from_kernel", "UnsupportedRelationError"]


class UnsupportedRelationError(ValueError):
    """A spec asked to certify a neighbouring relation it cannot certify."""


@dataclass(frozen=True)
class CliKind:
    """A command-line mechanism kind: ``"<name> key=value ..."``.

    Attributes
    ----------
    name : str
        The kind, e.g. ``"gaussian"``.
    required : tuple of tuples of str
        Each entry lists alternatives of which exactly one must be given.
    optional : tuple of str
        Parameters with defaults.
    free : tuple of str
        Parameters ``calibrate`` may solve for.
    example : str
        A complete example string.
    help : str
        One line for ``--help``.
    build : callable ``dict -> Mechanism``
        Makes the spec from parsed parameters (floats; integers already checked by
        ``integers``).  Raises :class:`ValueError` naming the parameter.
    aliases : tuple of str
        Other accepted names of the kind.
    integers : tuple of str
        Parameters that must be integers.
    vectors : tuple of str
        Parameters that are lists of numbers (``p=0.5/0.25/0.25`` on the command
        line, a list in config files).
    """

    name: str
    required: Tuple[Tuple[str, ...], ...]
    optional: Tuple[str, ...]
    free: Tuple[str, ...]
    example: str
    help: str
    build: Callable[[Dict[str, Any]], Mechanism]
    aliases: Tuple[str, ...] = ()
    integers: Tuple[str, ...] = ()
    vectors: Tuple[str, ...] = ()

    @property
    def parameters(self) -> Tuple[str, ...]:
        """Every parameter the kind accepts."""
        return tuple(a for alts in self.required for a in alts) + self.optional


def _no_relation(spec: Mechanism, relation: NeighbouringRelation) -> Mechanism:
    if relation is NeighbouringRelation.ADD_REMOVE:
        return spec
    raise UnsupportedRelationError(
        f"{type(spec).__name__} cannot certify the neighbouring relation "
        f"{relation.value!r}: its privacy loss is known only under 'add_remove'; use "
        "Accountant(neighbouring='add_remove')")


@dataclass(frozen=True)
class Lazy:
    """A plug-in that lives in a higher layer: ``getattr(import_module(module), attribute)``,
    imported when the :class:`Family` field holding it is first read."""

    module: str
    attribute: str

    def resolve(self) -> Any:
        return getattr(importlib.import_module(self.module), self.attribute)


#: torch kernels of the fused samplers' kinds (``numba_source``): kernel kind -> torch kind
_TORCH_OF_KERNEL = {"gaussian": "gauss", "laplace": "laplace", "gg": "gg"}


def torch_from_kernel(numba_source: Callable[[Any], Tuple[str, list]]
                      ) -> Callable[[Any], Tuple[str, float, float]]:
    """The ``torch_source`` of a family from its ``numba_source``: kernel kinds
    ``gaussian`` ``[mu]``, ``laplace`` ``[D/b]`` and ``gg`` ``[D/s, beta]`` become
    ``("gauss", mu, 2.0)``, ``("laplace", D/b, 1.0)`` and ``("gg", D/s, beta)``.  A spec
    whose kernel kind has no torch kernel raises :class:`ValueError`.  (An additive-noise
    family gives ``("additive", D/s, noise)`` itself, :mod:`.additive`.)"""

    def source(spec: Any) -> Tuple[str, float, float]:
        kind, kp = numba_source(spec)
        if kind not in _TORCH_OF_KERNEL:
            raise ValueError(f"no torch kernel for the sampler kind {kind!r} of {spec!r}")
        beta = {"gaussian": 2.0, "laplace": 1.0}.get(kind)
        return _TORCH_OF_KERNEL[kind], float(kp[0]), float(kp[1]) if beta is None else beta
    return source


@dataclass(frozen=True)
class Family:
    r"""The hooks of one mechanism family (see the module docstring).

    The last seven attributes (``loss_sampler`` to ``tilted_law``) are the sampled
    accountant's hooks, for a family whose law has no closed form (the batch samplers);
    each takes the spec first, ``direction`` is ``"remove"`` or ``"add"``
    (:mod:`sampledprv.sampled.draws.hooks` states the protocol; :func:`hook` binds them).

    Attributes
    ----------
    name : str
        Family name (the module's).
    types : tuple of type
        Spec classes the family accounts (exact type match, no subclasses).
    loss_pair : callable ``spec -> (law under P0, law under Q0)``
        Exact laws of :math:`\ell = \log p_0/q_0` as
        :class:`~sampledprv.core.law.LossDistribution` objects.
    numba_source : callable ``spec -> (sampler kind, params)``, optional
        The canonical pair for the fused sampling kernels: the name of a sampler kind
        (``"gaussian"`` ``[mu]``, ``"laplace"`` ``[D/b]``, ``"gg"`` ``[D/s, beta]``,
        ``"two_point"`` ``[eps, p, delta]``, ``"table"`` ``[n, values, cdf under P0,
        cdf under Q0]``; see :mod:`sampledprv.sampled.draws._mechloss`), or an
        :class:`~.additive.AdditiveNoise` with ``[D/s]``, and its parameters.  The kernel
        of a kind compiles on first use of that kind only.  The torch backend reads the
        same kinds.
    numpy_losses : callable ``spec -> (sample under P0, sample under Q0)``, optional
        ``f(rng, n)`` samplers of :math:`\ell` under :math:`P_0` and :math:`Q_0`.
    for_relation : callable ``(spec, relation) -> spec``
        The spec whose canonical pair is the worst case under ``relation``; raises
        :class:`UnsupportedRelationError` when the family cannot certify it.
    cli : tuple of CliKind
        Command-line kinds building specs of this family.
    format : callable ``spec -> str``, optional
        The mechanism string of a spec (inverse of the CLI parse).
    relations_note : str
        One line on the relation convention, for docs and error messages.
    renyi : callable ``(spec, order, direction) -> float``, optional
        A certified upper bound on the Renyi divergence of order ``order > 1`` of the
        canonical pair: :math:`D_\alpha(P_0\|Q_0)` for ``"remove"``,
        :math:`D_\alpha(Q_0\|P_0)` for ``"add"`` (rounded outward,
        :mod:`sampledprv.core.outward`; ``inf`` when infinite); raises :class:`ValueError` for a spec
        it cannot bound.  :func:`sampledprv.rdp.renyi_divergence` dispatches to it.
        A :class:`Lazy` reference when the bound needs a higher layer's numerics.
    renyi_costly : bool
        The bound is expensive (quadrature): the subsampling sums of
        :mod:`sampledprv.rdp` evaluate it at anchor orders only and interpolate by chords.
    torch_source : callable ``spec -> (torch kind, d, beta or noise)``, optional
        The torch backend's kernel for the canonical pair (:func:`torch_from_kernel`):
        ``"gauss"`` (``d = mu``), ``"laplace"`` (``d = D/b``), ``"gg"`` (``d = D/s``,
        shape ``beta``) or ``"additive"`` (``d = D/s``, the noise); ``None``: the torch
        backend refuses the spec.
    loss_sampler : callable ``(spec, direction) -> kernel source``, optional
        A Numba ``fill(state, out)``, a ``(fill, params)`` pair or ``sample(rng, size)``.
    numpy_loss_sampler : callable ``(spec, direction) -> sample(rng, size)``, optional
    torch_loss_sampler : callable ``(spec, direction) -> f(generator, size)``, optional
    conditional : callable ``(spec, direction) -> conditional sampler or None``, optional
        A sampler of a statistic whose envelope integrates part of the loss exactly
        (:mod:`sampledprv.sampled.certification.conditional`).
    dominating_compositions : callable ``(spec, conditional=True) -> tuple``, optional
        ``((name, ((spec, count), ...)), ...)``: compositions dominating the spec's pair.
    tilted_law : callable ``(spec, order, count) -> law or None``, optional
        The exactly computable tilted law of ``count`` compositions (remove direction).
    """

    name: str
    types: Tuple[type, ...]
    loss_pair: Callable[[Any], Tuple[Any, Any]]
    numba_source: Optional[Callable[[Any], Tuple[str, list]]] = None
    numpy_losses: Optional[Callable[[Any], Tuple[Callable, Callable]]] = None
    for_relation: Callable[[Any, NeighbouringRelation], Mechanism] = _no_relation
    cli: Tuple[CliKind, ...] = ()
    format: Optional[Callable[[Any], str]] = None
    relations_note: str = ""
    extras: Mapping[str, Any] = field(default_factory=dict)
    renyi: Optional[Callable[[Any, float, str], float]] = None
    renyi_costly: bool = False
    torch_source: Optional[Callable[[Any], Tuple[str, float, Any]]] = None
    loss_sampler: Optional[Callable[[Any, str], Any]] = None
    numpy_loss_sampler: Optional[Callable[[Any, str], Callable]] = None
    torch_loss_sampler: Optional[Callable[[Any, str], Callable]] = None
    conditional: Optional[Callable[[Any, str], Any]] = None
    dominating_compositions: Optional[Callable[..., tuple]] = None
    tilted_law: Optional[Callable[..., Any]] = None

    def __getattribute__(self, name: str) -> Any:
        value = object.__getattribute__(self, name)
        if type(value) is Lazy:        # a plug-in of a higher layer: import it now
            return value.resolve()
        return value


#: the sampled accountant's hooks of a :class:`Family` (:func:`hook`)
SPEC_HOOKS = ("loss_sampler", "numpy_loss_sampler", "torch_loss_sampler", "conditional",
              "dominating_compositions", "tilted_law")


@dataclass(frozen=True)
class Deferred:
    """Families registered by a module above :mod:`sampledprv.mechanisms`.

    Attributes
    ----------
    module : str
        The module whose import registers them.
    families : tuple of str
        Their names.
    kinds : tuple of str
        Their command-line kinds and aliases.
    """

    module: str
    families: Tuple[str, ...]
    kinds: Tuple[str, ...]


#: every family registered outside :mod:`sampledprv.mechanisms` (checked by
#: :func:`register`): the registry imports the module on the first lookup that needs it
DEFERRED: Tuple[Deferred, ...] = (
    Deferred("sampledprv.batch.random_allocation", ("random_allocation",),
             ("balls-and-bins", "balls-bins", "bnb", "random-allocation", "k-of-t",
              "allocation")),
    Deferred("sampledprv.batch.matrix_mechanism", ("matrix_mechanism",),
             ("bandmf", "banded-mf", "dp-ftrl", "matrix-mechanism")),
    # internal pairs of the sampled accountant and of the GG-vector lower bound
    Deferred("sampledprv.sampled.certification.subsampled_inputs",
             ("subsampled_user_pair", "spliced_symmetric_pair"), ()),
    Deferred("sampledprv.gg.vector_lower", ("gg_spread_subsampled_lower",), ()),
)


_FAMILIES: Dict[str, Family] = {}
_BY_TYPE: Dict[type, Family] = {}
_CLI: Dict[str, CliKind] = {}
_CLI_ALIASES: Dict[str, str] = {}


def register(family: Family) -> Family:
    """Add ``family`` to the registry (called once by its module at import).

    Raises
    ------
    ValueError
        When a spec type or a command-line kind is already registered, or a family of a
        package module outside :mod:`sampledprv.mechanisms` is not declared in
        :data:`DEFERRED` with its kinds.
    """
    _check_declared(family)
    if family.name in _FAMILIES:
        raise ValueError(f"mechanism family {family.name!r} is already registered")
    for t in family.types:
        if t in _BY_TYPE:
            raise ValueError(f"{t.__name__} is already registered by {_BY_TYPE[t].name!r}")
    for kind in family.cli:
        for n in (kind.name,) + kind.aliases:
            if n in _CLI or n in _CLI_ALIASES:
                raise ValueError(f"command-line kind {n!r} is already registered")
    _FAMILIES[family.name] = family
    for t in family.types:
        _BY_TYPE[t] = family
    for kind in family.cli:
        _CLI[kind.name] = kind
        for a in kind.aliases:
            _CLI_ALIASES[a] = kind.name
    return family


def _check_declared(family: Family) -> None:
    modules = {t.__module__ for t in family.types}
    outside = [m for m in modules if m.startswith("sampledprv.")
               and not m.startswith("sampledprv.mechanisms.")]
    if not outside:
        return
    decl = [d for d in DEFERRED if family.name in d.families]
    kinds = tuple(n for k in family.cli for n in (k.name,) + k.aliases)
    if not decl or not set(kinds) <= set(decl[0].kinds):
        raise ValueError(f"the family {family.name!r} of {sorted(outside)} is registered "
                         "outside sampledprv.mechanisms: declare it, with its command-line "
                         f"kinds {list(kinds)}, in registry.DEFERRED so that lookups find it "
                         "whatever was imported first")


def _load(deferred: Tuple[Deferred, ...] = DEFERRED) -> None:
    """Import the modules of ``deferred`` (each registers its families)."""
    for d in deferred:
        if not all(n in _FAMILIES for n in d.families):
            importlib.import_module(d.module)


def family_of(spec: object) -> Family:
    """The registered family of ``spec``.

    Raises
    ------
    TypeError
        When ``spec`` is not a registered mechanism spec (accountants turn this into
        their own message).
    """
    fam = _BY_TYPE.get(type(spec))
    if fam is None:
        raise TypeError(f"no registered mechanism family for {type(spec).__name__} "
                        f"({spec!r}); built-in specs live in sampledprv.mechanisms")
    return fam


def for_relation(spec: Mechanism, relation: object) -> Mechanism:
    """The spec whose canonical pair is the worst case of ``spec`` under ``relation``."""
    rel = as_relation(relation)
    return family_of(spec).for_relation(spec, rel)


def family(name: str) -> Family:
    """The family called ``name`` (those of :data:`DEFERRED` included).

    Raises
    ------
    KeyError
        When no family has that name.
    """
    if name not in _FAMILIES:
        _load(tuple(d for d in DEFERRED if name in d.families))
    if name not in _FAMILIES:
        raise KeyError(f"no mechanism family {name!r}; registered: {sorted(_FAMILIES)}")
    return _FAMILIES[name]


def families() -> Iterator[Family]:
    """All families (those of :data:`DEFERRED` included), in registration order."""
    _load()
    return iter(tuple(_FAMILIES.values()))


def cli_kinds() -> Dict[str, CliKind]:
    """Every command-line kind by name (those of :data:`DEFERRED` included), in
    registration order."""
    _load()
    return dict(_CLI)


def cli_aliases() -> Dict[str, str]:
    """Alias -> kind name, for every kind."""
    _load()
    return dict(_CLI_ALIASES)


def cli_kind(name: str) -> Optional[CliKind]:
    """The command-line kind ``name`` or its alias; ``None`` when there is none.  Imports
    only the :data:`DEFERRED` module that declares ``name``, if any (the command line's
    start-up needs no more)."""
    if name not in _CLI and name not in _CLI_ALIASES:
        _load(tuple(d for d in DEFERRED if name in d.kinds))
    return _CLI.get(_CLI_ALIASES.get(name, name))


def method_hooks(*names: str) -> Dict[str, Callable]:
    """Plug-ins (``Family`` keyword arguments) that call the spec's own methods of these
    names, ``plug(spec, *args) = spec.<name>(*args)``: for a family whose spec class
    implements its hooks (a subclass's override is the one called)."""
    def calls(name: str) -> Callable:
        def plug(spec: Any, *args: Any, **kwargs: Any) -> Any:
            return getattr(spec, name)(*args, **kwargs)
        plug.__name__ = plug.__qualname__ = name
        return plug
    return {name: calls(name) for name in names}


def is_registered(obj: object) -> bool:
    """Whether ``obj`` is a spec of a registered family."""
    return type(obj) in _BY_TYPE


def hook(obj: object, name: str) -> Optional[Callable]:
    """The sampled accountant's hook ``name`` (one of :data:`SPEC_HOOKS`) for ``obj``,
    bound to it: the family's plug-in for a registered spec (``None`` when the family
    has none), else ``obj``'s own method of that name (a user-defined loss source,
    protocol of :mod:`sampledprv.sampled.draws.hooks`), else ``None``."""
    if name not in SPEC_HOOKS:
        raise ValueError(f"name must be one of {SPEC_HOOKS}, got {name!r}")
    fam = _BY_TYPE.get(type(obj))
    if fam is None:
        own = getattr(obj, name, None)
        return own if callable(own) else None
    plug = getattr(fam, name)
    return None if plug is None else functools.partial(plug, obj)
