r"""User-supplied mechanisms for the sampled accountant.

Two ways to describe a mechanism that has no closed-form privacy loss:

* :class:`LogDensityPair` -- ``log p(w)`` and ``log q(w)`` of the outputs on two
  neighbouring datasets, optionally with samplers of ``P`` and ``Q``.  The privacy
  loss is :math:`L(w) = \log p(w) - \log q(w)`; the "remove" PRV is :math:`L(w)`,
  :math:`w \sim P`, the "add" PRV is :math:`-L(w)`, :math:`w \sim Q`.
* :class:`PrivacyLossSampler` -- callables that return privacy-loss samples directly.

Both are frozen dataclasses, accepted by :meth:`SampledAccountant.compose` and by
:func:`sampledprv.validate`.  Their :meth:`check` method runs cheap sanity checks on a
few thousand draws (shapes, NaN, normalization) and raises errors that name the fix;
the accountant calls it before sampling.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

from ...core.advice import warn_user
from ..draws.ars import AdaptiveRejectionSampler
from ..draws.user_fills import fill_as_sampler, make_fill, scalar_as_vector
from .input_checks import (TAIL_CHECK_N, call_logdensity, call_sampler, check_identities,
                           check_range, check_upper_tails, markov_check, normalize_tails,
                           numeric, ratio_mean)
from .tail_inputs import RenyiInput
from .user_calls import LOGDENSITY_SIGNATURE, LOSS_SAMPLER_SIGNATURE, call_user

__all__ = ["LogDensityPair", "PrivacyLossSampler", "LossSamplerFn"]

#: ``f(rng, size) -> array`` of shape ``(size,)`` (or ``(size, d)`` for outputs).
LossSamplerFn = Callable[[np.random.Generator, int], np.ndarray]

_CHECK_N = 4096


@dataclass(frozen=True)
class LogDensityPair:
    r"""A mechanism given by the log-densities of its outputs on neighbouring inputs.

    Parameters
    ----------
    logp, logq : callable
        Vectorized ``log p(w)``, ``log q(w)`` on an array of outputs, shape ``(n,)`` or
        ``(n, d)``, returning shape ``(n,)``; ``-inf`` where the density vanishes.  Only
        the difference matters, so a constant common to both may be dropped; a
        *different* constant shifts every loss and is detected by :meth:`check`.
    sample_p, sample_q : callable, optional
        ``sample(rng, size)`` with ``rng`` a :class:`numpy.random.Generator`, returning
        ``size`` outputs.  Numba-jitted samplers are run inside the compiled kernels
        when the kernels support them.  Without samplers, 1-D log-concave densities
        are sampled by adaptive rejection sampling (``sampledprv.sampled.draws.samplers``).
    symmetric : bool
        Declare that :math:`\log q/p` under ``Q`` has the same law as
        :math:`\log p/q` under ``P`` (then one direction is sampled).  Default False:
        both directions are sampled.
    name : str
        Label used in reports.
    kernel : bool
        Full-speed form for 1-D outputs: ``logp(w)``/``logq(w)`` are Numba-jitted scalar
        functions and ``sample_p(state)``/``sample_q(state)`` jitted samplers drawing
        from an xoshiro ``state`` with :mod:`sampledprv.sampled.draws.rng`; they are fused
        into the parallel histogram kernel (draw, loss, bin, count in one pass).
    renyi : callable or mapping, optional
        Upper bounds on the Renyi divergences (nats): ``renyi(order, direction)`` for an
        order :math:`\lambda > 1` and direction ``"remove"`` (:math:`D_\lambda(P\|Q)`)
        or ``"add"`` (:math:`D_\lambda(Q\|P)`), ``math.inf`` where none is known; or a
        table ``{order: value}`` (both directions) or ``{"remove": {...}, "add": {...}}``
        (stored as a :class:`~sampledprv.sampled.certification.tail_inputs.RenyiTable`).
        The sampled accountant bounds the unseen tail with it (no sample floor); the
        certificate is then conditional on the bound, which is checked against the
        samples.
    loss_range : (float, float), optional
        ``(lo, hi)`` with :math:`lo \le \log p/q \le hi` for every output (bounded
        losses, e.g. pure-DP mechanisms); or ``{"remove": (lo, hi), "add": (lo, hi)}``
        for the two losses.  The unseen tail then ends at ``hi``; samples outside raise.

    Notes
    -----
    The remove PRV is :math:`Y = \log p(w) - \log q(w)` with :math:`w \sim P`, the add PRV
    is :math:`\log q(w) - \log p(w)` with :math:`w \sim Q`;
    :math:`\delta(\varepsilon) = \max` over the two of :math:`E[(1 - e^{\varepsilon - Y})_+]`.
    """

    logp: Callable[[np.ndarray], np.ndarray]
    logq: Callable[[np.ndarray], np.ndarray]
    sample_p: Optional[LossSamplerFn] = None
    sample_q: Optional[LossSamplerFn] = None
    symmetric: bool = False
    name: str = "LogDensityPair"
    kernel: bool = False
    renyi: Optional[RenyiInput] = None
    loss_range: Optional[tuple] = None

    def __post_init__(self) -> None:
        normalize_tails(self)
        if self.kernel and (self.sample_p is None or self.sample_q is None):
            raise ValueError("kernel=True needs jitted sample_p(state) and sample_q(state)")
        for f in ("logp", "logq"):
            if not callable(getattr(self, f)):
                raise ValueError(f"{f} must be a callable log-density, got {getattr(self, f)!r}")
        for f in ("sample_p", "sample_q"):
            s = getattr(self, f)
            if s is not None and not callable(s):
                raise ValueError(f"{f} must be a callable sample(rng, size) or None, got {s!r}")

    # -- sampling -------------------------------------------------------------------
    def _vectorized(self) -> tuple:
        """``(sample_p, sample_q, logp, logq)`` in the vectorized numpy form."""
        if not self.kernel:
            return self._sampler("p"), self._sampler("q"), self.logp, self.logq
        sp_, lp, lq = scalar_as_vector(self.sample_p, self.logp, self.logq)
        sq_, _, _ = scalar_as_vector(self.sample_q, self.logp, self.logq)
        return sp_, sq_, lp, lq

    def _sampler(self, which: str) -> LossSamplerFn:
        fn = self.sample_p if which == "p" else self.sample_q
        if fn is not None:
            return fn
        logf = self.logp if which == "p" else self.logq
        cache = self.__dict__.setdefault("_ars", {})
        if which not in cache:
            # exact, log-concave 1-D targets
            cache[which] = AdaptiveRejectionSampler(logf).sample
        return cache[which]

    def numpy_loss_sampler(self, direction: str) -> LossSamplerFn:
        """``f(rng, size) -> losses`` for ``direction`` in {"remove", "add"} (numpy path)."""
        which = "p" if direction == "remove" else "q"
        s_p, s_q, logp, logq = self._vectorized()
        draw = s_p if which == "p" else s_q
        sign = 1.0 if direction == "remove" else -1.0
        name = f"sample_{which}"

        def f(rng: np.random.Generator, size: int) -> np.ndarray:
            w = call_sampler(draw, rng, size, name)
            lp = numeric(call_user(logp, "logp", LOGDENSITY_SIGNATURE, w), "logp")
            lq = numeric(call_user(logq, "logq", LOGDENSITY_SIGNATURE.replace("logp", "logq"),
                                   w), "logq")
            if lp.shape != (size,) or lq.shape != (size,):
                raise ValueError(f"logp/logq must return shape ({size},), got {lp.shape} "
                                 f"and {lq.shape}")
            with np.errstate(invalid="ignore"):
                loss = sign * (lp - lq)
            if np.isnan(loss).any():
                i = int(np.flatnonzero(np.isnan(loss))[0])
                raise ValueError(
                    f"privacy loss is NaN at w = {w[i]!r} (logp = {lp[i]}, logq = {lq[i]}); "
                    f"the {name} sampler produced an output where logp/logq are NaN or both "
                    "-inf: fix the log-densities (use log-space formulas) or the sampler")
            check_range(self, loss, direction)
            return loss
        return f

    def loss_sampler(self, direction: str) -> LossSamplerFn:
        """Source protocol of :func:`sampledprv.sampled.histograms.kernels.loss_histogram`: a fused
        jitted ``fill(state, out)`` when ``kernel=True``, else the numpy sampler."""
        if self.kernel:
            fills = self.__dict__.setdefault("_fills", {})
            if direction not in fills:
                sample = self.sample_p if direction == "remove" else self.sample_q
                fills[direction] = make_fill(sample, self.logp, self.logq,
                                              1.0 if direction == "remove" else -1.0)
            return fills[direction]
        return self.numpy_loss_sampler(direction)

    # -- checks ---------------------------------------------------------------------
    def check(self, rng: Optional[np.random.Generator] = None, n: int = _CHECK_N) -> dict:
        r"""Sanity-check the pair on ``n`` draws; raise :class:`ValueError` naming the fix.

        The default check (``rng=None``, ``n`` the default) draws from one fixed seed, so
        its outcome is a property of the pair: it runs once per pair object, and later
        calls replay it (the same report, its warnings issued again; a failure is not
        remembered and fails again).  Every :meth:`SampledAccountant.compose` of the pair
        runs the default check.  The checks themselves are those of :meth:`run_checks`.
        """
        if rng is not None or n != _CHECK_N:
            return self.run_checks(rng, n)
        done = self.__dict__.get("_default_check")
        if done is None:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                report = self.run_checks(None, n)
            done = (report, [(w.message, w.category) for w in caught])
            self.__dict__["_default_check"] = done
        report, issued = done
        for message, category in issued:
            warn_user(message, category)
        return dict(report)

    def run_checks(self, rng: Optional[np.random.Generator] = None,
                   n: int = _CHECK_N) -> dict:
        r"""Run the sanity checks of the pair on ``n`` draws (every call draws afresh);
        raise :class:`ValueError` naming the fix.

        Checks sampler output shapes and NaN, log-density shapes and NaN, and the
        relative normalization: :math:`E_P[q/p] = Q(\mathrm{supp}\,P) \le 1` and
        :math:`E_Q[p/q] \le 1`; with both samplers, the two-sided identities
        :math:`P(L < -t) = E_Q[e^{-L'}; L' > t]` of :mod:`.loss_identity` (a sampler
        narrower than its density, truncated or scaled fails them), and with
        ``symmetric=True`` their one-sample form, which a pair that is not symmetric
        fails.  A Monte Carlo mean significantly above 1 means that
        ``logp`` and ``logq`` are normalized with different constants, which shifts every
        privacy loss.  In 1-D, the integrals of ``exp(logp)`` and ``exp(logq)`` are
        also compared by quadrature (a warning if they differ).
        Returns the diagnostic numbers.
        """
        rng = np.random.default_rng(12345) if rng is None else rng
        report: dict = {}
        dim = None
        losses: dict = {}
        s_p, s_q, logp, logq = self._vectorized() if self.kernel else \
            (self.sample_p, self.sample_q, self.logp, self.logq)
        for which, own, other in (("p", logp, logq), ("q", logq, logp)):
            fn = s_p if which == "p" else s_q
            if fn is None:
                continue
            w = call_sampler(fn, rng, n, f"sample_{which}", dim)
            dim = w.shape[1] if w.ndim == 2 else None
            lo = call_logdensity(own, w, f"log{which}")
            lt = call_logdensity(other, w, "logq" if which == "p" else "logp")
            if np.any(lo == -np.inf):
                i = int(np.flatnonzero(lo == -np.inf)[0])
                raise ValueError(
                    f"sample_{which} produced w = {w[i]!r} where log{which}(w) = -inf: the "
                    f"sampler and log{which} disagree (the sampler must draw from "
                    f"exp(log{which}))")
            with np.errstate(invalid="ignore"):
                check_range(self, lo - lt, "remove" if which == "p" else "add")
            log_ratio = lt - lo                     # log q/p at draws from p (or p/q)
            losses["remove" if which == "p" else "add"] = -log_ratio
            mean, se = ratio_mean(log_ratio)
            report[f"E_{which}[ratio]"] = (mean, se)
            other_name = "logq" if which == "p" else "logp"
            markov_check(log_ratio, which, other_name)
            if mean > 1.0 + max(6.0 * se, 0.02):
                raise ValueError(
                    f"logp and logq do not look normalized consistently: the Monte Carlo "
                    f"estimate of E_{which.upper()}[exp({other_name} - log{which})] is "
                    f"{mean:.4g} +- {se:.2g}, but for normalized densities it is at most 1. "
                    f"Add the missing log-normalizing constant (here about "
                    f"{math.log(mean):+.4g} in {other_name} relative to log{which}), or "
                    f"make sample_{which} draw from exp(log{which}) if it does not")
        check_identities(self.name, losses, self.symmetric)
        if s_p is not None and s_q is not None:
            self._tail_check(rng, s_p, s_q, logp, logq, dim)
        if dim is None and not self.kernel:
            report.update(self._quadrature_check())
        return report

    def _tail_check(self, rng: np.random.Generator, s_p: Callable, s_q: Callable,
                    logp: Callable, logq: Callable, dim: Optional[int]) -> None:
        """The upper-tail change-of-measure check (:func:`.input_checks.check_upper_tails`)
        on :data:`TAIL_CHECK_N` draws of each sampler (divided by the output dimension
        for vector outputs, at least 65,536), drawn in chunks; whatever ``symmetric``
        says."""
        total = TAIL_CHECK_N if dim is None else max(1 << 16, TAIL_CHECK_N // dim)
        chunk = max(1024, (1 << 21) // (dim or 1))
        out = {}
        for which, fn in (("p", s_p), ("q", s_q)):
            parts, left = [], total
            while left > 0:
                size = min(chunk, left)
                w = call_sampler(fn, rng, size, f"sample_{which}")
                with np.errstate(invalid="ignore"):
                    loss = call_logdensity(logp, w, "logp") - call_logdensity(logq, w, "logq")
                parts.append(np.nan_to_num(loss if which == "p" else -loss, nan=0.0,
                                             posinf=np.inf, neginf=-np.inf))
                left -= size
            out[which] = np.concatenate(parts)
        check_upper_tails(self.name, out["p"], out["q"])

    def _quadrature_check(self) -> dict:
        """1-D outputs: integrate ``exp(logp)`` and ``exp(logq)``; warn if they differ.

        Only the ratio of the two normalizing constants shifts the loss, so equal
        integrals (a common dropped constant) are accepted silently.
        """
        from scipy import integrate

        out = {}
        for name, f in (("logp", self.logp), ("logq", self.logq)):
            def dens(x: float) -> float:
                v = np.asarray(f(np.array([x], dtype=np.float64)), dtype=np.float64)
                return float(np.exp(v.reshape(-1)[0])) if v.size else 0.0
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    total, _ = integrate.quad(dens, -np.inf, np.inf, limit=200)
            except Exception:  # noqa: BLE001 - density not evaluable pointwise in 1-D
                return out
            if not (math.isfinite(total) and total > 0):
                return out
            out[f"integral exp({name})"] = total
        if len(out) == 2:
            zp, zq = out["integral exp(logp)"], out["integral exp(logq)"]
            if abs(math.log(zp / zq)) > 1e-3:
                warn_user(
                    f"exp(logp) integrates to {zp:.6g} but exp(logq) to {zq:.6g}; different "
                    f"normalizing constants shift every privacy loss by log({zp:.4g}/{zq:.4g}) "
                    f"= {math.log(zp / zq):+.4g}. Normalize both (subtract log({zp:.4g}) from "
                    f"logp and log({zq:.4g}) from logq)", RuntimeWarning)
        return out


@dataclass(frozen=True)
class PrivacyLossSampler:
    r"""A mechanism given by samplers of its privacy loss.

    Parameters
    ----------
    sample_remove : callable
        ``sample_remove(rng, size)`` returns ``size`` draws of :math:`\log p(w)/q(w)`,
        :math:`w \sim P` (``+inf`` allowed where ``q = 0``).
    sample_add : callable, optional
        Draws of :math:`\log q(w)/p(w)`, :math:`w \sim Q`.  ``None`` declares the
        mechanism symmetric (both directions have the law of ``sample_remove``).
    name : str
        Label used in reports.
    kernel : bool
        The samplers are Numba-jitted ``fill(state, out)`` functions (the protocol of
        :mod:`sampledprv.sampled.histograms.kernels`), run inside the parallel fused kernel.
    renyi, loss_range
        Tail information, as for :class:`LogDensityPair`.
    """

    sample_remove: LossSamplerFn
    sample_add: Optional[LossSamplerFn] = None
    name: str = "PrivacyLossSampler"
    kernel: bool = False
    renyi: Optional[RenyiInput] = None
    loss_range: Optional[tuple] = None

    def __post_init__(self) -> None:
        normalize_tails(self)
        if not callable(self.sample_remove):
            raise ValueError(f"sample_remove must be callable, got {self.sample_remove!r}")
        if self.sample_add is not None and not callable(self.sample_add):
            raise ValueError(f"sample_add must be callable or None, got {self.sample_add!r}")

    @property
    def symmetric(self) -> bool:
        return self.sample_add is None

    def numpy_loss_sampler(self, direction: str) -> LossSamplerFn:
        fn = self.sample_remove if (direction == "remove" or self.sample_add is None) \
            else self.sample_add
        name = "sample_remove" if fn is self.sample_remove else "sample_add"
        if self.kernel:
            fn = fill_as_sampler(fn)

        def f(rng: np.random.Generator, size: int) -> np.ndarray:
            out = numeric(call_user(fn, name, LOSS_SAMPLER_SIGNATURE, rng, size), name)
            if out.shape != (size,):
                raise ValueError(f"{name}(rng, size={size}) returned shape {out.shape}; a "
                                 f"privacy-loss sampler must return shape ({size},)")
            if np.isnan(out).any():
                i = int(np.flatnonzero(np.isnan(out))[0])
                raise ValueError(f"{name} returned NaN (first at draw {i} of {size}); "
                                 "return +inf for infinite loss, never NaN")
            check_range(self, out, direction)
            return out
        return f

    def loss_sampler(self, direction: str) -> LossSamplerFn:
        """Source protocol of :func:`sampledprv.sampled.histograms.kernels.loss_histogram`."""
        if self.kernel:
            return self.sample_remove if (direction == "remove" or self.sample_add is None) \
                else self.sample_add
        return self.numpy_loss_sampler(direction)

    def check(self, rng: Optional[np.random.Generator] = None, n: int = _CHECK_N) -> dict:
        r"""Check shapes and NaN, and that :math:`E[e^{-Y}] \le 1` (a property of every
        privacy loss: :math:`E_P[q/p] \le 1`)."""
        rng = np.random.default_rng(12345) if rng is None else rng
        report = {}
        losses = {}
        for d in (("remove",) if self.symmetric else ("remove", "add")):
            y = self.numpy_loss_sampler(d)(rng, n)
            losses[d] = y
            check_range(self, y, d)
            r = np.exp(-np.clip(y, -700, None))
            mean, se = float(r.mean()), float(r.std() / math.sqrt(n))
            report[f"E[exp(-Y_{d})]"] = (mean, se)
            if mean > 1.0 + max(6.0 * se, 0.02):
                raise ValueError(
                    f"the {d} samples are not privacy losses: E[exp(-Y)] = {mean:.4g} +- "
                    f"{se:.2g} > 1, but for Y = log p/q under P it is at most 1. Check the "
                    "sign convention (remove: log p/q with w ~ P) and the normalization")
        check_identities(self.name, losses, self.symmetric)
        return report
