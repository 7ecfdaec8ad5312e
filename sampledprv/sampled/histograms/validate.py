r"""Monte Carlo validation of an analytic privacy-loss law.

:func:`validate` draws ``n`` privacy losses of a mechanism (with the same kernels as
the sampled accountant) and compares their empirical distribution with the exact law
of :mod:`sampledprv.mechanisms.relations` in each direction by a Kolmogorov-Smirnov statistic on the
histogram's edges,

.. math:: D = \max_j \left| \frac{\#\{Y_i \ge t_j\}}{n} - P[Y \ge t_j] \right|,

which is at most the full KS statistic, so the reported p-value
(``scipy.stats.kstwo``, two-sided, exact for continuous laws and conservative with
atoms) is conservative.  A small p-value means the analytic accountant (or the sampler)
is wrong for this mechanism.  Atoms of the law (Laplace, randomized response) are
computed in floating point by the samplers and land within a few ulps of their exact
value, so the law is evaluated with a relative tolerance of ``1e-9`` at each edge (the
distance to the interval :math:`[P(Y > t + \tau), P(Y \ge t - \tau)]`).  ``reference`` lets a user check a
:class:`LogDensityPair` against an analytic spec that should have the same PRV.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from ...core import validation as v
from ...core.advice import AdvisedError, Remedy
from .histogram import tail_counts
from .kernels import loss_histogram
from .window import choose_window
from ...mechanisms.relations import privacy_loss

__all__ = ["validate", "ValidationReport", "MIN_VALIDATE_SAMPLES", "detectable_distance"]

#: fewest draws per direction :func:`validate` accepts: below it only gross errors (a
#: distance of several percent in the tail probabilities) could be detected
MIN_VALIDATE_SAMPLES = 1000

#: the significance level a report's ``str`` is judged at (``passed()``'s default)
DEFAULT_LEVEL = 1e-3


def detectable_distance(n: int, level: float = DEFAULT_LEVEL, directions: int = 1) -> float:
    """The smallest KS distance the test rejects at ``level`` with ``n`` draws.

    With the Bonferroni correction over ``directions``, the law is rejected when
    ``kstwo.sf(D, n) < level / directions``; a wrong law whose tail probabilities differ
    from the samples' by less than this distance passes at that ``n`` (the test has no
    power against it).
    """
    from scipy import stats  # noqa: PLC0415 - slow to import; keep it lazy

    return float(stats.kstwo.isf(level / max(1, directions), int(n)))


def _short_name(obj: object) -> str:
    """A one-line name for messages: a spec's repr, a user input's ``name`` (never the
    repr of its functions)."""
    name = getattr(obj, "name", None)
    if isinstance(name, str) and name:
        return name
    text = repr(obj)
    return text if len(text) <= 80 and "<function" not in text else type(obj).__name__


@dataclass(frozen=True)
class ValidationReport:
    """Result of :func:`validate`.

    Attributes
    ----------
    statistic : float
        Largest KS distance over directions.
    pvalue : float
        Bonferroni-corrected p-value (``min(1, directions * smallest p)``).
    location : float
        Loss value ``t`` where the largest distance occurs.
    direction : str
        Direction of the largest distance.
    n : int
        Draws per direction.
    per_direction : dict
        ``direction -> (statistic, pvalue, location)``.
    """

    statistic: float
    pvalue: float
    location: float
    direction: str
    n: int
    per_direction: dict = field(default_factory=dict)

    def passed(self, level: float = 1e-3) -> bool:
        """True when the samples are consistent with the law at significance ``level``."""
        return self.pvalue >= level

    def detectable(self, level: float = DEFAULT_LEVEL) -> float:
        """The smallest distance this test could have rejected at ``level``
        (:func:`detectable_distance`): the power statement that goes with a PASS."""
        return detectable_distance(self.n, level, max(1, len(self.per_direction)))

    def __str__(self) -> str:
        k = len(self.per_direction)
        which = (f"p-value {self.pvalue:.3g} (Bonferroni over {k} directions: {k} x the "
                 "smallest)") if k > 1 else f"p-value {self.pvalue:.3g}"
        verdict = "PASS" if self.passed(DEFAULT_LEVEL) else "FAIL"
        return (f"{verdict} at level {DEFAULT_LEVEL:g}: max KS distance {self.statistic:.3g} "
                f"at loss {self.location:.4g} ({self.direction}), {which}, n = {self.n:,} "
                f"per direction (detects distances above {self.detectable(DEFAULT_LEVEL):.3g})")


def validate(mechanism: object, n_samples: int = 10**6, *, reference: Optional[object] = None,
             seed: int = 0, bins: int = 4096, progress: Optional[bool] = None
             ) -> ValidationReport:
    r"""Compare samples of ``mechanism``'s privacy loss with an analytic PRV.

    Parameters
    ----------
    mechanism : spec, LogDensityPair or PrivacyLossSampler
        What to sample.
    n_samples : int
        Draws per direction, at least :data:`MIN_VALIDATE_SAMPLES`.  The test detects a
        wrong law only when its tail probabilities differ from the samples' by more than
        :func:`detectable_distance` (about :math:`1.95/\sqrt{n}` at level ``1e-3``).
    reference : spec, optional
        Analytic spec whose exact PRV (``sampledprv.mechanisms.relations.privacy_loss``) is the reference;
        defaults to ``mechanism`` itself (which must then be an analytic spec).
    seed, bins, progress
        Sampling seed, histogram bins, progress bar.
    """

    n = v.positive_int("n_samples", n_samples)
    if n < MIN_VALIDATE_SAMPLES:
        raise AdvisedError(
            f"n_samples={n:,} is too few for a Monte Carlo check: at that n only a KS "
            f"distance above {detectable_distance(n):.2g} would be detected, so a PASS would "
            f"say almost nothing (1e6 draws detect {detectable_distance(10**6):.1e})",
            [Remedy("n_samples", "set", float(MIN_VALIDATE_SAMPLES), note="at least")])
    ref = mechanism if reference is None else reference
    symmetric = bool(getattr(mechanism, "symmetric", False)) and \
        bool(getattr(ref, "symmetric", False))
    dirs = ("remove",) if symmetric else ("remove", "add")
    children = np.random.SeedSequence(seed).spawn(2 * len(dirs))
    per = {}
    for i, d in enumerate(dirs):
        try:
            law = privacy_loss(ref, d)
        except Exception as exc:  # noqa: BLE001
            raise ValueError(f"no analytic PRV for {_short_name(ref)}: pass reference= an "
                             "analytic spec with the same privacy loss, e.g. "
                             "sp.validate(pair, reference=sp.Gaussian(1.0))") from exc
        lo, h, nb = choose_window(ref, d, n, bins, np.random.default_rng(children[2 * i]))
        hist = loss_histogram(mechanism, direction=d, n=n, lo=lo, h=h, bins=nb,
                              seed=children[2 * i + 1], progress=progress)
        edges = lo + h * np.arange(nb + 1)
        emp = tail_counts(hist) / hist.n
        tol = 1e-9 * np.maximum(1.0, np.abs(edges))
        hi_ = 1.0 - np.asarray(law.cdf(edges - tol), dtype=np.float64)   # P[Y >= t - tol]
        lo_ = np.asarray(law.sf(edges + tol), dtype=np.float64)          # P[Y > t + tol]
        diff = np.maximum(np.maximum(emp - hi_, lo_ - emp), 0.0)
        # the atoms at +-inf: compare their frequencies too
        extra = [abs(hist.pos_inf / hist.n - law.p_pos_inf),
                 abs(hist.neg_inf / hist.n - law.p_neg_inf)]
        j = int(np.argmax(diff))
        stat_, loc = float(diff[j]), float(edges[j])
        if max(extra) > stat_:
            stat_ = max(extra)
            loc = math.inf if extra[0] >= extra[1] else -math.inf
        from scipy import stats  # noqa: PLC0415 - slow to import; keep it lazy
        p = float(stats.kstwo.sf(stat_, hist.n)) if stat_ > 0 else 1.0
        per[d] = (stat_, p, loc)
    worst = max(per, key=lambda d: per[d][0])
    pmin = min(x[1] for x in per.values())
    return ValidationReport(per[worst][0], min(1.0, len(dirs) * pmin), per[worst][2], worst,
                            n, per)
