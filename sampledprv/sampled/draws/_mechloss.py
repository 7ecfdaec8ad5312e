r"""Privacy-loss samplers of the analytic mechanism specs: one Numba fill per sampler kind.

A built-in source is the pair ``(fill, params)``: ``params`` is a ``float64`` vector
built by :func:`builtin_params` from a spec and a direction, and ``fill(state, params,
out)`` writes ``len(out)`` i.i.d. privacy-loss samples.  Each family's
``numba_source`` hook (:mod:`sampledprv.mechanisms.registry`) names the *sampler kind*
of its canonical pair (a string: ``"gaussian"``, ``"laplace"``, ``"gg"``,
``"two_point"``, ``"table"``, or an :class:`~sampledprv.mechanisms.additive.AdditiveNoise`
description, whose fill :func:`_additive_fill` makes on first use) and gives its
parameters; :func:`kind_fill` returns the fill of that kind only.  Each fill is its own
function, compiled on the first use of its kind and cached on disk under its own name
(``_fill_<kind>``; the sampling kernel calls it by address, see
:mod:`sampledprv.sampled.histograms._fill_call`): a process that samples Gaussians
never compiles the Generalized Gaussian block sampler (cold start).  The random
numbers each kind consumes are those of the former single fill (one branch of it), so
histograms are bit-identical to it for a given seed.

Base pairs (``P0`` = noise centred at 0, ``Q0`` = noise centred at the sensitivity
``D``), loss :math:`\ell(x) = \log p_0(x)/q_0(x)`:

* Gaussian, :math:`\mu = D/\sigma`, :math:`z \sim N(0,1)`: under ``P0``
  :math:`\ell = \mu^2/2 - \mu z`; under ``Q0`` :math:`\ell = -\mu^2/2 - \mu z`;
* Laplace, :math:`d = D/b`, ``y = x/b``: :math:`\ell = |y - d| - |y|`;
* GG(beta, s), :math:`d = D/s`, :math:`y \sim GG(\beta, 1)`: under ``P0``
  :math:`\ell = |y - d|^\beta - |y|^\beta`; under ``Q0`` (``x = D + s y``)
  :math:`\ell = |y|^\beta - |y + d|^\beta`;
* two-point laws (randomized response, pure DP, approximate DP) with
  :math:`\varepsilon`, ``p`` (probability of :math:`+\varepsilon`) and ``delta``:
  under ``P0``: :math:`+\infty` w.p. ``delta``, :math:`+\varepsilon` w.p.
  ``(1-delta) p``, :math:`-\varepsilon` otherwise; under ``Q0``: :math:`-\infty` w.p.
  ``delta``, :math:`+\varepsilon` w.p. ``(1-delta)(1-p)``, :math:`-\varepsilon` otherwise.

* tabulated laws (every discrete family: binomial, discrete Laplace and Gaussian, k-ary
  randomized response, exponential mechanism, finite pairs): ``n`` loss values with
  their cumulative masses under ``P0`` and under ``Q0``, drawn by inverse CDF (bisection).

Directions (mode): remove = :math:`\ell(x)`, :math:`x \sim P_0`; add =
:math:`-\ell(x)`, :math:`x \sim Q_0`; subsampled remove =
:math:`\log(1 - q + q e^{\ell(x)})`, :math:`x \sim (1-q)Q_0 + qP_0`; subsampled add =
:math:`-\log(1 - q + q e^{\ell(x)})`, :math:`x \sim Q_0`; symmetrized (the
:class:`~sampledprv.mechanisms.substitution.SymmetricDominatingPair` of a subsampled
member with :math:`\ell_q = \log(1 - q + q e^{\ell})`): with probability
:math:`a = P^*(\ell_q > 0)` a subsampled-remove draw conditioned on being positive, with
probability :math:`b = Q^*(\ell_q > 0)` minus a draw of :math:`\ell_q(x)`,
:math:`x \sim Q_0`, conditioned on being positive, else 0 (``a`` and ``b`` exact, from
the member's loss law; the conditioning by rejection).

A ``d``-dimensional GG is sampled as the 1-D mechanism only where that is exact
(``beta = 2``); otherwise :meth:`GeneralizedGaussian.one_dimensional` refuses it,
because spreading the :math:`\ell_\beta` sensitivity over coordinates can leak more
than one coordinate (see :mod:`sampledprv.gg.dimension`).  ``GGNMax`` is sampled as its 1-D GG (sensitivity 1).
"""

from __future__ import annotations

import math
import types
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np
from numba import njit

from ... import mechanisms as M
from ...mechanisms.additive import AdditiveNoise
from ...mechanisms.base import Direction, as_direction
from ...mechanisms.registry import family_of
from .rng import exponential, normal, random_sign, uniform, uniform_aux, uniform_open
from ._ggblock import GG_HEAD, gg_fill
from .samplers import gg_draw, gg_setup, pow_code, subsampled_loss

__all__ = ["builtin_params", "builtin_source", "kind_fill", "kind_of_fill", "SAMPLER_KINDS",
           "KIND_CODES"]

#: sampler kind -> the code stored in ``params[0]`` (kept from the single-fill layout)
KIND_CODES: Dict[str, float] = {"gaussian": 0.0, "laplace": 1.0, "gg": 2.0,
                                "two_point": 3.0, "table": 4.0}
MODE_REMOVE, MODE_ADD, MODE_SUB_REMOVE, MODE_SUB_ADD, MODE_SYM = 0.0, 1.0, 2.0, 3.0, 4.0
_HEAD = GG_HEAD  # params[0:6] = kind, mode, q, a, b, unused; kind parameters from params[6]


def _gg_kind_params(kp: List[float]) -> List[float]:
    """``[d, beta]`` -> ``[d] + gg_setup(beta)`` (the sampler constants)."""
    if len(kp) != 2:
        raise ValueError(f"sampler kind 'gg' takes [d, beta], got {kp!r}")
    return [kp[0]] + [float(x) for x in gg_setup(kp[1])]


#: sampler kind -> expansion of the family's parameters into the kernel's (identity
#: where absent)
_EXPAND: Dict[str, Callable[[List[float]], List[float]]] = {"gg": _gg_kind_params}


def _base(mech: M.Mechanism) -> Tuple[str, List[float]]:
    """``(sampler kind, kernel parameters)`` from the spec's family (``numba_source``)."""
    try:
        fam = family_of(mech)
    except TypeError:
        fam = None
    if fam is None or fam.numba_source is None:
        raise TypeError(f"no built-in privacy-loss sampler for {mech!r}")
    kind, kp = fam.numba_source(mech)
    if isinstance(kind, AdditiveNoise):
        _additive_fill(kind)
        return kind.name, [float(x) for x in kp]
    if kind not in KIND_CODES:
        raise ValueError(f"{fam.name}.numba_source returned the sampler kind {kind!r}; "
                         f"known kinds: {sorted(KIND_CODES)}")
    kp = [float(x) for x in kp]
    return kind, _EXPAND.get(kind, lambda v: v)(kp)


def builtin_source(mech: M.Mechanism, direction: str) -> Tuple[str, np.ndarray]:
    """``(sampler kind, params)`` of a spec in a direction: the kernel calls
    ``kind_fill(kind)(state, params, out)``.

    Raises
    ------
    TypeError
        When ``mech`` is not one of the analytic specs of :mod:`sampledprv.mechanisms`.
    """
    remove = as_direction(direction) is Direction.REMOVE
    from ...mechanisms.substitution import SymmetricDominatingPair
    if isinstance(mech, SymmetricDominatingPair):
        return _symmetrized_params(mech)
    q = 1.0
    sub = isinstance(mech, M.PoissonSubsampled)
    if sub:
        q = mech.q
        mech = mech.mechanism
    kind, kp = _base(mech)
    if sub:
        mode = MODE_SUB_REMOVE if remove else MODE_SUB_ADD
    else:
        mode = MODE_REMOVE if remove else MODE_ADD
    return kind, np.array([KIND_CODES.get(kind, _ADDITIVE_CODE), mode, q, 0.0, 0.0, 0.0] + kp,
                          dtype=np.float64)


def builtin_params(mech: M.Mechanism, direction: str) -> np.ndarray:
    """``float64`` parameter vector of the kind's fill for a spec and a direction."""
    return builtin_source(mech, direction)[1]


def _symmetrized_params(pair: object) -> Tuple[str, np.ndarray]:
    """Parameters of the symmetrized mode: the member's base kind, its rate ``q`` and the
    exact masses ``a = P*(l > 0)``, ``b = Q*(l > 0)`` (the pair is symmetric: both
    directions draw the same law)."""
    from ...mechanisms.relations import loss_pair
    member = pair.member                                  # type: ignore[attr-defined]
    if not isinstance(member, M.PoissonSubsampled):
        raise TypeError(f"no built-in privacy-loss sampler for {pair!r}")
    kind, kp = _base(member.mechanism)
    q = member.q
    if kind == "table":
        # from the kernel's own table, so that "l > 0" means what the rejection step sees
        # (ties at 0 in the analytic law may be tiny positive values here, or the reverse)
        n = int(kp[0])
        vals = np.asarray(kp[1:1 + n])
        cum_p, cum_q = np.asarray(kp[1 + n:1 + 2 * n]), np.asarray(kp[1 + 2 * n:1 + 3 * n])
        mass_p = np.diff(np.concatenate([[0.0], cum_p[:-1], [1.0]]))
        mass_q = np.diff(np.concatenate([[0.0], cum_q[:-1], [1.0]]))
        pos = vals > 0
        b = math.fsum(mass_q[pos])
        a = (1.0 - q) * b + q * math.fsum(mass_p[pos])
    else:                    # continuous base loss: no mass at l = 0
        under_p, under_q = loss_pair(member)
        zero = np.zeros(1)
        a = float(under_p.sf(zero)[0])
        b = float(under_q.sf(zero)[0])
    if not (a > 0.0 and a + b <= 1.0 + 1e-12):
        raise ValueError(f"{pair!r}: the masses P*(l > 0) = {a!r} and Q*(l > 0) = {b!r} do "
                         "not define a law")
    return kind + "_sym", np.array([KIND_CODES.get(kind, _ADDITIVE_CODE), MODE_SYM, q, a, b,
                                    0.0] + kp, dtype=np.float64)


# ---- one privacy loss of the canonical pair, per kind: loss(state, prm, from_p) ----------
@njit(inline="always")
def _loss_gaussian(state, prm, from_p):  # pragma: no cover - numba
    mu = prm[_HEAD]
    z = normal(state)
    return mu * (0.5 * mu - z) if from_p else -mu * (0.5 * mu + z)


@njit(inline="always")
def _loss_laplace(state, prm, from_p):  # pragma: no cover - numba
    d = prm[_HEAD]
    e = exponential(state)
    y = random_sign(state) * e
    if from_p:
        return abs(y - d) - e
    return e - abs(y + d)


@njit(inline="always")
def _loss_two_point(state, prm, from_p):  # pragma: no cover - numba
    # two-point law with atoms at +-inf
    eps = prm[_HEAD]
    p = prm[_HEAD + 1]
    delta = prm[_HEAD + 2]
    u = uniform(state)
    if u < delta:
        return math.inf if from_p else -math.inf
    if from_p:
        return eps if u < delta + (1.0 - delta) * p else -eps
    return eps if u < delta + (1.0 - delta) * (1.0 - p) else -eps


@njit(inline="always")
def _loss_table(state, prm, from_p):  # pragma: no cover - numba
    # prm[_HEAD] = n, then n loss values, n cumulative masses under P0, n under Q0;
    # the first index whose cumulative mass exceeds a uniform draw (bisection)
    n = int(prm[_HEAD])
    vals = _HEAD + 1
    cum = vals + n if from_p else vals + 2 * n
    u = uniform(state)
    lo = 0
    hi = n - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if prm[cum + mid] > u:
            hi = mid
        else:
            lo = mid + 1
    return prm[vals + lo]


@njit(cache=True)
def _loss_gg(state, prm, from_p):  # pragma: no cover - numba
    # a call, not inlined: only the symmetrized mode draws one GG loss at a time, and the
    # rejection sampler is large (compiled once and cached on its own)
    d = prm[_HEAD]
    o = _HEAD + 1
    y, yb = gg_draw(state, prm, o)
    if from_p:
        return pow_code(abs(y - d), prm, o) - yb
    return yb - pow_code(abs(y + d), prm, o)


# ---- fast paths: fast(state, prm, out) -> True when it filled ``out`` ---------------------
@njit(inline="always")
def _fast_none(state, prm, out):  # pragma: no cover - numba
    return False


@njit(inline="always")
def _fast_gaussian(state, prm, out):  # pragma: no cover - numba
    mode = prm[1]
    if mode > MODE_ADD:
        return False
    # remove: mu^2/2 - mu z; add: -(-mu^2/2 - mu z) = mu^2/2 + mu z (same law)
    mu = prm[_HEAD]
    c = 0.5 * mu * mu
    sgn = -mu if mode == MODE_REMOVE else mu
    for i in range(out.shape[0]):
        out[i] = c + sgn * normal(state)
    return True


@njit(inline="always")
def _fast_laplace(state, prm, out):  # pragma: no cover - numba
    mode = prm[1]
    if mode > MODE_ADD:
        return False
    # remove: |y - d| - |y| with y = +-E; add: |y + d| - |y| (y = +-E, E ~ Exp(1))
    d = prm[_HEAD] if mode == MODE_REMOVE else -prm[_HEAD]
    for i in range(out.shape[0]):
        e = exponential(state)
        y = random_sign(state) * e
        out[i] = abs(y - d) - e
    return True


# ---- the fills of a kind: module-level templates, copied per kind ----------------------
# Each kind's fill is a copy of one of these templates whose globals ``loss`` / ``fast`` /
# ``positive_member_loss`` are that kind's (:func:`_jit_copy`), with its own qualified
# name: Numba caches a function on disk by file and qualified name, so every kind's fill
# has its own cache entry and a warm process loads it instead of compiling it.
def _fill_template(state, prm, out):  # pragma: no cover - numba
    if fast(state, prm, out):  # noqa: F821 - a global of each copy
        return
    mode = prm[1]
    q = prm[2]
    sub = mode >= MODE_SUB_REMOVE
    negate = mode == MODE_ADD or mode == MODE_SUB_ADD
    mix = mode == MODE_SUB_REMOVE
    always_p = mode == MODE_REMOVE
    for i in range(out.shape[0]):
        from_p = always_p
        if mix:
            from_p = uniform_aux(state) < q
        y = loss(state, prm, from_p)  # noqa: F821 - a global of each copy
        if sub:
            y = subsampled_loss(y, q)
        out[i] = -y if negate else y


def _positive_member_loss_template(state, prm, q, mixed):  # pragma: no cover - numba
    r"""A draw of :math:`\ell_q(x)` conditioned on ``> 0``: ``x`` from the member's
    ``P*`` (``mixed``) or ``Q*``."""
    while True:
        from_p = uniform_aux(state) < q if mixed else False
        y = subsampled_loss(loss(state, prm, from_p), q)  # noqa: F821 - a global
        if y > 0.0:
            return y


def _fill_sym_template(state, prm, out):  # pragma: no cover - numba
    q = prm[2]
    a = prm[3]
    b = prm[4]
    for i in range(out.shape[0]):
        u = uniform(state)
        first = u < a       # a run-time bool: one compiled signature, not two literals
        if first:
            out[i] = positive_member_loss(state, prm, q, first)  # noqa: F821 - a global
        elif u < a + b:
            out[i] = -positive_member_loss(state, prm, q, first)  # noqa: F821
        else:
            out[i] = 0.0


def _jit_copy(template: Callable, qualname: str, cache: bool, **glb: Any) -> Callable:
    """A jitted copy of ``template`` with the globals ``glb`` added and its own
    qualified name (its own on-disk cache entry when ``cache``)."""
    g = dict(template.__globals__)
    g.update(glb)
    func = types.FunctionType(template.__code__, g, template.__name__,
                              template.__defaults__, template.__closure__)
    func.__module__ = template.__module__
    func.__doc__ = template.__doc__
    func.__qualname__ = qualname
    return njit(cache=cache)(func)


def make_fill(name: str, loss: Callable, fast: Callable = _fast_none,
              cache: bool = True) -> Tuple[Callable, Callable]:
    r"""The fills ``(fill, fill_sym)`` of the sampler kind ``name``: ``fill(state, prm,
    out)`` for the remove, add and subsampled modes, ``fill_sym`` for the symmetrized mode.

    ``loss(state, prm, from_p)`` draws one privacy loss :math:`\ell(x)` of the canonical
    pair with :math:`x \sim P_0` (``from_p``) or :math:`Q_0`; ``fast(state, prm, out)``
    may fill ``out`` itself for some modes (returning ``True``).  The mode branches are
    constant over a run (perfectly predicted).  The symmetrized mode (fixed-size batches
    under substitution, rare) is a kind of its own (``<kind>_sym``), so the common
    fills do not compile it: compile time is what a cold start pays.  Each fill is
    compiled on its first use only, and cached on disk under ``_fill_<name>`` when
    ``cache``.
    """
    pml = _jit_copy(_positive_member_loss_template, f"_positive_member_loss_{name}", cache,
                    loss=loss)
    fill_sym = _jit_copy(_fill_sym_template, f"_fill_{name}_sym", cache,
                         positive_member_loss=pml)
    fill = _jit_copy(_fill_template, f"_fill_{name}", cache, loss=loss, fast=fast)
    return fill, fill_sym


def _with_sym(kinds: Dict[str, Tuple[Callable, Callable]]) -> Dict[str, Callable]:
    out: Dict[str, Callable] = {}
    for k, (fill, fill_sym) in kinds.items():
        out[k] = fill
        out[k + "_sym"] = fill_sym
    return out


def _gg_fills() -> Tuple[Callable, Callable]:
    # every mode but the symmetrized one is the block sampler itself (no wrapper: each
    # level of calls is optimized again by LLVM when the caller compiles)
    _, fill_sym = make_fill("gg", _loss_gg)
    return gg_fill, fill_sym


#: sampler kind -> its fill (each compiled on first use, and cached on disk)
SAMPLER_KINDS: Dict[str, Callable] = _with_sym({
    "gaussian": make_fill("gaussian", _loss_gaussian, _fast_gaussian),
    "laplace": make_fill("laplace", _loss_laplace, _fast_laplace),
    "gg": _gg_fills(),                                  # the block path: every mode
    "two_point": make_fill("two_point", _loss_two_point),
    "table": make_fill("table", _loss_table),
})


_ADDITIVE_CODE = 5.0      #: ``params[0]`` of additive-noise kinds (not read by the fills)
_ADDITIVE: Dict[str, AdditiveNoise] = {}


def _additive_fill(noise: AdditiveNoise) -> Callable:
    r"""The fill of an additive-noise family (:mod:`sampledprv.mechanisms.additive`),
    made on first use and registered as the sampler kind ``noise.name``.

    With :math:`d` = ``params[6]`` and :math:`z` = ``ppf(U)``, :math:`U` uniform on
    :math:`(0, 1)`: from :math:`P_0` the loss is :math:`\log f(z) - \log f(z - d)`; from
    :math:`Q_0` (output :math:`z + d`) it is :math:`\log f(z + d) - \log f(z)`.
    """
    known = _ADDITIVE.get(noise.name)
    if known is not None:
        if known != noise:
            raise ValueError(f"two additive noises are named {noise.name!r}")
        return SAMPLER_KINDS[noise.name]
    if noise.name in SAMPLER_KINDS:
        raise ValueError(f"additive noise name {noise.name!r} is a built-in sampler kind")
    logpdf = njit(inline="always")(noise.logpdf)
    ppf = njit(inline="always")(noise.ppf)

    @njit(inline="always")
    def loss(state, prm, from_p):  # pragma: no cover - numba
        d = prm[_HEAD]
        z = ppf(uniform_open(state))
        if from_p:
            return logpdf(z) - logpdf(z - d)
        return logpdf(z + d) - logpdf(z)

    # cached on disk only for the package's own noises (Numba's cache does not see edits
    # of a user's log-density; the package's are covered by its source digest)
    own = getattr(noise.logpdf, "__module__", "").startswith("sampledprv.")
    fills = _with_sym({noise.name: make_fill(noise.name, loss, cache=own)})
    _ADDITIVE[noise.name] = noise
    SAMPLER_KINDS.update(fills)
    return fills[noise.name]


def kind_of_fill(fill: Callable) -> Optional[str]:
    """The sampler kind whose fill is ``fill`` (``None`` for a user's fill)."""
    for k, f in SAMPLER_KINDS.items():
        if f is fill:
            return k
    return None


def kind_fill(kind: str) -> Callable:
    """The jitted ``fill(state, params, out)`` of a sampler kind."""
    try:
        return SAMPLER_KINDS[kind]
    except KeyError:
        raise ValueError(f"unknown sampler kind {kind!r}; known: {sorted(SAMPLER_KINDS)}") \
            from None


def builtin_loss_sampler(mech: M.Mechanism, direction: str) -> Tuple[Callable, np.ndarray]:
    """``(fill, params)``: the kernel protocol for an analytic spec."""
    kind, params = builtin_source(mech, direction)
    return kind_fill(kind), params
