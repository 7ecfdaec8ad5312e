r"""Plot of a certified trade-off band with an audit's points (matplotlib, optional).

:func:`plot_tradeoff` draws the certified band ``[lower, upper]`` of the attacker's best
true-positive rate against the false-positive rate (:class:`sampledprv.TradeoffCurve`),
optionally the Gaussian-DP curve of a given ``mu`` for comparison, and the points of an
:class:`sampledprv.AuditResult`: each empirical (FPR, TPR) with the box from its
Clopper-Pearson bounds to its certified corner ``(fpr_upper, tpr_lower)``; points whose
corner lies above the band's upper end (contradicting the accountant) are drawn in red.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

__all__ = ["plot_tradeoff"]


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - exercised only without matplotlib
        raise ImportError("plot_tradeoff needs matplotlib: "
                          "pip install 'sampledprv[plot]'") from exc
    return plt


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
