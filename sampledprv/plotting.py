r"""Plots of certified privacy accounting (matplotlib, optional: ``pip install sampledprv[plot]``).

matplotlib is imported only when a plotting function runs, so ``import sampledprv.plotting``
works without it; :func:`privacy_curve` needs no matplotlib at all.

* :func:`plot_privacy_curve` -- :math:`\delta(\varepsilon)` with its certified band
  ``[lower, upper]`` (deterministic, or with probability ``>= 1 - alpha`` for the sampled
  accountant), on a log scale.
* :func:`plot_loss_histogram` -- the empirical privacy-loss distribution of a sampled
  mechanism and the tail :math:`P[Y \ge t]` with the Clopper-Pearson envelopes that
  certify it (the ``Y_up`` / ``Y_low`` of the envelope method), optionally against the
  exact tail of an analytic reference.
* :func:`plot_tail_weights` -- GG tail weight against beta at a fixed privacy level
  (re-exported from :mod:`sampledprv.gg.tails`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Sequence

import numpy as np

from .gg.tails import plot_tail_weights
from .core.interval import confidence_label
from .core.contract import PrivacyAccountant
from .mechanisms.relations import privacy_loss

__all__ = ["CurveBand", "privacy_curve", "plot_privacy_curve", "plot_loss_histogram",
           "loss_tail_envelopes", "plot_tail_weights", "plot_tradeoff"]


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - exercised only without matplotlib
        raise ImportError("sampledprv.plotting needs matplotlib: "
                          "pip install 'sampledprv[plot]'") from exc
    return plt


@dataclass(frozen=True)
class CurveBand:
    r"""Certified band of :math:`\delta(\varepsilon)` on a grid (what gets plotted).

    Not to be confused with :class:`sampledprv.engine.curve.PrivacyCurve`, the exact
    curve of one lattice distribution that the accountants evaluate.

    Attributes
    ----------
    epsilons, lower, estimate, upper : numpy.ndarray
        The grid and, at each point, the certified bracket and the estimate of
        :math:`\delta(\varepsilon)`.
    certification : str
        ``"deterministic"`` or ``"probabilistic"`` (as :class:`~sampledprv.Interval`).
    confidence : float
        1 for deterministic curves; ``1 - alpha`` *per point* for sampled ones (every
        point comes from the same envelopes, so the whole band holds simultaneously with
        the same probability).
    method : str
        How the bracket was built.
    """

    epsilons: np.ndarray
    lower: np.ndarray
    estimate: np.ndarray
    upper: np.ndarray
    certification: str
    confidence: float
    method: str = ""


def privacy_curve(accountant: Any, epsilons: Sequence[float]) -> CurveBand:
    r"""Evaluate ``accountant.delta(epsilon=e)`` on a grid (no matplotlib needed).

    ``accountant`` is anything with the accountant contract (:class:`~sampledprv.Accountant`,
    :class:`~sampledprv.SampledAccountant`) that already composed its mechanisms.
    """
    if not isinstance(accountant, PrivacyAccountant):
        raise ValueError("accountant must be a sampledprv accountant (sp.Accountant, "
                         "sp.SampledAccountant or a subclass of sampledprv.core.contract."
                         f"PrivacyAccountant), got {type(accountant).__name__}")
    eps = np.asarray(list(epsilons), dtype=np.float64)
    if eps.ndim != 1 or eps.size == 0:
        raise ValueError("epsilons must be a non-empty 1-D sequence of numbers")
    if not np.all(np.isfinite(eps)) or np.any(eps < 0):
        raise ValueError("epsilons must be finite and >= 0")
    ivs = [accountant.delta(epsilon=float(e)) for e in eps]
    return CurveBand(eps, np.array([iv.lower for iv in ivs]),
                        np.array([iv.estimate for iv in ivs]),
                        np.array([iv.upper for iv in ivs]),
                        ivs[0].certification, min(iv.confidence for iv in ivs), ivs[0].method)


def plot_privacy_curve(curve: Any, epsilons: Optional[Sequence[float]] = None, *,
                       ax: Any = None, label: Optional[str] = None, color: Optional[str] = None,
                       logy: bool = True, title: Optional[str] = None,
                       delta: Optional[float] = None) -> Any:
    r"""Plot :math:`\delta(\varepsilon)` with its certified band.

    Parameters
    ----------
    curve : CurveBand or accountant
        A :class:`CurveBand`, or an accountant (then ``epsilons`` is required and
        :func:`privacy_curve` is called).
    ax : matplotlib Axes, optional
        Where to draw (a new figure otherwise).
    label, color : str, optional
        Legend label of the estimate line and its color; the band shares the color.
    logy : bool
        Log scale for delta (zeros and values below ``1e-300`` are clipped).
    title : str, optional
        Axes title.
    delta : float, optional
        Also mark :math:`\varepsilon(\delta)` read off the band (a horizontal line at
        ``delta``).

    Returns
    -------
    matplotlib Axes
    """
    plt = _pyplot()
    if not isinstance(curve, CurveBand):
        if epsilons is None:
            raise ValueError("pass epsilons= when plotting an accountant's curve")
        curve = privacy_curve(curve, epsilons)
    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 4.2))
    floor = 1e-300
    lo = np.maximum(curve.lower, floor) if logy else curve.lower
    up = np.minimum(curve.upper, 1.0)
    est = np.maximum(curve.estimate, floor) if logy else curve.estimate
    if curve.certification == "deterministic":
        band = "certified band (deterministic)"
    else:
        band = f"certified band (prob. >= {confidence_label(curve.confidence)})"
    line, = ax.plot(curve.epsilons, est, color=color, lw=1.6, label=label or "estimate")
    c = line.get_color()
    ax.fill_between(curve.epsilons, lo, up, color=c, alpha=0.25, lw=0, label=band)
    ax.plot(curve.epsilons, up, color=c, lw=0.8, ls="--")
    ax.plot(curve.epsilons, lo, color=c, lw=0.8, ls="--")
    if logy:
        ax.set_yscale("log")
        pos = np.concatenate([curve.lower[curve.lower > 0], curve.estimate[curve.estimate > 0]])
        if pos.size:
            ax.set_ylim(max(pos.min() / 3.0, floor), min(3.0 * max(up.max(), pos.max()), 1.5))
    if delta is not None:
        ax.axhline(delta, color="0.4", lw=0.8, ls=":")
        ax.annotate(f"delta = {delta:g}", (curve.epsilons[0], delta), color="0.3",
                    xytext=(2, 3), textcoords="offset points", fontsize=8)
    ax.set_xlabel("epsilon")
    ax.set_ylabel("delta(epsilon)")
    if title:
        ax.set_title(title, fontsize=10)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8)
    return ax


@dataclass(frozen=True)
class _Tails:
    edges: np.ndarray
    empirical: np.ndarray
    upper: np.ndarray
    lower: np.ndarray
    p_inf_upper: float
    alpha: float
    n: int


def loss_tail_envelopes(histogram: Any, alpha: float) -> _Tails:
    r"""Empirical tail :math:`P[Y \ge t_j]` of a :class:`~sampledprv.sampled.LossHistogram`
    at its bin edges and the upper/lower envelopes that the envelope method certifies
    simultaneously with probability ``>= 1 - alpha`` (from
    :func:`sampledprv.sampled.certification.envelopes.envelope`, so the alpha split is the accountant's)."""
    from .sampled.certification.envelopes import envelope
    from .sampled.histograms.histogram import tail_counts

    env = envelope(histogram, alpha)
    edges = histogram.lo + histogram.h * np.arange(len(histogram.counts) + 1)

    def tail(pmf: Any) -> np.ndarray:
        # P[Y >= x_j] at the pmf's own points, then read at the edges
        t = np.cumsum(pmf.probs[::-1])[::-1] + pmf.p_inf
        return np.interp(edges, pmf.values, t, left=t[0], right=pmf.p_inf)

    # Y_up rounds each bin's mass up to its right edge, Y_low down to its left edge, so
    # P[Y_up >= t_j] and P[Y_low >= t_j] are their values at the lattice points t_j.
    up = tail(env.upper)
    low = tail(env.lower)
    emp = tail_counts(histogram) / float(histogram.n)
    return _Tails(edges, emp, up, low, float(env.upper.p_inf), float(alpha), int(histogram.n))


def plot_loss_histogram(source: Any, mechanism: Any = None, *, direction: str = "remove",
                        alpha: Optional[float] = None, reference: Any = None,
                        axes: Any = None, title: Optional[str] = None) -> Any:
    r"""The sampled privacy-loss distribution and its certified tail envelopes.

    Left panel: histogram density of the draws. Right panel: the tail
    :math:`P[Y \ge t]` (log scale) with the band between the lower and upper envelopes
    (Clopper-Pearson, union over all edges); the upper envelope never reaches zero: its
    floor is the unseen tail mass that the sampled accountant puts at :math:`+\infty`.

    Parameters
    ----------
    source : SampledAccountant, EmpiricalPRV or LossHistogram
        With a :class:`~sampledprv.SampledAccountant`, ``mechanism`` names which composed
        mechanism to show (its cached histogram is used; sampling happens if needed) and
        ``alpha`` defaults to the accountant's.
    direction : {"remove", "add"}
        Which privacy loss to show.
    alpha : float, optional
        Failure probability of the envelopes (default: the accountant's, else 1e-9).
    reference : mechanism spec, optional
        An analytic spec whose exact density and tail are overlaid (``mechanism`` itself
        by default when it is an analytic spec).
    axes : pair of matplotlib Axes, optional
    title : str, optional

    Returns
    -------
    numpy array of the two Axes
    """
    plt = _pyplot()
    from .sampled import EmpiricalPRV, SampledAccountant

    if isinstance(source, SampledAccountant):
        if mechanism is None:
            comp = source.composition
            if len(comp) != 1:
                raise ValueError("the accountant composes several mechanisms: pass "
                                 "mechanism= to choose one")
            mechanism = comp[0][0]
        if alpha is None:
            alpha = source.alpha
        source = source.empirical(mechanism)
    if isinstance(source, EmpiricalPRV):
        hist = source.histogram(direction)
    elif hasattr(source, "counts") and hasattr(source, "lo"):
        hist = source
    else:
        raise ValueError("source must be a SampledAccountant, an EmpiricalPRV or a "
                         f"LossHistogram, got {type(source).__name__}")
    alpha = 1e-9 if alpha is None else float(alpha)
    if reference is None and mechanism is not None:
        reference = mechanism
    law = None
    if reference is not None:
        try:
            law = privacy_loss(reference, direction)
        except Exception:  # noqa: BLE001 - not an analytic spec: no overlay
            law = None

    if axes is None:
        fig, axes = plt.subplots(1, 2, figsize=(11, 4.0))
    ax0, ax1 = axes
    counts = np.asarray(hist.counts, dtype=np.float64)
    edges = hist.lo + hist.h * np.arange(counts.size + 1)
    nz = np.nonzero(counts)[0]
    dens = counts / (hist.n * hist.h)
    if nz.size:
        a, b = nz[0], nz[-1] + 1
        # coarsen for display: about 200 bars across the occupied range
        f = max(1, (b - a) // 200)
        b = a + ((b - a + f - 1) // f) * f
        c2 = np.zeros(b - a)
        c2[: min(b, counts.size) - a] = counts[a:min(b, counts.size)]
        c2 = c2.reshape(-1, f).sum(axis=1) / (hist.n * hist.h * f)
        e2 = hist.lo + hist.h * (a + f * np.arange(c2.size + 1))
        ax0.stairs(c2, e2, fill=True, alpha=0.45, label=f"n = {hist.n:,} draws")
        ax0.set_xlim(e2[0], e2[-1])
        if law is not None:
            x = np.linspace(e2[0], e2[-1], 600)
            try:
                pdf = np.gradient(np.asarray(law.cdf(x), dtype=float), x)
                ax0.plot(x, pdf, color="k", lw=1.0, label="exact density")
            except Exception:  # noqa: BLE001 - laws with atoms: skip the overlay
                pass
    ax0.set_xlabel(f"privacy loss Y ({direction})")
    ax0.set_ylabel("density")
    ax0.legend(fontsize=8)
    del dens

    t = loss_tail_envelopes(hist, alpha)
    keep = t.upper > 0
    ax1.fill_between(t.edges[keep], np.maximum(t.lower[keep], 1e-300), t.upper[keep],
                     step=None, alpha=0.3, color="C1",
                     label=f"certified envelopes (prob. >= {confidence_label(1.0 - alpha)})")
    pos = t.empirical > 0
    ax1.plot(t.edges[pos], t.empirical[pos], color="C0", lw=1.2, label="empirical tail")
    if law is not None:
        try:
            sf = np.asarray(law.sf(t.edges), dtype=float)   # includes the atom at +inf
            ok = sf > 0
            ax1.plot(t.edges[ok], sf[ok], color="k", lw=0.9, ls="--", label="exact tail")
        except Exception:  # noqa: BLE001
            pass
    ax1.axhline(t.p_inf_upper, color="C3", lw=0.8, ls=":",
                label=f"unseen-tail mass at +inf: {t.p_inf_upper:.2g}")
    ax1.set_yscale("log")
    lo_y = max(min(t.p_inf_upper, t.empirical[pos].min() if pos.any() else 1.0) / 10, 1e-300)
    ax1.set_ylim(lo_y, 1.5)
    if nz.size:
        ax1.set_xlim(edges[nz[0]], edges[min(nz[-1] + 1, edges.size - 1)] + 0.1 *
                     (edges[nz[-1]] - edges[nz[0]] + hist.h))
    ax1.set_xlabel("t")
    ax1.set_ylabel("P[Y >= t]")
    ax1.legend(fontsize=8, loc="lower left")
    for ax in (ax0, ax1):
        ax.grid(True, alpha=0.3)
    if title:
        ax0.figure.suptitle(title, fontsize=10)
    return np.asarray([ax0, ax1])


def plot_tradeoff(curve: Any, audit: Any = None, *, ax: Any = None, log: bool = True,
                  mu: Optional[float] = None, title: Optional[str] = None) -> Any:
    """Plot the certified trade-off band and, optionally, an audit's points.

    Parameters
    ----------
    curve : TradeoffCurve
        From ``accountant.tradeoff_curve()``.
    audit : AuditResult, optional
        Its ``points`` are drawn (``runs`` audits).
    ax : matplotlib Axes, optional
    log : bool
        Log-log axes (default; the low-fpr regime is where audits live), else linear.
    mu : float, optional
        Also draw the mu-GDP curve ``Phi(Phi^-1(fpr) + mu)`` (dashed).
    title : str, optional

    Returns
    -------
    matplotlib Axes
    """
    plt = _pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=(5.5, 4.5))
    x = np.asarray(curve.fpr)
    keep = (x > 0) if log else np.ones_like(x, bool)
    conf = "" if curve.certification == "deterministic" else \
        f" (probability >= {curve.confidence:g})"
    ax.fill_between(x[keep], curve.lower[keep], curve.upper[keep], color="tab:blue",
                    alpha=0.3, label="certified band" + conf, lw=0)
    ax.plot(x[keep], curve.upper[keep], color="tab:blue", lw=1.2)
    ax.plot(x[keep], x[keep], color="0.6", lw=0.8, ls=":", label="random guess")
    if mu is not None:
        from scipy.stats import norm  # noqa: PLC0415
        ax.plot(x[keep], norm.cdf(norm.ppf(x[keep]) + mu), color="k", ls="--", lw=1,
                label=f"{mu:g}-GDP")
    if audit is not None and getattr(audit, "points", ()):
        for p in audit.points:
            color = "tab:red" if p.violates else "tab:green"
            fx = max(p.fpr, 0.5 / p.n_out) if log else p.fpr
            ax.plot([fx, p.fpr_upper], [p.tpr, p.tpr_lower], color=color, lw=0.8)
            ax.plot(fx, p.tpr, "o", color=color, ms=3)
            ax.plot(p.fpr_upper, p.tpr_lower, "s", color=color, ms=4, mfc="none")
        if not all(p.violates for p in audit.points):
            ax.plot([], [], "s", color="tab:green", mfc="none",
                    label="audit (certified corner)")
        if any(p.violates for p in audit.points):
            ax.plot([], [], "s", color="tab:red", mfc="none", label="above the certified curve")
    if log:
        ax.set_xscale("log")
        ax.set_yscale("log")
    ax.set_xlabel("false-positive rate")
    ax.set_ylabel("true-positive rate (best attack)")
    direction = "worst case over directions" if curve.direction is None else curve.direction
    ax.set_title(title or f"certified trade-off curve ({direction})")
    ax.legend(loc="lower right", fontsize=8)
    return ax
