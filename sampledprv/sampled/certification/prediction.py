r"""Predict the certified width and the running time of a sampled run before doing it.

The width of the envelope interval at ``n`` draws per histogram depends on the counts
the run will see.  :func:`predict_width` simulates them: on the window the accountant
would choose for ``n`` draws, it takes bin probabilities -- exact ones from the
analytic law when :mod:`sampledprv.mechanisms.relations` knows the mechanism, else the frequencies of
a pilot histogram of ``pilot_n`` draws on that window -- draws multinomial counts of
size ``n`` (``sims`` times) and runs the envelope method on them exactly as the
accountant would (same ``alpha`` split, bins, composition).  The median of the widths
is the prediction.  From a pilot the unseen far tail is empty, which makes the
prediction optimistic in the tails: use a pilot of at least ``n / 100`` draws when the
mechanism has no analytic law.

Time.  :func:`measure_rate` times the sampling kernel on this machine (all threads, and
one thread: the rate of one worker core); the expected time is the number of draws over
the rate, and on ``W`` single-core workers the number of draws over ``W`` times the
one-thread rate (the Dask path reaches >= 90% of that on one machine,
``benchmarks/bench_dask_scale.py``).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Optional

import numpy as np

from ..draws.hooks import find_hook
from ..histograms.empirical import EmpiricalPRV
from ..histograms.histogram import LossHistogram
from ..histograms.kernels import loss_histogram
from ..histograms.window import choose_window
from .accountant import SampledAccountant
from .tail_sources import compose_kwargs
from .twolevel import bins_for
from ...mechanisms.relations import privacy_loss

__all__ = ["WidthPrediction", "predict_width", "n_for_width", "samples_for_width",
           "measure_rate", "simulate_histogram"]


@dataclass(frozen=True)
class WidthPrediction:
    """Predicted certified width of epsilon(delta) at ``n`` draws per histogram, and time.

    Attributes
    ----------
    n : int
        Draws per histogram.
    width : float
        Median predicted width of the certified interval (``inf``: no finite bound).
    widths : tuple of float
        The simulated widths.
    mesh_width : float
        The rounding part of the width (about ``k h``); it does not shrink with ``n``.
    source : str
        ``"analytic"`` (exact bin probabilities) or ``"pilot"``.
    draws : int
        Draws in all (``n`` times the number of histograms).
    rate_here, rate_per_core : float
        Measured draws/s on this machine (all threads) and on one thread.
    workers : int or None
        ``W`` for :attr:`seconds_workers`.
    """

    n: int
    width: float
    widths: tuple
    mesh_width: float
    source: str
    draws: int
    rate_here: float
    rate_per_core: float
    workers: Optional[int] = None

    @property
    def seconds_here(self) -> float:
        """Expected sampling time in this process (all threads)."""
        return self.draws / self.rate_here

    def seconds_on(self, workers: int) -> float:
        """Expected sampling time on ``workers`` single-core workers at this machine's
        one-thread rate."""
        return self.draws / (workers * self.rate_per_core)

    @property
    def seconds_workers(self) -> Optional[float]:
        return None if self.workers is None else self.seconds_on(self.workers)

    def __str__(self) -> str:
        s = (f"n = {self.n:,}: predicted width {self.width:.4g} (mesh part {self.mesh_width:.3g},"
             f" {len(self.widths)} simulations from {self.source} bin probabilities); "
             f"{self.draws:,} draws: ~{_fmt_s(self.seconds_here)} here at "
             f"{self.rate_here:.3g} draws/s")
        if self.workers:
            s += f", ~{_fmt_s(self.seconds_workers)} on {self.workers} workers"
        return s


def samples_for_width(pilot_n: int, pilot_width: float, mesh_width: float,
                      target_width: float) -> int:
    r"""Extrapolate a pilot's statistical width as :math:`\propto n^{-1/2}`.

    ``mesh_width`` (about ``k h``, the part that does not shrink with ``n``) is
    subtracted first; returns the ``n`` at which the statistical part would fit
    ``target_width - mesh_width``.  An estimate, not a guarantee.
    """
    stat = max(pilot_width - mesh_width, 1e-12)
    room = target_width - mesh_width
    if room <= 0:
        raise ValueError(f"target_width {target_width} is below the discretization width "
                         f"{mesh_width:.3g}; use more bins")
    return int(math.ceil(pilot_n * (stat / room) ** 2))


def _fmt_s(t: Optional[float]) -> str:
    if t is None:
        return "?"
    if t < 120:
        return f"{t:.3g} s"
    if t < 7200:
        return f"{t / 60:.3g} min"
    return f"{t / 3600:.3g} h"


def _bin_probs(mech: object, direction: str, lo: float, h: float, bins: int,
               pilot_n: int, seed: int) -> tuple[np.ndarray, str]:
    """``[below, bins..., above, +inf]`` probabilities on the window."""
    edges = lo + np.arange(bins + 1) * h
    try:
        law = privacy_loss(mech, direction)
    except (TypeError, ValueError):
        law = None
    if law is not None:
        sf = np.asarray(law.sf(edges), dtype=np.float64)     # P[Y > t] incl. +inf
        p_inf = float(law.p_pos_inf)
        inside = np.clip(sf[:-1] - sf[1:], 0.0, None)
        above = max(float(sf[-1]) - p_inf, 0.0)
        below = max(1.0 - float(sf[0]), 0.0)
        p = np.concatenate([[below], inside, [above, p_inf]])
        return p / p.sum(), "analytic"
    hh = loss_histogram(mech, direction=direction, n=pilot_n, lo=lo, h=h, bins=bins,
                        seed=seed, progress=False)
    c = np.concatenate([[hh.below + hh.neg_inf], hh.counts, [hh.above, hh.pos_inf]])
    return c / c.sum(), "pilot"


def simulate_histogram(p: np.ndarray, n: int, lo: float, h: float,
                       rng: np.random.Generator) -> LossHistogram:
    """A :class:`~sampledprv.sampled.histograms.histogram.LossHistogram` of multinomial
    counts with probabilities ``p`` (layout of :func:`_bin_probs`)."""
    c = rng.multinomial(int(n), p)
    return LossHistogram(c[1:-2].astype(np.int64), int(c[0]), int(c[-2]), int(c[-1]), 0,
                         int(n), float(lo), float(h))


def measure_rate(mechanism: object, n: int = 1 << 20,
                 min_seconds: float = 0.25) -> tuple[float, float]:
    """``(draws/s on all threads, draws/s on one thread)`` of the sampling kernel for
    ``mechanism`` (remove direction), after a warm-up run (compilation excluded).

    Each rate is timed on a run of at least ``min_seconds`` (a run of a few milliseconds
    measures the per-call set-up, not the kernel, and underestimated the rate by 2-4x).
    The draw count starts at ``n``; after a shorter run it is scaled to the count that
    the run's own rate says takes ``1.25 min_seconds`` (by 2x to 16x, up to ``2**28``),
    so that the timed run is usually the second or third instead of the fourth or fifth
    of a doubling sequence."""
    lo, h, nb = choose_window(mechanism, "remove", n, 4096, np.random.default_rng(0))
    kw = dict(direction="remove", lo=lo, h=h, bins=nb, seed=0, progress=False)
    loss_histogram(mechanism, n=4096, **kw)
    rates = []
    for threads in (None, 1):
        m = n
        while True:
            t0 = time.perf_counter()
            loss_histogram(mechanism, n=m, n_threads=threads, **kw)
            dt = time.perf_counter() - t0
            if dt >= min_seconds or m >= 1 << 28:
                break
            grow = min(16.0, max(2.0, 1.25 * min_seconds / max(dt, 1e-9)))
            m = min(1 << 28, int(m * grow))
        rates.append(m / max(dt, 1e-9))
    return rates[0], rates[1]


def predict_width(mechanism: object, count: int, delta: float, n: int, *,
                  alpha: float = 1e-9, bins: "int | str" = "auto", sims: int = 3,
                  pilot_n: int = 10**7, seed: int = 0, workers: Optional[int] = None,
                  rate: Optional[tuple[float, float]] = None, renyi: object = None,
                  loss_range: object = None) -> WidthPrediction:
    r"""Predict the certified width of :math:`\varepsilon(\delta)` for ``count``
    compositions of ``mechanism`` at ``n`` draws per histogram (module docstring).

    ``rate``: ``(all threads, one thread)`` draws/s; measured when omitted.  The
    simulated runs use the same tail bounds as the accountant (the mechanism's Renyi
    bound or loss range, ``renyi``/``loss_range``; :mod:`sampledprv.sampled.certification.tails`).
    """
    if not 0 < delta < 1:
        raise ValueError(f"delta must lie in (0, 1), got {delta!r}")
    if n < 1 or sims < 1:
        raise ValueError(f"n and sims must be positive, got n={n!r}, sims={sims!r}")
    nb_req = bins_for(count) if bins == "auto" else int(bins)
    symmetric = bool(getattr(mechanism, "symmetric", False))
    dirs = ("remove",) if symmetric else ("remove", "add")
    rng = np.random.default_rng(seed)
    probs, source = {}, "analytic"
    hook = find_hook(mechanism, "conditional")        # conditional samplers: their
    conds = {d: hook(d) if hook is not None else None for d in dirs}   # statistic is sampled
    for d in dirs:
        what = mechanism if conds[d] is None else conds[d].statistic
        lo, h, nb = choose_window(what, d, n, nb_req, np.random.default_rng(seed + 1))
        p, src = _bin_probs(what, d, lo, h, nb, pilot_n, seed + 2)
        probs[d] = (p, lo, h)
        source = src if src == "pilot" else source
    widths, mesh = [], 0.0
    tails = compose_kwargs(mechanism, renyi=renyi, loss_range=loss_range)
    for _ in range(sims):
        hs = {d: simulate_histogram(p, n, lo, h, rng) for d, (p, lo, h) in probs.items()}
        if any(c is not None for c in conds.values()):
            from .conditional import simulated_epsilon
            lo_s, up_s = simulated_epsilon(mechanism, hs, count, delta, alpha,
                                           min(nb_req, 2**23))
            widths.append(up_s - lo_s if math.isfinite(up_s) else math.inf)
            continue
        emp = EmpiricalPRV(hs["remove"], hs.get("add"), name="simulated")
        acc = SampledAccountant(n, alpha=alpha, bins=nb_req, progress=False)
        iv = acc.compose(emp, count, **tails).epsilon(delta=delta)
        widths.append(iv.width if math.isfinite(iv.upper) else math.inf)
        mesh = float(iv.details.get("mesh_width", 0.0))
    r_all, r_one = rate if rate is not None else measure_rate(mechanism)
    return WidthPrediction(int(n), float(np.median(widths)), tuple(widths), mesh, source,
                           int(n) * len(dirs), float(r_all), float(r_one), workers)


def n_for_width(mechanism: object, count: int, delta: float, target_width: float, *,
                n0: int, width0: float, mesh0: float, alpha: float = 1e-9,
                bins: "int | str" = "auto", sims: int = 3, pilot_n: int = 10**7,
                seed: int = 0, rate: Optional[tuple] = None,
                workers: Optional[int] = None, rounds: int = 2, renyi: object = None,
                loss_range: object = None) -> WidthPrediction:
    """``n`` for a target width: start from the :math:`n^{-1/2}` extrapolation of a run
    of ``n0`` draws of width ``width0`` and correct it by simulation (``rounds`` times)."""
    n = samples_for_width(n0, width0, mesh0, target_width)
    pred = None
    for _ in range(rounds):
        pred = predict_width(mechanism, count, delta, n, alpha=alpha, bins=bins, sims=sims,
                             pilot_n=pilot_n, seed=seed, rate=rate, workers=workers,
                             renyi=renyi, loss_range=loss_range)
        rate = (pred.rate_here, pred.rate_per_core)
        if not math.isfinite(pred.width) or pred.width <= pred.mesh_width:
            break
        n_new = samples_for_width(n, pred.width, pred.mesh_width, target_width)
        if abs(n_new - n) <= 0.05 * n:
            break
        n = n_new
    assert pred is not None
    return pred
