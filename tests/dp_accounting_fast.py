"""dp-accounting's mixture-of-Gaussians and Gaussian PLDs, built with the same numbers in
less time.

``MixtureGaussianPrivacyLoss.inverse_privacy_losses`` inverts the privacy loss by a
recursive bisection in Python (``_inverse_privacy_losses_with_range``): one call of the
scalar ``privacy_loss`` per node of the recursion tree, millions of calls for a PLD at
``h = 1e-4`` (most of the time of the tests that compare with it). :func:`bisect` runs
the same bisection for every point at once: each point visits the same intervals
``(lo, hi)`` as in the recursion (the recursion splits a node's points by
``privacy_losses < privacy_loss(mid)``, which depends only on the point and the node),
``mid`` and the privacy loss at ``mid`` are computed by the same floating-point
operations (``logaddexp.reduce`` along the row of the same summands), and a point stops
where the recursion returns, with the same ``floor(hi / precision) * precision``. So the
output is bit-for-bit the recursion's; ``test_fast_mixture_inversion_is_bitwise_dp_accountings``
(tests/test_group.py) checks it against the original on both adjacency types.

The Gaussian PLD, with or without Poisson subsampling, spends most of its time in
``get_delta_for_epsilon``, which inverts the privacy loss by one scalar call of
``inverse_privacy_loss`` per epsilon of its grid (millions per PLD at ``h = 1e-4``).
Without subsampling that inverse is affine in the privacy loss (a ``+``, ``-``, ``*``,
``/`` expression of the sensitivity and the standard deviation).  With subsampling it is
the same affine map of ``log(a e^b + c)`` (ADD, REMOVE) or of an ``asinh`` written with
``logaddexp`` (REPLACE).  :func:`fast_gaussian_pld` evaluates dp-accounting's expressions
in the same order on the whole array: IEEE arithmetic is elementwise the same, numpy's
ufuncs (``log``, ``exp``, ``log1p``, ``logaddexp``) run the same loop on an array as on the
scalars dp-accounting passes them, and the calls dp-accounting makes to Python's ``math``
module stay ``math`` calls, one per element.  So the deltas are bit for bit
dp-accounting's; ``test_fast_gaussian_deltas_are_bitwise_dp_accountings``
(tests/test_interop_dp_accounting.py) checks it on the three adjacency types, with and
without subsampling.
"""

from __future__ import annotations

import contextlib
import math
import numbers
from typing import Iterator

import numpy as np

_CHUNK = 1 << 15


def _losses_at(mech, x: np.ndarray) -> np.ndarray:
    """``mech.privacy_loss(x_i)`` for each ``x_i``, by the same operations."""
    from dp_accounting.pld.privacy_loss_mechanism import AdjacencyType  # noqa: PLC0415

    x_loss = mech.sensitivities[None, :] * x[:, None] / (mech._variance)
    if mech.adjacency_type == AdjacencyType.ADD:
        return -np.logaddexp.reduce(mech._precompute_privacy_loss_constants[None, :] + x_loss,
                                    axis=1)
    if mech.adjacency_type == AdjacencyType.REMOVE:
        return np.logaddexp.reduce(mech._precompute_privacy_loss_constants[None, :] - x_loss,
                                   axis=1)
    raise ValueError(f"{mech.adjacency_type} adjacency type is not supported.")


def bisect(mech, privacy_losses: np.ndarray, bounds: tuple[float, float],
           precision: float = 1e-6) -> np.ndarray:
    """``mech._inverse_privacy_losses_with_range(privacy_losses, bounds, precision)``,
    vectorised over the points (module docstring)."""
    privacy_losses = np.asarray(privacy_losses)
    if len(privacy_losses) == 0:
        return []
    out = np.zeros_like(privacy_losses)
    for a in range(0, privacy_losses.size, _CHUNK):
        pl = privacy_losses[a:a + _CHUNK]
        lo = np.full(pl.shape, bounds[0], dtype=np.float64)
        hi = np.full(pl.shape, bounds[1], dtype=np.float64)
        act = np.flatnonzero(~(hi - lo <= precision))
        while act.size:
            mid = (lo[act] + hi[act]) / 2
            split = _losses_at(mech, mid)
            below = pl[act] < split
            lo[act[below]] = mid[below]
            hi[act[~below]] = mid[~below]
            act = act[~(hi[act] - lo[act] <= precision)]
        out[a:a + _CHUNK] = np.floor(hi / precision) * precision
    return out


@contextlib.contextmanager
def fast_mixture_pld() -> Iterator[None]:
    """Within the block, dp-accounting's mixture-of-Gaussians PLD uses :func:`bisect`."""
    from dp_accounting.pld import privacy_loss_mechanism as plm  # noqa: PLC0415

    cls = plm.MixtureGaussianPrivacyLoss
    orig = cls.__dict__["_inverse_privacy_losses_with_range"]
    cls._inverse_privacy_losses_with_range = bisect
    try:
        yield
    finally:
        cls._inverse_privacy_losses_with_range = orig


def _gaussian_inverse(mech, eps: np.ndarray) -> np.ndarray:
    """``[mech.inverse_privacy_loss(e) for e in eps]`` for a Gaussian, with or without
    subsampling: dp-accounting's expressions, operation for operation."""
    from dp_accounting.pld.privacy_loss_mechanism import AdjacencyType  # noqa: PLC0415

    if mech.sampling_prob != 1.0:
        return _subsampled_gaussian_inverse(mech, np.asarray(eps, dtype=float))
    if mech.adjacency_type == AdjacencyType.REPLACE:
        s, sd2 = mech.sensitivity, mech._standard_deviation**2
        return np.where(eps == 0, 0.0, -eps * sd2 / s / 2)
    return _inverse_without_subsampling(mech, eps)


def _inverse_without_subsampling(mech, loss: np.ndarray) -> np.ndarray:
    """The Gaussian's ``_inverse_privacy_loss_without_subsampling_remove`` (``add``: the
    sensitivity plus it) of each loss, the same expression in the same order."""
    from dp_accounting.pld.privacy_loss_mechanism import AdjacencyType  # noqa: PLC0415

    s, sd2 = mech.sensitivity, mech._standard_deviation**2
    remove = -0.5 * s - loss * sd2 / s
    if mech.adjacency_type == AdjacencyType.REMOVE:
        return remove
    if mech.adjacency_type == AdjacencyType.ADD:
        return s + remove
    raise ValueError(f"{mech.adjacency_type} adjacency type is not supported.")


def _log_a_exp_b_plus_c(a: float, b: np.ndarray, c: float,
                        skip: np.ndarray) -> np.ndarray:
    """``common.log_a_times_exp_b_plus_c(a, b_i, c)`` for ``a > 0 > c`` (``a = 1/q``,
    ``c = 1 - 1/q``): ``log(a + c)`` at ``b = 0``, else ``_log_sub(b + log a, log(-c))``;
    the entries where ``skip`` (those dp-accounting never passes it) are not checked."""
    d = b + np.log(a)
    lc = np.log(-c)
    zero = b == 0
    if np.any(~skip & ~zero & (lc >= d)):
        raise ValueError("a must be greater than b (dp-accounting's _log_sub)")
    with np.errstate(divide="ignore", invalid="ignore"):
        out = d + np.log1p(-np.exp(lc - d))
    return np.where(zero, np.log(a + c), out)


def _isclose(eps: np.ndarray, value: float) -> np.ndarray:
    return np.array([math.isclose(e, value) for e in eps.tolist()], dtype=bool)


def _subsampled_gaussian_inverse(mech, eps: np.ndarray) -> np.ndarray:
    """The subsampled Gaussian's ``_inverse_privacy_loss_add`` / ``_remove`` /
    ``_replace`` on an array (``math`` calls kept per element)."""
    from dp_accounting.pld.privacy_loss_mechanism import AdjacencyType  # noqa: PLC0415

    s, sd, q = mech.sensitivity, mech._standard_deviation, mech.sampling_prob
    sd2 = sd**2
    kind = mech.adjacency_type
    if kind == AdjacencyType.REPLACE:
        log_alpha = 0.5 * (s / sd) ** 2 + math.log1p(-q) - math.log(q)
        half = np.abs(eps) / 2
        # common.log_sinh: a + log1p(-exp(-2 a)) - log 2, and 0 at a = 0
        t = np.array([math.log1p(-math.exp(-2 * a)) if a != 0 else 0.0
                      for a in half.tolist()], dtype=float)
        log_sinh = np.where(half == 0, 0.0, half + t - math.log(2))
        # common.asinh_exp(log_alpha + log_sinh, -sign): log|b| = log 1 = 0.0
        arg = math.log(1.0) + (log_alpha + log_sinh)
        val = np.logaddexp(0.5 * np.logaddexp(0, 2 * arg), arg)
        asinh = np.where(eps >= 0, -1 * val, 1 * val)
        return np.where(eps == 0, 0.0, sd2 / s * (asinh - eps / 2))
    if kind == AdjacencyType.ADD:
        bound = -math.log(1 - q)
        close = _isclose(eps, bound)
        if np.any(~close & (eps > bound)):
            raise ValueError("privacy_loss is larger than -log(1 - sampling_prob)")
        loss = -_log_a_exp_b_plus_c(1 / q, -eps, 1 - 1 / q, close)
        return _inverse_without_subsampling(mech, np.where(close, math.inf, loss))
    if kind == AdjacencyType.REMOVE:
        bound = math.log(1 - q)
        close = _isclose(eps, bound)
        if np.any(~close & (eps <= bound)):
            raise ValueError("privacy_loss is smaller than log(1 - sampling_prob)")
        loss = _log_a_exp_b_plus_c(1 / q, eps, 1 - 1 / q, close)
        return _inverse_without_subsampling(mech, np.where(close, -math.inf, loss))
    raise ValueError(f"{kind} adjacency type is not supported.")


def _gaussian_delta_for_epsilon(orig):
    """dp-accounting's ``AdditiveNoisePrivacyLoss.get_delta_for_epsilon`` with the
    Gaussian's inverse privacy loss evaluated on the whole array; any other mechanism
    goes to ``orig``."""
    from dp_accounting.pld import privacy_loss_mechanism as plm  # noqa: PLC0415

    def get_delta_for_epsilon(self, epsilon):
        if type(self) is not plm.GaussianPrivacyLoss:
            return orig(self, epsilon)
        is_scalar = isinstance(epsilon, numbers.Number)
        epsilons = np.array([epsilon]) if is_scalar else np.asarray(epsilon)
        deltas = np.zeros_like(epsilons, dtype=float)
        if self.sampling_prob == 1.0 or self.adjacency_type == plm.AdjacencyType.REPLACE:
            inverse_indices = np.full_like(epsilons, True, dtype=bool)
        elif self.adjacency_type == plm.AdjacencyType.ADD:
            inverse_indices = epsilons < -math.log1p(-self.sampling_prob)
        elif self.adjacency_type == plm.AdjacencyType.REMOVE:
            inverse_indices = epsilons > math.log1p(-self.sampling_prob)
            other_indices = np.logical_not(inverse_indices)
            deltas[other_indices] = -np.expm1(epsilons[other_indices])
        else:
            return orig(self, epsilon)
        x_cutoffs = np.asarray(_gaussian_inverse(self, epsilons[inverse_indices]),
                               dtype=float)
        deltas[inverse_indices] = (
            self.mu_upper_cdf(x_cutoffs) -
            np.exp(epsilons[inverse_indices] + self.mu_lower_log_cdf(x_cutoffs)))
        deltas = np.clip(deltas, 0, 1)
        return float(deltas[0]) if is_scalar else deltas
    return get_delta_for_epsilon


@contextlib.contextmanager
def fast_gaussian_pld() -> Iterator[None]:
    """Within the block, dp-accounting's Gaussian PLDs (subsampled or not) compute their
    deltas on whole arrays (module docstring)."""
    from dp_accounting.pld import privacy_loss_mechanism as plm  # noqa: PLC0415

    cls = plm.AdditiveNoisePrivacyLoss
    orig = cls.__dict__["get_delta_for_epsilon"]
    cls.get_delta_for_epsilon = _gaussian_delta_for_epsilon(orig)
    try:
        yield
    finally:
        cls.get_delta_for_epsilon = orig
