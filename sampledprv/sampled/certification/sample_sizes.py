"""Draws per direction: ``n_samples`` as one number or one per direction.

The two directions of a pair often need different numbers of draws: the remove loss of a
batch sampler has a heavy right tail while the add loss is bounded, and one direction may
have an exact Renyi bound that removes its sample floor.  ``n_samples`` is therefore an
int (the same in both directions), a pair ``(n_remove, n_add)`` or a mapping
``{"remove": n_remove, "add": n_add}``.  Every histogram of a direction is drawn with
that direction's ``n``; the certificate is unchanged (each histogram's Clopper-Pearson
envelopes hold for its own ``n``, and the union bound over the histograms does not
depend on their sizes).
"""

from __future__ import annotations

from typing import Mapping, Union

from ...core import validation as v

__all__ = ["SampleSizes", "per_direction", "as_given"]

SampleSizes = Union[int, tuple, Mapping]
_DIRECTIONS = ("remove", "add")


def per_direction(n_samples: object) -> dict:
    """``{"remove": n, "add": n}`` from an int, a pair or a mapping (validated: positive
    integers, both directions, no other keys)."""
    if isinstance(n_samples, Mapping):
        keys = {getattr(k, "value", k) for k in n_samples}
        if keys != set(_DIRECTIONS):
            raise ValueError(f"n_samples as a mapping needs exactly the keys 'remove' and "
                             f"'add', got {sorted(map(str, keys))}; or give one int for both "
                             "directions")
        got = {getattr(k, "value", k): val for k, val in n_samples.items()}
        return {d: v.positive_int(f"n_samples[{d!r}]", got[d]) for d in _DIRECTIONS}
    if isinstance(n_samples, (tuple, list)):
        if len(n_samples) != 2:
            raise ValueError(f"n_samples as a pair is (n_remove, n_add), got {len(n_samples)} "
                             "values; or give one int for both directions")
        return {d: v.positive_int(f"n_samples[{i}] ({d})", x)
                for i, (d, x) in enumerate(zip(_DIRECTIONS, n_samples))}
    n = v.positive_int("n_samples", n_samples)
    return {d: n for d in _DIRECTIONS}


def as_given(sizes: dict) -> "int | dict":
    """The normal form kept on the accountant: one int when both directions are equal
    (what every existing caller sees), else the per-direction dict."""
    if sizes["remove"] == sizes["add"]:
        return sizes["remove"]
    return dict(sizes)


def describe(sizes: dict) -> str:
    """``"1,000,000"`` or ``"remove 2,000,000 / add 500,000"``."""
    if sizes["remove"] == sizes["add"]:
        return f"{sizes['remove']:,}"
    return f"remove {sizes['remove']:,} / add {sizes['add']:,}"
