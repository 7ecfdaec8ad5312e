r"""Where the tail bound of a mechanism comes from: its own, the caller's, a built-in's.

:func:`tail_bound` combines (pointwise minimum of the divergences, intersection of the
ranges) the ``renyi``/``loss_range`` given to the accountant, those a
:class:`~sampledprv.sampled.LogDensityPair` or :class:`~sampledprv.sampled.PrivacyLossSampler`
carries, and for built-in specs the exact Renyi divergences of
:func:`sampledprv.rdp.renyi_divergence` and the support of a bounded loss, into one
:class:`~.tails.TailBound` per direction.  A callable bound is evaluated on
:data:`DEFAULT_ORDERS`.
"""

from __future__ import annotations

import functools
import math
from typing import Any, Callable, Optional

import numpy as np

from .tail_inputs import (DIRECTIONS, RenyiInput, RenyiTable, as_divergence, as_loss_range,
                          as_renyi)
from .tails import TailBound
from ...mechanisms.relations import privacy_loss
from ...rdp import renyi_divergence
from ... import mechanisms as M

__all__ = ["DEFAULT_ORDERS", "tail_bound", "compose_kwargs", "builtin_orders"]

#: Orders at which a callable Renyi bound is evaluated: :math:`\lambda - 1` runs over
#: :math:`2^{j/4}`, :math:`j = -24 \dots 68` (``1/64`` to ``2^17``), rounded to integers
#: above 16 (integer-order closed forms apply there).  Consecutive orders differ by a
#: factor of at most :math:`2^{1/4}`, which costs at most about 1% of the Chernoff
#: exponent of a Gaussian-like tail.
DEFAULT_ORDERS: np.ndarray = np.unique(np.array(
    [1.0 + 2.0 ** (j / 4.0) if 2.0 ** (j / 4.0) < 16 else float(round(1.0 + 2.0 ** (j / 4.0)))
     for j in range(-24, 69)]))


def _evaluate(fn: Callable[[float, str], float], orders: np.ndarray, direction: str,
              what: str, skip_value_error: bool) -> tuple[np.ndarray, np.ndarray]:
    lam, val = [], []
    for o in orders:
        try:
            d = fn(float(o), direction)
        except OverflowError:     # e.g. math.exp of a large order: no bound there
            continue
        except ValueError:
            if skip_value_error:
                continue
            raise
        d = as_divergence(d, f"{what}({float(o):g}, {direction!r})")
        if math.isfinite(d):
            lam.append(float(o))
            val.append(d)
    return np.array(lam, dtype=np.float64), np.array(val, dtype=np.float64)


def _merge(parts: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """Pointwise minimum of several tables (each a valid bound)."""
    best: dict[float, float] = {}
    for lam, val in parts:
        for o, d in zip(lam.tolist(), val.tolist()):
            best[o] = min(d, best.get(o, math.inf))
    keys = sorted(best)
    return np.array(keys, dtype=np.float64), np.array([best[k] for k in keys], dtype=np.float64)


def builtin_orders(mech: Any, direction: str) -> np.ndarray:
    r"""The orders of :data:`DEFAULT_ORDERS` worth evaluating for a built-in spec.

    The Chernoff bound at a threshold ``z`` standard deviations above the mean is best at
    :math:`\lambda - 1 \approx z/\sigma` for a Gaussian-like loss (smaller for heavier
    tails); the envelope needs thresholds from the end of the window to where the tail is
    negligible.  With :math:`\sigma` the spread of the exact loss law (its 0.1% and
    99.9% quantiles are :math:`\pm 3.09\sigma` apart for a Gaussian), the orders with
    :math:`\max(1/8, 1/(32\sigma)) \le \lambda - 1 \le 64/\sigma` are kept (the lower
    end leaves room for tails heavier than Gaussian, e.g. subsampled mechanisms):
    certified bounds at orders very close to 1 and beyond :math:`10^4` cost seconds each
    by quadrature or binomial expansion and would not improve the tail.  Only tightness
    depends on this choice, never validity.
    """
    try:
        law = privacy_loss(mech, direction)
        lo, hi = float(law.lower_point(1e-3)), float(law.upper_point(1e-3))
    except (TypeError, ValueError):
        return DEFAULT_ORDERS
    sigma = (hi - lo) / 6.18
    if not (math.isfinite(sigma) and sigma > 0):
        return DEFAULT_ORDERS
    s = DEFAULT_ORDERS - 1.0
    keep = (s >= max(0.125, 1.0 / (32.0 * sigma))) & (s <= 64.0 / sigma)
    return DEFAULT_ORDERS[keep] if keep.any() else DEFAULT_ORDERS[-1:]


@functools.lru_cache(maxsize=256)
def _builtin_renyi(mech: Any, direction: str) -> tuple[np.ndarray, np.ndarray]:
    return _evaluate(lambda o, d: renyi_divergence(mech, o, d), builtin_orders(mech, direction),
                     direction, "sampledprv.rdp.renyi_divergence", skip_value_error=True)


@functools.lru_cache(maxsize=256)
def _builtin_range(mech: Any, direction: str) -> tuple[float, float]:
    try:
        law = privacy_loss(mech, direction)
    except (TypeError, ValueError):
        return -math.inf, math.inf
    if law.p_pos_inf > 0 or law.p_neg_inf > 0:
        return -math.inf, math.inf
    lo, hi = law._finite_range()
    return float(lo), float(hi)


def _is_builtin(mech: Any) -> bool:
    return isinstance(mech, M.Mechanism) and not (hasattr(mech, "loss_sampler")
                                                   or hasattr(mech, "_loss_sampler"))


def tail_bound(mech: Any, direction: str, *, renyi: Optional[RenyiInput] = None,
               loss_range: Any = None, symmetric: bool = False,
               builtin: bool = True) -> Optional[TailBound]:
    r"""The :class:`TailBound` of ``mech``'s loss in ``direction``, or ``None``.

    Sources, combined (pointwise minimum of the divergences, intersection of ranges):
    ``renyi``/``loss_range`` given here, the mechanism's own ``renyi``/``loss_range``
    attributes (:class:`~sampledprv.sampled.LogDensityPair`,
    :class:`~sampledprv.sampled.PrivacyLossSampler`) and, for built-in specs with
    ``builtin=True``, :func:`sampledprv.rdp.renyi_divergence` and the support of the
    exact law.  ``symmetric``: both directions have the law of the remove loss, so the
    bounds given for either direction apply (the smaller is used).
    """
    renyis, ranges, words = [], [], []
    own_r = getattr(mech, "renyi", None) if not _is_builtin(mech) else None
    own_l = getattr(mech, "loss_range", None) if not _is_builtin(mech) else None
    dirs = DIRECTIONS if symmetric else (direction,)
    own_label = getattr(mech, "renyi_source", None) if not _is_builtin(mech) else None
    if not isinstance(own_label, str):      # a spec's own wording of its proven bound
        own_label = getattr(mech, "tail_source", None) if own_r is not None else None
    own_label = own_label if isinstance(own_label, str) else "Renyi bound supplied"
    for src, label in ((as_renyi(renyi), "Renyi bound supplied"), (as_renyi(own_r), own_label)):
        if src is None:
            continue
        for d in dirs:
            if isinstance(src, RenyiTable):
                renyis.append(_evaluate(src, src.orders(d), d, "renyi", False))
            else:
                renyis.append(_evaluate(src, DEFAULT_ORDERS, d, "renyi", False))
        words.append(label)
    own_range_label = getattr(mech, "loss_range_source", None) if not _is_builtin(mech) \
        else None
    for src, label in ((as_loss_range(loss_range), "declared loss range"),
                       (as_loss_range(own_l), own_range_label if isinstance(
                           own_range_label, str) else "declared loss range")):
        if src is not None:
            ranges += [src[DIRECTIONS.index(d)] for d in dirs]
            words.append(label)
    if builtin and _is_builtin(mech):
        b = [_builtin_renyi(mech, d) for d in dirs]
        if any(x[0].size for x in b):
            renyis += b
            words.append("exact Renyi divergence of the built-in spec")
        r = [_builtin_range(mech, d) for d in dirs]
        if all(math.isfinite(x[0]) and math.isfinite(x[1]) for x in r):
            ranges += r
            words.append("support of the exact loss")
    if not renyis and not ranges:
        return None
    lam, val = _merge(renyis) if renyis else (np.zeros(0), np.zeros(0))
    lo = max([x[0] for x in ranges], default=-math.inf)
    hi = min([x[1] for x in ranges], default=math.inf)
    if not lo <= hi:
        raise ValueError(f"the loss ranges given for {mech!r} ({direction}) do not overlap: "
                         f"{ranges}")
    if lam.size == 0 and not (math.isfinite(lo) or math.isfinite(hi)):
        return None
    return TailBound(lam, val, lo, hi, ", ".join(dict.fromkeys(words)))


def compose_kwargs(mech: Any, *, renyi: Optional[RenyiInput] = None, loss_range: Any = None,
                   builtin: bool = True) -> dict:
    """The tail information of ``mech`` as ``renyi``/``loss_range`` keyword arguments of
    :meth:`SampledAccountant.compose` (a table per direction), e.g. to give it to an
    :class:`~sampledprv.sampled.EmpiricalPRV` sampled from ``mech``; ``{}`` if none."""
    symmetric = bool(getattr(mech, "symmetric", False))
    tbs = {d: tail_bound(mech, d, renyi=renyi, loss_range=loss_range, symmetric=symmetric,
                         builtin=builtin) for d in DIRECTIONS}
    out: dict = {}
    if any(tb is not None and tb.has_renyi for tb in tbs.values()):
        out["renyi"] = RenyiTable(*(tuple(zip(tb.orders.tolist(), tb.divergences.tolist()))
                                    if tb is not None else () for tb in tbs.values()))
    if any(tb is not None and (math.isfinite(tb.lo) or math.isfinite(tb.hi))
           for tb in tbs.values()):
        out["loss_range"] = tuple((tb.lo, tb.hi) if tb is not None else (-math.inf, math.inf)
                                  for tb in tbs.values())
    return out
