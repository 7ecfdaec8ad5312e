"""Generic contract of every registered mechanism family (numpyro-style).

One list -- every family of :mod:`sampledprv.mechanisms.registry` with a command-line
kind, one example spec per kind (its own example string) -- drives the same tests for
each: hooks present, exact law against the sampled histograms of the Numba, numpy and
torch samplers (chi-square at a fixed failure rate, fixed seeds), the Renyi bound
against a Monte Carlo lower confidence bound, the command-line round trip and
``supports()`` agreeing with ``compose()``.  A new family is covered by registering it;
a family that skips a hook fails here.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import sampledprv as sp
from sampledprv.cli import format_mechanism, parse_mechanism
from sampledprv.mechanisms import registry
from sampledprv.mechanisms.laws import loss_pair
from sampledprv.rdp import renyi_divergence
from sampledprv.sampled import loss_histogram

P_FAIL = 1e-4          #: failure rate of each chi-square test (fixed seeds: deterministic)
N = 100_000            #: draws per sampler test

#: families whose specs have no Renyi bound (the RDP tail bound is simply absent): a
#: family leaves this list by registering a ``renyi`` hook, and the test then says so
NO_RENYI = {"discrete_laplace", "binomial", "discrete_gaussian", "exponential",
            "finite_pair", "kary_randomized_response"}


def _cases():
    out = []
    for fam in registry.families():
        for kind in fam.cli:
            spec = parse_mechanism(kind.example).build()
            out.append(pytest.param(fam, spec, id=f"{fam.name}:{kind.name}"))
    return out


CASES = _cases()


#: families answered by an accountant of their own (no dominating pair in one dimension
#: that the generic accountants could sample): family name -> that accountant
OWN_ACCOUNTANT = {"generalized_gaussian_vector": "VectorGGAccountant",
                  "shuffled": "ShuffleAccountant"}


def _sampled(spec):
    """Families sampled in one dimension by the generic accountants (with an exact law
    to test the samplers against)."""
    return registry.family_of(spec).numba_source is not None and \
        registry.family_of(spec).name not in OWN_ACCOUNTANT


def test_every_registered_family_is_in_the_list():
    names = {c.values[0].name for c in CASES}
    for fam in registry.families():
        public = any(t.__name__ in sp.__all__ for t in fam.types)
        assert (fam.name in names) == public, fam.name


def _sampled_only(fam):
    """Families with no closed-form law: their specs sample themselves through the hooks
    of :mod:`sampledprv.sampled.draws.hooks` (the batch samplers)."""
    return bool(fam.extras.get("sampled_only"))


@pytest.mark.parametrize("fam,spec", CASES)
def test_hooks_are_present(fam, spec):
    if _sampled_only(fam):
        for hook in ("loss_sampler", "numpy_loss_sampler", "renyi"):
            assert callable(getattr(spec, hook, None)), hook
            assert callable(getattr(fam, hook)), f"{fam.name}: the record names no {hook}"
        assert fam.format is not None and fam.cli and type(spec) in fam.types
        return
    assert fam.loss_pair is not None and fam.numpy_losses is not None
    assert fam.numba_source is not None and fam.format is not None and fam.cli
    assert type(spec) in fam.types


@pytest.mark.parametrize("fam,spec", CASES)
def test_cli_string_round_trip(fam, spec):
    back = parse_mechanism(format_mechanism(spec)).build()
    assert type(back) is type(spec) and format_mechanism(back) == format_mechanism(spec)


def _laws(spec):
    under_p, under_q = loss_pair(spec)
    return {"remove": under_p, "add": under_q.negated()}


def _window(law):
    """A window over the bulk of the law, edges off every lattice (atoms off the edges)."""
    qs = np.linspace(-60, 60, 24001)
    c = law.cdf(qs)
    lo = qs[np.searchsorted(c, 1e-4)] if c[-1] > 1e-4 else -1.0
    hi = qs[min(np.searchsorted(c, 1 - 1e-4), qs.size - 1)]
    lo, hi = min(lo, hi - 1e-3), max(hi, lo + 1e-3)
    bins = 40
    h = (hi - lo) / (bins - 2)
    return lo - h * (1 + 0.1234567), h, bins


def _cell_probs(law, lo, h, bins):
    edges = lo + h * np.arange(bins + 1)
    c = law.cdf(edges)
    finite = 1.0 - law.p_pos_inf - law.p_neg_inf
    below = c[0] - law.p_neg_inf
    above = finite + law.p_neg_inf - c[-1]
    return np.concatenate([[below], np.diff(c), [above, law.p_pos_inf, law.p_neg_inf]])


def _chi2_pvalue(counts, probs):
    n = counts.sum()
    exp = n * probs
    big = exp > 10
    small_obs = counts[~big].sum()
    small_exp = exp[~big].sum()
    assert small_exp > 1 or small_obs <= 5 + 5 * small_exp, (counts, probs)
    obs, e = counts[big], exp[big]
    if obs.size < 2:
        return 1.0
    chi2 = float(((obs - e) ** 2 / e).sum())
    return float(stats.chi2.sf(chi2, obs.size - 1))


def _counts(hist):
    return np.concatenate([[hist.below], hist.counts, [hist.above, hist.pos_inf,
                                                       hist.neg_inf]])


def _numpy_counts(sample, n, lo, h, bins, seed):
    y = sample(np.random.default_rng(seed), n)
    edges = lo + h * np.arange(bins + 1)
    fin = y[np.isfinite(y)]
    inner = np.histogram(fin, edges)[0]
    return np.concatenate([[np.sum(fin < lo)], inner,
                           [np.sum(fin >= edges[-1]), np.sum(y == np.inf),
                            np.sum(y == -np.inf)]])


@pytest.mark.parametrize("direction", ["remove", "add"])
@pytest.mark.parametrize("fam,spec", CASES)
def test_samplers_follow_the_exact_law(fam, spec, direction):
    if not _sampled(spec):
        pytest.skip("sampled by its own accountant")
    law = _laws(spec)[direction]
    lo, h, bins = _window(law)
    probs = _cell_probs(law, lo, h, bins)
    hist = loss_histogram(spec, direction=direction, n=N, lo=lo, h=h, bins=bins, seed=7,
                          progress=False)
    assert _chi2_pvalue(_counts(hist), probs) > P_FAIL, "numba"
    f_p, f_q = fam.numpy_losses(spec)
    sample = f_p if direction == "remove" else (lambda r, n: -f_q(r, n))
    assert _chi2_pvalue(_numpy_counts(sample, N, lo, h, bins, 8), probs) > P_FAIL, "numpy"


@pytest.mark.parametrize("fam,spec", CASES)
def test_torch_sampler_follows_the_exact_law_or_refuses(fam, spec):
    pytest.importorskip("torch")
    from sampledprv.sampled.histograms.torch_histogram import torch_loss_histogram
    if not _sampled(spec):
        pytest.skip("sampled by its own accountant")
    law = _laws(spec)["remove"]
    lo, h, bins = _window(law)
    try:
        hist = torch_loss_histogram(spec, "remove", n=N, lo=lo, h=h, bins=bins, seed=9,
                                    device="cpu")
    except ValueError as err:
        assert "backend='numba'" in str(err)
        kind = fam.numba_source(spec)[0]
        assert kind in ("two_point", "table"), "continuous kinds must have a torch sampler"
        return
    assert _chi2_pvalue(_counts(hist), _cell_probs(law, lo, h, bins)) > P_FAIL


@pytest.mark.parametrize("fam,spec", CASES)
def test_renyi_bound_above_a_monte_carlo_lower_bound(fam, spec):
    if fam.name in OWN_ACCOUNTANT:
        pytest.skip("its bounds are tested with its own accountant")
    if _sampled_only(fam):
        # no exact law: the bound is checked against the spec's own sampler
        for direction in ("remove", "add"):
            y = spec.numpy_loss_sampler(direction)(np.random.default_rng(11), 100_000)
            m = y.astype(float)
            top = m.max()
            w = np.exp(m - top)
            mean, se = w.mean(), w.std() / math.sqrt(w.size)
            lower = top + math.log(max(mean - 5 * se, 1e-300))
            assert spec.renyi(2.0, direction) >= lower, direction
        return
    order = 2.0
    if fam.name in NO_RENYI:
        assert fam.renyi is None
        with pytest.raises(ValueError, match="no Renyi divergence bound"):
            renyi_divergence(spec, order, "remove")
        return
    f_p, f_q = fam.numpy_losses(spec)
    laws = _laws(spec)
    for direction, sample in (("remove", f_p), ("add", lambda r, n: -f_q(r, n))):
        y = sample(np.random.default_rng(11), 200_000)
        if laws[direction].p_pos_inf > 0:   # an atom at +inf: the divergence is infinite
            try:
                assert renyi_divergence(spec, order, direction) == math.inf
            except ValueError as err:
                assert "infinite" in str(err)
            continue
        bound = renyi_divergence(spec, order, direction)
        m = (order - 1) * y
        top = m.max()
        w = np.exp(m - top)
        mean, se = w.mean(), w.std() / math.sqrt(w.size)
        lower = (top + math.log(max(mean - 5 * se, 1e-300))) / (order - 1)
        assert bound >= lower, (direction, bound, lower)


@pytest.mark.parametrize("fam,spec", CASES)
def test_supports_agrees_with_compose(fam, spec):
    for make in (sp.Accountant, lambda: sp.SampledAccountant(n_samples=10_000,
                                                              progress=False)):
        acc = make()
        ok = acc.supports(spec)
        try:
            acc.compose(spec, count=2)
            composed = True
        except (TypeError, ValueError):
            composed = False
        assert ok == composed


@pytest.mark.parametrize("fam,spec", [c for c in CASES if c.values[0].name in OWN_ACCOUNTANT])
def test_generic_accountants_name_the_own_accountant(fam, spec):
    """A family answered by an accountant of its own is refused by the generic ones with a
    message that names that accountant (never accounted silently as something else)."""
    for acc in (sp.Accountant(), sp.SampledAccountant(n_samples=10_000, progress=False)):
        assert not acc.supports(spec)
        with pytest.raises((TypeError, ValueError), match=OWN_ACCOUNTANT[fam.name]):
            acc.compose(spec)
