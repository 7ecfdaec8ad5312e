r"""Checks of user inputs: numbers, shapes, NaN, loss ranges and normalization.

Used by :class:`~.inputs.LogDensityPair` and :class:`~.inputs.PrivacyLossSampler` (their
``check`` methods and their samplers); every check raises :class:`ValueError` naming the
user's function and the fix.
"""

from __future__ import annotations

import math
from typing import Callable, Optional

import numpy as np

from .loss_identity import from_draws, identity_violation
from .tail_inputs import as_loss_range, as_renyi
from .user_calls import LOGDENSITY_SIGNATURE, SAMPLER_SIGNATURE, call_user
from .tails import TailBound

__all__ = ["normalize_tails", "check_range", "finite_or_raise", "numeric", "call_sampler",
           "ratio_mean", "markov_check", "call_logdensity", "check_identities",
           "check_upper_tails", "TAIL_CHECK_N"]

#: false-alarm probability of :func:`check_identities` (per call)
IDENTITY_LEVEL = 1e-6


def normalize_tails(obj: object) -> None:
    """Validate ``renyi``/``loss_range`` of a frozen input; tables become hashable."""
    object.__setattr__(obj, "renyi", as_renyi(obj.renyi))  # type: ignore[attr-defined]
    lr = as_loss_range(obj.loss_range)  # type: ignore[attr-defined]
    if lr is not None and lr[0] == lr[1]:
        lr = lr[0]
    object.__setattr__(obj, "loss_range", lr)


def check_range(obj: object, y: np.ndarray, direction: str) -> None:
    lr = as_loss_range(obj.loss_range)  # type: ignore[attr-defined]
    if lr is not None:
        lo, hi = lr[0] if direction == "remove" else lr[1]
        TailBound(np.zeros(0), np.zeros(0), lo, hi).check_values(
            y, getattr(obj, "name", type(obj).__name__), direction)


def finite_or_raise(values: np.ndarray, w: np.ndarray, what: str) -> None:
    bad = np.flatnonzero(np.isnan(values))
    if bad.size:
        i = int(bad[0])
        raise ValueError(
            f"{what} returned NaN at w = {np.asarray(w)[i]!r} ({bad.size} of {values.size} "
            "draws); make it return a number (-inf where the density is zero) for every "
            "output its sampler can produce")


def numeric(value: object, name: str) -> np.ndarray:
    """``value`` (what the user's function ``name`` returned) as a float64 array.

    Raises :class:`ValueError` naming the function when it returned something that is
    not numbers (strings, objects, complex values): numpy would otherwise convert
    numeric strings silently or fail with its own message."""
    try:
        arr = np.asarray(value)
    except Exception as err:  # noqa: BLE001 - ragged lists and the like
        raise ValueError(f"{name} returned a {type(value).__name__} that is not an array "
                         f"of numbers ({err}); it must return a float array") from None
    if arr.dtype.kind not in "biuf":
        example = arr.reshape(-1)[0] if arr.size else value
        raise ValueError(
            f"{name} returned values of dtype {arr.dtype} (first: {example!r}, "
            f"{type(example).__name__}); it must return numbers, e.g. a float64 numpy array")
    return arr.astype(np.float64, copy=False)


def call_sampler(fn: Callable, rng: np.random.Generator, size: int, name: str,
                  dim: Optional[int] = None) -> np.ndarray:
    out = numeric(call_user(fn, name, SAMPLER_SIGNATURE, rng, size), name)
    if out.ndim == 0 or out.shape[0] != size or out.ndim > 2:
        raise ValueError(
            f"{name}(rng, size={size}) returned an array of shape {out.shape}; it must "
            f"return shape ({size},) for scalar outputs or ({size}, d) for vector outputs")
    if dim is not None and out.ndim == 2 and out.shape[1] != dim:
        raise ValueError(f"{name} returned outputs of dimension {out.shape[1]} but the "
                         f"other sampler returns dimension {dim}; both must agree")
    if np.isnan(out).any():
        i = int(np.flatnonzero(np.isnan(out).reshape(size, -1).any(axis=1))[0])
        raise ValueError(f"{name} returned NaN (first at draw {i}: {out[i]!r}); fix the "
                         "sampler so that it only returns outputs of the mechanism")
    return out


def ratio_mean(log_ratio: np.ndarray) -> tuple[float, float]:
    """Mean and standard error of ``exp(log_ratio)``, computed in log space so that
    neither overflows (a huge ratio gives a huge finite mean, never ``inf``/``nan``)."""
    finite = log_ratio[np.isfinite(log_ratio)]
    if np.any(log_ratio == np.inf):
        return math.inf, 0.0
    if finite.size == 0:
        return 0.0, 0.0
    top = float(finite.max())
    scaled = np.exp(log_ratio - top)               # in [0, 1]; -inf gives 0
    m, sd = float(scaled.mean()), float(scaled.std())
    scale = math.exp(min(top, 700.0))
    return m * scale, sd * scale / math.sqrt(log_ratio.size)


#: false-alarm level of each Markov count test in :meth:`LogDensityPair.check`
_MARKOV_LOG_LEVEL = math.log(1e12)


def markov_check(log_ratio: np.ndarray, which: str, other_name: str) -> None:
    r"""Raise when the draws cannot come from ``exp(log{which})``.

    For draws from :math:`P`, :math:`R = q/p` has :math:`E[R] \le 1`, so by Markov
    :math:`P(R \ge x) \le 1/x` whatever the tails: the number of draws with
    :math:`R \ge x` is dominated by a binomial with rate :math:`1/x`.  Counts far above
    it (Bernstein's bound at level ``1e-12`` per threshold) mean that the sampler
    does not draw from ``exp(log{which})``.  Unlike the mean, this statistic cannot
    overflow or be drowned by one huge ratio."""
    n = log_ratio.size
    for x_log in np.log(2.0) * np.arange(1, 64):
        count = int(np.count_nonzero(log_ratio >= x_log))
        rate = math.exp(-x_log)
        allowed = n * rate + math.sqrt(2.0 * n * rate * _MARKOV_LOG_LEVEL) \
            + _MARKOV_LOG_LEVEL / 3.0
        if count > allowed:
            raise ValueError(
                f"sample_{which} does not look like it draws from exp(log{which}): "
                f"{count} of {n} draws have exp({other_name} - log{which}) >= "
                f"{math.exp(x_log):.3g}, but for draws from exp(log{which}) at most about "
                f"{allowed:.0f} can (Markov's inequality, E[exp({other_name} - "
                f"log{which})] <= 1). Check that sample_{which} samples the density "
                f"exp(log{which}) (same location, scale and parameterization), and that "
                f"log{which} and {other_name} are normalized consistently")
        if count == 0:
            return


def call_logdensity(fn: Callable[[np.ndarray], np.ndarray], w: np.ndarray,
                     name: str) -> np.ndarray:
    out = numeric(call_user(fn, name, LOGDENSITY_SIGNATURE.replace("logp", name), w), name)
    if out.shape != (w.shape[0],):
        raise ValueError(
            f"{name}(w) with w of shape {w.shape} returned shape {out.shape}; it must be "
            f"vectorized and return one log-density per output, shape ({w.shape[0]},)")
    finite_or_raise(out, w, name)
    if np.any(out == np.inf):
        i = int(np.flatnonzero(out == np.inf)[0])
        raise ValueError(f"{name} returned +inf at w = {w[i]!r}; a log-density must be "
                         "finite or -inf")
    return out


def check_identities(name: str, losses: dict, symmetric: bool) -> None:
    r"""Raise when loss draws contradict the change-of-measure identities.

    ``losses`` maps ``"remove"`` (``log p/q`` under ``P``) and, when drawn, ``"add"``
    (``log q/p`` under ``Q``) to arrays.  Both present: the two-sample identities of
    :mod:`.loss_identity` (the two-sided form of :math:`E_P[q/p] = 1 = E_Q[p/q]`).
    ``symmetric``: also the one-sample form on each array, the evidence a symmetric
    declaration needs.  False-alarm probability at most :data:`IDENTITY_LEVEL`."""
    rem, add = losses.get("remove"), losses.get("add")
    tests = []
    if rem is not None and add is not None:
        tests.append((rem, add, "the remove and add losses"))
    if symmetric:
        tests += [(y, None, f"the {d} losses of a pair declared symmetric=True")
                  for d, y in (("remove", rem), ("add", add)) if y is not None]
    for y, other, what in tests:
        found = identity_violation(from_draws(y), None if other is None else from_draws(other),
                                   IDENTITY_LEVEL / max(len(tests), 1))
        if found is not None:
            left, right = found["left"], found["right"]
            raise ValueError(
                f"{name}: {what} ({y.size} check draws) contradict {found['identity']} at "
                f"t = {found['t']:.3g}, which holds for every privacy loss (Y = log p/q "
                f"under P, Y' = log q/p under Q): the two sides lie in [{left[0]:.3g}, "
                f"{left[1]:.3g}] and [{right[0]:.3g}, {right[1]:.3g}]. A sampler narrower "
                "than its density, truncated, shifted or scaled does this and would give "
                "an optimistic certificate: check that each sampler draws from its density"
                + ("; drop symmetric=True unless the pair is symmetric" if symmetric
                   else ""))


#: draws of each sampler for :func:`check_upper_tails` (a sampler truncated where the
#: other density puts 1e-4 of its mass is seen in about 25 draws)
TAIL_CHECK_N = 1 << 20
#: spacing of the thresholds of :func:`check_upper_tails` (nats)
_TAIL_STEP = 0.25


def check_upper_tails(name: str, remove: np.ndarray, add: np.ndarray,
                      level: float = IDENTITY_LEVEL) -> None:
    r"""Raise when a sampler misses an upper tail that the other sampler's draws reveal.

    With :math:`L = \log p/q`, the change of measure gives, for every :math:`t`,

    .. math:: P(L > t) \ge E_Q[e^{L} 1\{t < L < \infty\}] \ge e^{t}\, Q(t < L < \infty)

    (equality in the first step but for the mass of :math:`P` where :math:`q = 0`), and
    the same with the roles swapped: :math:`Q(-L > t) \ge e^{t} P(-\infty < L < -t)`.
    ``remove`` holds draws of :math:`Y = L` under ``P`` (``sample_p``), ``add`` draws of
    :math:`Y' = -L` under ``Q`` (``sample_q``).  A Clopper-Pearson upper bound on the
    left side below :math:`e^t` times a Clopper-Pearson lower bound on the right side,
    at some threshold, refuses the pair: a ``sample_p`` cut short of its upper tail (a
    truncation on one side) does this, which the identities of :mod:`.loss_identity`
    (lower tails, weights at most 1) see only with far more draws.  The check runs
    whatever ``symmetric`` says: a symmetric pair samples one direction only, so the
    other sampler is the only witness of the missing tail.  False-alarm probability at
    most ``level`` (union bound over thresholds, both sides and both bounds)."""
    # the one-sided Clopper-Pearson bounds of the audits (lazy: scipy.stats is slow to
    # import)
    from ...core.auditing import clopper_pearson  # noqa: PLC0415

    pairs = (("sample_p", "P(Y > t)", np.asarray(remove, dtype=np.float64),
              "Q(L > t)", -np.asarray(add, dtype=np.float64)),
             ("sample_q", "Q(Y' > t)", np.asarray(add, dtype=np.float64),
              "P(-L > t)", -np.asarray(remove, dtype=np.float64)))
    tops = [float(np.max(x[np.isfinite(x)])) for x in (remove, add)
            if np.isfinite(x).any()]
    if not tops:
        return
    t_grid = np.arange(0.0, max(0.0, max(tops)) + _TAIL_STEP, _TAIL_STEP)[:256]
    a = level / (4.0 * t_grid.size)
    for sampler, left, own, right, other in pairs:
        own_sorted = np.sort(own)
        finite_other = np.sort(other[np.isfinite(other)])
        n_own, n_other = own.size, other.size
        for t in t_grid:
            k_own = n_own - int(np.searchsorted(own_sorted, t, side="right"))
            k_other = finite_other.size - int(np.searchsorted(finite_other, t, side="right"))
            if k_other == 0:
                break
            low_other = clopper_pearson(k_other, n_other, a, "lower")
            up_own = clopper_pearson(k_own, n_own, a, "upper")
            if math.exp(t) * low_other > up_own:
                raise ValueError(
                    f"{name}: {sampler} misses an upper tail: {k_own} of its {n_own} draws "
                    f"have a privacy loss above t = {t:.3g}, so {left} <= {up_own:.3g}, "
                    f"but the other sampler's {k_other} of {n_other} draws give "
                    f"{left} >= e^t {right} >= {math.exp(t) * low_other:.3g} (change of "
                    f"measure, which holds for every pair; false-alarm probability <= "
                    f"{level:g}). A sampler truncated or narrower than its density does "
                    f"this and would give an optimistic certificate: make {sampler} draw "
                    "from its whole density (no cut-off), whatever symmetric says")
