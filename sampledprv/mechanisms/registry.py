r"""One registry through which accountants, samplers and the command line find a mechanism.

Every mechanism family lives in one module of :mod:`sampledprv.mechanisms` that defines
its spec(s) and registers one :class:`Family`: the spec types it covers, its exact
privacy-loss law, its loss samplers (Numba and numpy), how it behaves under each
neighbouring relation, and its command-line kinds.  Nothing else in the package
dispatches on spec types, so a new mechanism is one module (plus its tests).

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

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterator, Mapping, Optional, Tuple

from .base import Mechanism, NeighbouringRelation, as_relation

__all__ = ["CliKind", "Family", "register", "family_of", "families", "cli_kinds",
           "cli_aliases", "for_relation", "UnsupportedRelationError"]


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
class Family:
    r"""The hooks of one mechanism family (see the module docstring).

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
    renyi_costly : bool
        The bound is expensive (quadrature): the subsampling sums of
        :mod:`sampledprv.rdp` evaluate it at anchor orders only and interpolate by chords.
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


_FAMILIES: Dict[str, Family] = {}
_BY_TYPE: Dict[type, Family] = {}
_CLI: Dict[str, CliKind] = {}
_CLI_ALIASES: Dict[str, str] = {}


def register(family: Family) -> Family:
    """Add ``family`` to the registry (called once by its module at import).

    Raises
    ------
    ValueError
        When a spec type or a command-line kind is already registered.
    """
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


def families() -> Iterator[Family]:
    """All registered families, in registration order."""
    return iter(tuple(_FAMILIES.values()))


def cli_kinds() -> Dict[str, CliKind]:
    """Command-line kinds by name, in registration order."""
    return dict(_CLI)


def cli_aliases() -> Dict[str, str]:
    """Alias -> kind name."""
    return dict(_CLI_ALIASES)
