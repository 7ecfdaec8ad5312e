r"""Sample-size planning: how many draws a certified width needs, and how long they take.

:func:`plan_samples` combines the sample floor (:mod:`.floor`), a pilot run of the
accountant and the simulation of the counts of the full run (:mod:`.prediction`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

from . import prediction as P
from .accountant import SampledAccountant
from .floor import min_samples, tail_source
from .prediction import samples_for_width

__all__ = ["SamplePlan", "plan_samples"]


@dataclass(frozen=True)
class SamplePlan:
    """Output of :func:`plan_samples`."""

    n_min: int
    n_target: Optional[int]
    pilot_n: Optional[int]
    pilot_width: Optional[float]
    note: str
    #: simulated width and expected time at ``n`` (or at ``n_target``), see
    #: :func:`sampledprv.sampled.certification.prediction.predict_width`
    prediction: Optional[object] = None
    #: where the unseen tail is bounded without samples (None: the floor applies)
    tail_bound: Optional[str] = None
    #: ``{"remove": n, "add": n}`` when the two directions need different ``n`` for the
    #: target width (each extrapolated from its own pilot width; :func:`per_direction_n`);
    #: give it to ``SampledAccountant(n_samples=...)``
    n_per_direction: Optional[dict] = None

    def __str__(self) -> str:
        s = f"no finite upper bound below n = {self.n_min:,}" if self.tail_bound is None \
            else f"no sample floor (unseen tail bounded by {self.tail_bound})"
        if self.n_target is not None:
            s += f"; about n = {self.n_target:,} for the target width ({self.note})"
        if self.n_per_direction is not None:
            s += ("; per direction: remove {remove:,}, add {add:,} "
                  "(n_samples={{'remove': ..., 'add': ...}})".format(**self.n_per_direction))
        if self.prediction is not None:
            s += f"; {self.prediction}"
        return s


def plan_samples(mechanism: object, count: int, delta: float, *, alpha: float = 1e-9,
                 bins: int = 2**14, target_width: Optional[float] = None,
                 pilot_n: int = 10**6, seed: int = 0, n: Optional[int] = None,
                 workers: Optional[int] = None, sims: int = 3, renyi: object = None,
                 loss_range: object = None) -> SamplePlan:
    r"""Plan ``n`` for ``count`` compositions of ``mechanism`` at ``delta``.

    Returns the floor :func:`~.floor.min_samples` and, if ``target_width`` (of the certified
    :math:`\varepsilon(\delta)` interval) is given, an estimate obtained by running the
    sampled accountant with ``pilot_n`` samples, extrapolating its width as
    :math:`n^{-1/2}` (:func:`~.prediction.samples_for_width`) and correcting that ``n`` by simulating
    the counts of the full run (:func:`~sampledprv.sampled.certification.prediction.n_for_width`).
    With ``n``, the plan's ``prediction`` is the simulated width at that ``n``
    (:func:`~sampledprv.sampled.certification.prediction.predict_width`).  Predictions carry the
    expected sampling time here and on ``workers`` single-core workers at the rate
    measured on this machine.
    With a Renyi bound or a loss range (``renyi``/``loss_range``, the mechanism's own,
    or a built-in spec's exact ones) the floor does not apply (``n_min = 1``,
    :attr:`SamplePlan.tail_bound` says why) and the pilot and the simulations use the
    same tail bound.
    """
    symmetric = bool(getattr(mechanism, "symmetric", False))
    tail = tail_source(mechanism, renyi=renyi, loss_range=loss_range)
    n_min = 1 if tail is not None else \
        min_samples(count, delta, alpha=alpha, bins=bins, histograms=1 if symmetric else 2)
    if target_width is None:
        if n is None:
            return SamplePlan(n_min, None, None, None, "floor only" if tail is None else
                              "no floor", tail_bound=tail)
        pred = P.predict_width(mechanism, count, delta, int(n), alpha=alpha, bins=bins,
                               sims=sims, seed=seed, workers=workers,
                               pilot_n=min(max(pilot_n, int(n) // 100), 10**8),
                               renyi=renyi, loss_range=loss_range)
        return SamplePlan(n_min, None, None, None, "simulated at the given n", pred, tail)
    n0 = max(pilot_n, 4 * n_min)
    acc = SampledAccountant(n0, alpha=alpha, seed=seed, bins=bins, progress=False)
    iv = acc.compose(mechanism, count, renyi=renyi, loss_range=loss_range).epsilon(delta=delta)
    mesh = float(iv.details.get("mesh_width", 0.0))
    if not math.isfinite(iv.upper):
        return SamplePlan(n_min, None, n0, iv.width, "pilot gave no finite bound",
                          tail_bound=tail)
    n_t = max(samples_for_width(n0, iv.width, mesh, target_width), n_min)
    pred = P.n_for_width(mechanism, count, delta, target_width, n0=n0, width0=iv.width,
                         mesh0=mesh, alpha=alpha, bins=bins, sims=sims, seed=seed,
                         workers=workers, pilot_n=min(max(pilot_n, n_t // 100), 10**8),
                         renyi=renyi, loss_range=loss_range)
    n_raw = n_t
    if math.isfinite(pred.width):
        n_t = max(pred.n, n_min)
    return SamplePlan(n_min, n_t, n0, iv.width, f"extrapolated from a pilot of n = {n0:,} "
                      "and corrected by simulating the counts of the full run", pred, tail,
                      per_direction_n(iv, n0, mesh, target_width, n_min, n_t / n_raw))


def per_direction_n(iv: object, n0: int, mesh: float, target_width: float, n_min: int,
                    correction: float = 1.0) -> Optional[dict]:
    r"""``n`` per direction for a target width, or ``None`` when one ``n`` serves both.

    The interval of the maximum over directions is ``[max_d lo_d, max_d up_d]``, and
    :math:`\max_d up_d - \max_d lo_d \le up_j - lo_j` for ``j`` the direction of the
    largest upper end.  So the target width is met once every direction's own interval
    is that narrow: each direction's ``n`` is extrapolated from its own pilot width
    (:func:`~.prediction.samples_for_width`, times the simulation's ``correction`` of the
    common ``n``).  A direction whose pilot interval is already narrower needs fewer
    draws.  An estimate, like the common ``n``."""
    per = iv.details.get("per_direction") if hasattr(iv, "details") else None
    if not isinstance(per, dict) or set(per) != {"remove", "add"}:
        return None
    out = {}
    for d, t in per.items():
        lo, up = float(t[0]), float(t[2])
        if not math.isfinite(up):
            return None
        n_d = samples_for_width(n0, up - lo, mesh, target_width)
        out[d] = max(int(math.ceil(n_d * max(correction, 0.0))), n_min, 1)
    return None if out["remove"] == out["add"] else out
