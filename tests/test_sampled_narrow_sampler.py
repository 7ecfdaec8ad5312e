"""A sampler narrower than its density must not give an optimistic certificate
(issue 24, item 3): the change-of-measure identities (sampled/certification/loss_identity.py)
are checked on the check draws and on the accountant's own samples."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import sampledprv as sp
from sampledprv.sampled.certification.loss_identity import from_draws, identity_violation

from gaussian_pair import good_p, good_q, logp, logq  # noqa: E402 (tests/ on the path)


def _truncated(c):
    """1 + N(0, 1) truncated to [-c, c], by rejection from N(0, 1) (exactly the law of
    ``scipy.stats.truncnorm(-c, c)``, ten times faster than its inverse-CDF ``rvs``)."""
    def sample(rng, n):
        out = np.empty(0)
        while out.size < n:
            z = rng.normal(size=int((n - out.size) * 1.1) + 16)
            out = np.concatenate([out, z[np.abs(z) <= c]])
        return 1.0 + out[:n]
    return sample


#: the sampler bugs: (sample_p, sample_q)
VARIANTS = {
    "shift toward q": (lambda rng, n: rng.normal(0.75, 1.0, n), good_q),
    "shift away": (lambda rng, n: rng.normal(1.25, 1.0, n), good_q),
    "truncated at 2": (_truncated(2.0), good_q),
    "truncated at 2.5": (_truncated(2.5), good_q),
    "truncated at 3": (_truncated(3.0), good_q),
    "scale 0.8": (lambda rng, n: 1.0 + 0.8 * rng.normal(size=n), good_q),
    "scale 0.9": (lambda rng, n: 1.0 + 0.9 * rng.normal(size=n), good_q),
    "both scale 0.9": (lambda rng, n: 1.0 + 0.9 * rng.normal(size=n),
                       lambda rng, n: 0.9 * rng.normal(size=n)),
}


@pytest.fixture(scope="module")
def exact():
    """epsilon(1e-2) of 3 compositions of the pair (a Gaussian with mu = 1): 4.904."""
    iv = sp.Accountant(eps_error=1e-3, delta_error=1e-12).compose(sp.Gaussian(1.0), 3) \
        .epsilon(1e-2)
    assert abs(iv.estimate - 4.904) < 2e-3
    return iv.lower


def _outcome(pair, n, seed):
    """``None`` when refused, else the interval's upper end."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            acc = sp.SampledAccountant(n, alpha=0.1, seed=seed).compose(pair, 3)
            return acc.epsilon(1e-2).upper
    except ValueError as err:
        assert "sample" in str(err), err
        return None


#: ``_outcome`` of each run ``(variant, symmetric, n, seed)`` already made in this process:
#: the quick test's 16 runs are runs of the slow test (a run is a pure function of its key:
#: the samplers draw only from the accountant's seeded generator), made once per process.
_OUTCOMES: dict = {}


def _runs(ns, seeds, exact):
    optimistic, caught, total = [], 0, 0
    for name, (s_p, s_q) in VARIANTS.items():
        for symmetric in (True, False):
            for n in ns:
                for seed in seeds:
                    key = (name, symmetric, n, seed)
                    if key not in _OUTCOMES:
                        pair = sp.LogDensityPair(logp, logq, sample_p=s_p, sample_q=s_q,
                                                 symmetric=symmetric, name=name)
                        _OUTCOMES[key] = _outcome(pair, n, seed)
                    upper = _OUTCOMES[key]
                    total += 1
                    if upper is None:
                        caught += 1
                    elif upper < exact:
                        optimistic.append((name, symmetric, n, seed, upper))
    return optimistic, caught, total


@pytest.mark.slow
def test_narrow_samplers_are_caught_or_conservative(exact):
    """The acceptance: 0 optimistic intervals over 64 runs (8 variants, both symmetric
    settings, n in {2e4, 2e5}, 2 seeds)."""
    optimistic, caught, total = _runs((20_000, 200_000), (0, 1), exact)
    assert total == 64
    assert not optimistic, optimistic
    assert caught >= 50          # measured: 60-64 of 64 refused, the others conservative


def test_narrow_samplers_quick(exact):
    optimistic, _, total = _runs((20_000,), (0,), exact)
    assert total == 16 and not optimistic, optimistic


def test_the_issue_pair_is_refused():
    pair = sp.LogDensityPair(logp, logq, sample_p=VARIANTS["scale 0.8"][0], sample_q=good_q,
                             symmetric=True)
    with pytest.raises(ValueError, match="symmetric=True"):
        sp.SampledAccountant(200_000, alpha=0.1).compose(pair, 3).epsilon(1e-2)


def test_symmetric_needs_evidence():
    """A non-symmetric pair declared symmetric fails the one-sample identity even with
    exact samplers: a subsampled Gaussian (q = 0.5)."""
    def lp(w):
        return np.logaddexp(math.log(0.5) + logp(w), math.log(0.5) + logq(w))

    def sample(rng, n):
        return np.where(rng.random(n) < 0.5, rng.normal(1.0, 1.0, n), rng.normal(0.0, 1.0, n))

    pair = sp.LogDensityPair(lp, logq, sample_p=sample, sample_q=good_q, symmetric=True)
    with pytest.raises(ValueError, match="symmetric"):
        sp.SampledAccountant(200_000, alpha=0.1).compose(pair, 3).epsilon(1e-2)
    fine = sp.LogDensityPair(lp, logq, sample_p=sample, sample_q=good_q)
    sp.SampledAccountant(20_000, alpha=0.1).compose(fine, 3).epsilon(1e-2)


# ---- no false alarms on valid pairs ------------------------------------------------------
def _laplace(rng, n, loc=0.0):
    return rng.laplace(loc, 1.0, n)


VALID = {
    "gaussian": (logp, logq, good_p, good_q, True),
    "laplace": (lambda w: -np.abs(w - 1.0), lambda w: -np.abs(w),
                lambda rng, n: _laplace(rng, n, 1.0), _laplace, True),
    # uniform on shifted supports: losses +inf and -inf, a bounded loss elsewhere
    "shifted uniforms": (lambda w: np.where((w >= 0) & (w <= 1), 0.0, -np.inf),
                         lambda w: np.where((w >= 0.2) & (w <= 1.2), 0.0, -np.inf),
                         lambda rng, n: rng.random(n), lambda rng, n: 0.2 + rng.random(n),
                         True),
    "narrow gaussians": (lambda w: -0.5 * ((w - 0.05) / 0.01) ** 2,
                         lambda w: -0.5 * (w / 0.01) ** 2,
                         lambda rng, n: rng.normal(0.05, 0.01, n),
                         lambda rng, n: rng.normal(0.0, 0.01, n), True),
}


@pytest.mark.parametrize("name", sorted(VALID))
def test_valid_pairs_pass(name):
    lp, lq, s_p, s_q, symmetric = VALID[name]
    for seed in range(3):
        for sym in {False, symmetric}:
            pair = sp.LogDensityPair(lp, lq, sample_p=s_p, sample_q=s_q, symmetric=sym)
            pair.check(np.random.default_rng(seed))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                sp.SampledAccountant(20_000, alpha=0.1, seed=seed).compose(pair, 2) \
                    .epsilon(1e-2)


def test_identity_false_alarm_rate():
    """Exact Gaussian draws at a lenient level: the alarm rate stays below the level."""
    rng = np.random.default_rng(7)
    alarms = 0
    for _ in range(200):
        y = rng.normal(0.5, 1.0, 2000)
        y_add = rng.normal(0.5, 1.0, 2000)
        alarms += identity_violation(from_draws(y), from_draws(y_add), 0.05) is not None
        alarms += identity_violation(from_draws(y), None, 0.05) is not None
    assert alarms <= 20          # level 0.05 per test: about 20 of 400 at most
