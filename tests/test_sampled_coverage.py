"""Coverage experiments: the certified intervals miss the truth at most as often as alpha.

Many independent seeds at a small ``n`` and ``alpha = 0.05``; the number of misses is
compared with ``Binomial(seeds, alpha)`` by a one-sided binomial test (a valid
procedure misses at most alpha of the time; the union bound makes the envelope
conservative, so misses are expected to be far rarer).
"""

import math
import warnings

import numpy as np
import pytest
from scipy import stats

import sampledprv as sp
from sampledprv.analytic.accountant import Accountant
from sampledprv.mechanisms.relations import privacy_loss
from sampledprv.sampled import SampledAccountant
from sampledprv.sampled.certification.envelopes import envelope

ALPHA = 0.05


def _binomial_ok(misses: int, trials: int) -> float:
    return stats.binomtest(misses, trials, ALPHA, alternative="greater").pvalue


def _coverage(mech, k, n, seeds, *, delta=None, eps=None, certify="envelope", bins=256,
              ref_eps_error=1e-4, **kw):
    exact = Accountant(eps_error=ref_eps_error).compose(mech, k)
    truth = exact.epsilon(delta) if delta is not None else exact.delta(eps)
    misses = finite = 0
    for s in range(seeds):
        acc = SampledAccountant(n, alpha=ALPHA, seed=1000 + s, bins=bins, certify=certify,
                                progress=False, **kw).compose(mech, k)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            iv = acc.epsilon(delta) if delta is not None else acc.delta(eps)
        if math.isfinite(iv.upper):
            finite += 1
        if iv.upper < truth.lower or iv.lower > truth.upper:
            misses += 1
    return misses, finite


def test_envelope_event_coverage():
    """The per-histogram event {Y_low <=st Y <=st Y_up} itself, checked on the exact law."""
    mech = sp.PoissonSubsampled(sp.Gaussian(1.0), 0.3)
    misses, seeds = 0, 300
    for s in range(seeds):
        acc = SampledAccountant(2000, alpha=ALPHA, seed=s, bins=64, progress=False).compose(mech)
        law = privacy_loss(mech, "remove")
        hist = acc.empirical(mech).remove
        env = envelope(hist, ALPHA)
        edges = hist.lo + hist.h * np.arange(len(hist.counts) + 1)
        p_ge = 1.0 - law.cdf(np.nextafter(edges, -np.inf))           # P[Y >= t_j]
        up_ge = np.cumsum(env.upper.probs[::-1])[::-1] + env.upper.p_inf   # P[Y_up >= t_j]
        low_ge = np.cumsum(env.lower.probs[::-1])[::-1] + env.lower.p_inf  # P[Y_low >= t_j]
        # Y_up >= t_j  <=>  Y >= t_{j-1} rounded up; compare the tail bounds directly
        ok_up = np.all(up_ge[1:] >= p_ge[:-1] - 1e-12) and up_ge[0] >= 1 - 1e-12
        ok_low = np.all(low_ge <= p_ge + 1e-12)
        misses += not (ok_up and ok_low)
    assert _binomial_ok(misses, seeds) > 1e-3, misses


def test_coverage_envelope_epsilon():
    misses, finite = _coverage(sp.PoissonSubsampled(sp.Gaussian(1.0), 0.2), 5, 20000, 300,
                               delta=1e-2)
    assert finite == 300
    assert _binomial_ok(misses, 300) > 1e-3, misses


def test_coverage_envelope_delta():
    misses, _ = _coverage(sp.Gaussian(1.0), 3, 5000, 300, eps=1.0)
    assert _binomial_ok(misses, 300) > 1e-3, misses


@pytest.mark.slow
@pytest.mark.parametrize("mech", [sp.Laplace(1.0), sp.GeneralizedGaussian(1.5, 2.0),
                                  sp.PoissonSubsampled(sp.GeneralizedGaussian(3.0, 2.0), 0.2)],
                         ids=repr)
def test_coverage_envelope_more_mechanisms(mech):
    # the analytic reference to 1e-3 in epsilon (1e-4 took 7 s for the subsampled GG(3)):
    # for that mechanism the sampled intervals are about 0.9 wide with both ends at least
    # 0.2 from the truth, so a reference 0.002 wide instead of 0.0002 hides no miss (0 of
    # 200 with either); a miss by less than 1e-3 is in any case far below these widths
    misses, finite = _coverage(mech, 4, 20000, 200, delta=1e-2, ref_eps_error=1e-3)
    assert finite == 200
    assert _binomial_ok(misses, 200) > 1e-3, misses


@pytest.mark.slow
def test_coverage_seed_method():
    """certify='seed' (GG paper Thm 6): delta(eps) brackets are always finite."""
    misses, _ = _coverage(sp.Gaussian(1.0), 1, 200000, 200, eps=1.0, certify="seed",
                          seed_params={"L": 4.0})
    assert _binomial_ok(misses, 200) > 1e-3, misses
