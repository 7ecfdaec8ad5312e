"""Neighbouring relations, checked against brute force and against dp-accounting.

The brute-force oracle: a tiny dataset (5 records with values in {-1, 0, 1}, so that a
substitution can move the sum by 2), a sum query with integer noise, every subset
enumerated with its exact subsampling probability, the exact output laws on every
neighbouring pair of datasets under each relation, and the exact hockey-stick
divergence of the k-fold product (k = 1, 2, 3) in both directions.  The accountant's
upper bound must be at least the maximum over all pairs, and its lower bound at most it
(the worst pair is attained on these datasets).  Every pair is checked at every k: a
pair that is worst for one release need not be worst under composition.  For fixed-size
batches under substitution the upper end comes from the symmetric dominating pair and
the lower end from the attained member pair (``u = 2C, v = 0``), so the upper end has
more slack there.
"""

from __future__ import annotations

import itertools
import math
from functools import lru_cache

import numpy as np
import pytest

import sampledprv as sp
from discrete_oracles import log_binom_pmf

N_RECORDS, BATCH = 5, 2
VALUES = (-1, 0, 1)
EPS = (0.0, 0.3, 1.0, 2.0)
Q_RATE = 0.3
# noise windows: the mass left out (< 1e-15) is far below the 1e-12 tolerance
NOISES = {
    "binomial": (sp.Binomial(6, 0.5), lambda: (0, log_binom_pmf(6, 0.5))),
    "discrete-laplace": (sp.DiscreteLaplace(0.7), lambda: _window(lambda x: -np.abs(x) / 0.7, 25)),
    "discrete-gaussian": (sp.DiscreteGaussian(1.0), lambda: _window(lambda x: -x * x / 2.0, 9)),
}


def _window(logw, half):
    x = np.arange(-half, half + 1, dtype=np.float64)
    w = logw(x)
    return -half, w - np.logaddexp.reduce(w)


def _output_law(data, noise, sampling):
    """Log-pmf (offset, array) of sum(subsample) + noise, every subset enumerated."""
    n = len(data)
    off, lnoise = noise
    sums = {}
    for r in range(n + 1):
        for subset in itertools.combinations(range(n), r):
            if sampling == "poisson":
                prob = Q_RATE ** r * (1 - Q_RATE) ** (n - r)
            elif r == BATCH:
                prob = 1.0 / math.comb(n, BATCH)
            else:
                continue
            s = sum(data[i] for i in subset)
            sums[s] = sums.get(s, 0.0) + prob
    lo = min(sums)
    mix = np.zeros(max(sums) - lo + 1)
    for s, p in sums.items():
        mix[s - lo] += p
    law = np.convolve(mix, np.exp(lnoise))
    with np.errstate(divide="ignore"):
        return lo + off, np.log(law)


def _align(a, b):
    (oa, la), (ob, lb) = a, b
    lo, hi = min(oa, ob), max(oa + la.size, ob + lb.size)
    pa, pb = np.full(hi - lo, -np.inf), np.full(hi - lo, -np.inf)
    pa[oa - lo: oa - lo + la.size] = la
    pb[ob - lo: ob - lo + lb.size] = lb
    return pa, pb


def _pld(lp, lq):
    keep = np.isfinite(lp) | np.isfinite(lq)
    lp, lq = lp[keep], lq[keep]
    with np.errstate(invalid="ignore"):
        loss = np.where(np.isneginf(lq), np.inf, lp - lq)
    return loss, lp


def _merge(loss, logm):
    """Atoms with equal loss (to 1e-12) merged: exact, and keeps k-fold sums small."""
    key = np.round(loss, 12)
    vals, inv = np.unique(key, return_inverse=True)
    m = np.bincount(inv, weights=np.exp(logm), minlength=vals.size)
    with np.errstate(divide="ignore"):
        return vals, np.log(m)


def _kfold_delta(lp, lq, k, eps):
    """max over both directions of E[(1 - e^{eps - L_k})_+], L_k the k-fold loss sum."""
    out = []
    for a, b in ((lp, lq), (lq, lp)):
        loss, lm = _pld(a, b)
        fin = np.isfinite(lm)
        loss, lm = _merge(loss[fin], lm[fin])
        tot_l, tot_m = loss.copy(), lm.copy()
        for _ in range(k - 1):
            tot_l = (tot_l[:, None] + loss[None, :]).ravel()
            tot_m = (tot_m[:, None] + lm[None, :]).ravel()
        vals = []
        for e in eps:
            pos = tot_l > e
            vals.append(math.fsum((np.exp(tot_m[pos]) *
                                   -np.expm1(np.minimum(e - tot_l[pos], 0.0))).tolist()))
        out.append(vals)
    return np.maximum(out[0], out[1])


def _neighbours(relation):
    """Every neighbouring pair of datasets (multisets: the laws ignore record order)."""
    if relation == "add_remove":
        for rest in itertools.combinations_with_replacement(VALUES, N_RECORDS - 1):
            for x in VALUES:
                yield rest + (x,), rest
    else:   # (x, y) and (y, x) swap P and Q: both directions are checked anyway
        for rest in itertools.combinations_with_replacement(VALUES, N_RECORDS - 1):
            for x, y in itertools.combinations(VALUES, 2):
                yield rest + (x,), rest + (y,)


@lru_cache(maxsize=None)
def _worst(noise_name, relation, sampling, k):
    noise = NOISES[noise_name][1]()
    best = np.zeros(len(EPS))
    for d1, d2 in _neighbours(relation):
        lp, lq = _align(_output_law(d1, noise, sampling), _output_law(d2, noise, sampling))
        best = np.maximum(best, _kfold_delta(lp, lq, k, EPS))
    return best


CASES = [("poisson", "add_remove"), ("poisson", "substitute"), ("fixed", "substitute")]


@pytest.mark.parametrize("noise_name", sorted(NOISES))
@pytest.mark.parametrize("sampling, relation", CASES)
def test_brute_force_relation_oracle(noise_name, sampling, relation):
    base = NOISES[noise_name][0]
    spec = sp.PoissonSubsampled(base, Q_RATE) if sampling == "poisson" else \
        sp.FixedSizeSubsampled(base, BATCH, N_RECORDS)
    for k in (1, 2, 3):
        truth = _worst(noise_name, relation, sampling, k)
        acc = sp.Accountant(eps_error=0.01, delta_error=1e-12, neighbouring=relation)
        acc.compose(spec, k)
        for e, t in zip(EPS, truth):
            iv = acc.delta(e)
            assert iv.lower <= t + 1e-12 and t <= iv.upper + 1e-12, (k, e, iv, t)


@pytest.mark.parametrize("sampling, relation", CASES)
def test_brute_force_relation_oracle_sampled(sampling, relation):
    """The same oracle for the sampled accountant (discrete Gaussian noise; fixed-size
    batches under substitution through its two inner accountants): its certified
    bracket holds every dataset pair's exact k-fold delta, k = 1, 2, 3."""
    import warnings
    base = NOISES["discrete-gaussian"][0]
    spec = sp.PoissonSubsampled(base, Q_RATE) if sampling == "poisson" else \
        sp.FixedSizeSubsampled(base, BATCH, N_RECORDS)
    for k in (1, 2, 3):
        truth = _worst("discrete-gaussian", relation, sampling, k)
        acc = sp.SampledAccountant(200_000, alpha=1e-6, seed=k, neighbouring=relation)
        acc.compose(spec, k)
        for e, t in zip(EPS, truth):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                iv = acc.delta(e)
            assert iv.lower <= t + 1e-12 and t <= iv.upper + 1e-12, (k, e, iv, t)


def test_dp_accounting_replace_one_numbers():
    """dp-accounting's REPLACE_ONE: GaussianDpEvent(1.0) epsilon(1e-5) = 9.9973
    (4.3772 under add/remove); Poisson q = 0.01, k = 100: 0.8951 (0.7180)."""
    cases = [(sp.Gaussian(1.0), 1, "substitute", 9.9973), (sp.Gaussian(1.0), 1, "add_remove", 4.3772),
             (sp.PoissonSubsampled(sp.Gaussian(1.0), 0.01), 100, "substitute", 0.8951),
             (sp.PoissonSubsampled(sp.Gaussian(1.0), 0.01), 100, "add_remove", 0.7180)]
    for spec, k, rel, peer in cases:
        iv = sp.Accountant(eps_error=0.01, neighbouring=rel).compose(spec, k).epsilon(1e-5)
        assert iv.lower <= peer <= iv.upper and abs(iv.estimate - peer) < 1e-3, (spec, iv, peer)


def test_fixed_size_below_dp_accounting_rdp():
    """dp-accounting's RDP accountant (sampling without replacement, replace-one) is an
    upper bound: our certified lower bound must lie below it.

    Its RDP accountant takes a Gaussian's noise multiplier relative to the *replacement*
    sensitivity (``GaussianDpEvent(1.0)`` has the same RDP under REPLACE_ONE as under
    add/remove, unlike its PLD accountant, which doubles it), so the same event here is
    a per-record sensitivity of 1/2."""
    from dp_accounting import dp_event
    from dp_accounting.rdp import rdp_privacy_accountant as rdp
    n, b, sigma, k = 1000, 10, 1.0, 50
    ev = dp_event.SelfComposedDpEvent(dp_event.SampledWithoutReplacementDpEvent(
        n, b, dp_event.GaussianDpEvent(sigma)), k)
    orders = [1.5, 2, 3, 4, 6, 8, 12, 16, 24, 32, 64]      # any orders give an upper bound
    peer = rdp.RdpAccountant(orders, rdp.NeighborRel.REPLACE_ONE).compose(ev)
    single = rdp.RdpAccountant(orders, rdp.NeighborRel.REPLACE_ONE).compose(
        dp_event.GaussianDpEvent(sigma)).get_epsilon(1e-5)
    single_ar = rdp.RdpAccountant(orders).compose(dp_event.GaussianDpEvent(sigma)).get_epsilon(1e-5)
    assert single == single_ar                     # the peer's convention, checked
    iv = sp.Accountant(eps_error=0.02, neighbouring="substitute").compose(
        sp.FixedSizeSubsampled(sp.Gaussian(sigma, 0.5), b, n), k).epsilon(1e-5)
    assert iv.lower <= peer.get_epsilon(1e-5)


def test_relations_a_spec_cannot_certify_name_both():
    cases = [
        (sp.FixedSizeSubsampled(sp.Gaussian(1.0), 10, 100), "add_remove"),
        (sp.PoissonSubsampled(sp.RandomizedResponse(0.8), 0.1), "substitute"),
        (sp.PoissonSubsampled(sp.Laplace(1.0), 0.1), "substitute"),
        (sp.GGNMax(2.0, 3.0), "substitute"),
        (sp.FixedSizeSubsampled(sp.PureDP(1.0), 10, 100), "substitute"),
    ]
    for spec, rel in cases:
        for acc in (sp.Accountant(neighbouring=rel), sp.SampledAccountant(10**4, neighbouring=rel)):
            with pytest.raises(ValueError, match=rel) as info:
                acc.compose(spec)
            assert type(spec).__name__ in str(info.value)
            assert not acc.supports(spec)


def test_substitution_doubles_the_sensitivity():
    for base, doubled in ((sp.Gaussian(2.0), sp.Gaussian(2.0, 2.0)),
                          (sp.DiscreteLaplace(3.0), sp.DiscreteLaplace(3.0, 2)),
                          (sp.Binomial(50, 0.5), sp.Binomial(50, 0.5, 2))):
        a = sp.Accountant(neighbouring="substitute").compose(base, 3).delta(0.5)
        b = sp.Accountant().compose(doubled, 3).delta(0.5)
        assert (a.lower, a.upper) == (b.lower, b.upper)


def test_sampled_accountant_under_substitution_brackets_the_analytic_one():
    spec = sp.PoissonSubsampled(sp.DiscreteGaussian(2.0), 0.2)
    exact = sp.Accountant(neighbouring="substitute").compose(spec, 5).delta(0.5)
    s = sp.SampledAccountant(200_000, alpha=1e-6, seed=1, neighbouring="substitute")
    iv = s.compose(spec, 5).delta(0.5)
    assert iv.lower <= exact.upper and exact.lower <= iv.upper


@pytest.mark.parametrize("others", [(1, -1), (0, 0), (-1, -1)])
def test_fixed_size_dataset_pairs_below_the_member_bound_at_k_50(others):
    """Fixed-size batches (b = 1 of n = 3) under substitution, the changed record +1 -> -1:
    the exact pair of each dataset pair, composed 50 times, stays below the accountant's
    bound (the 2C member; design notes).  Others (-1, -1) *is* the member (attained);
    others of both signs mix the two orientations of the member family."""
    sigma, n, k = 1.0, 3, 50
    xs = np.arange(-40, 41)
    w = np.exp(-xs ** 2 / (2 * sigma ** 2))
    w /= w.sum()

    def shifted(s):
        out = np.zeros(xs.size)
        out[max(s, 0): xs.size + min(s, 0)] = w[max(-s, 0): xs.size - max(s, 0)]
        return out

    p = sum(shifted(r) for r in (1,) + others) / n
    q = sum(shifted(r) for r in (-1,) + others) / n
    true = sp.Accountant(eps_error=0.01, delta_error=1e-12).compose(
        sp.FinitePair(tuple(p / p.sum()), tuple(q / q.sum())), k)
    bound = sp.Accountant(eps_error=0.01, delta_error=1e-12, neighbouring="substitute").compose(
        sp.FixedSizeSubsampled(sp.DiscreteGaussian(sigma), 1, n), k)
    for delta in (1e-3, 1e-6):
        assert true.epsilon(delta).lower <= bound.epsilon(delta).upper
    if others == (-1, -1):      # attained: the two intervals overlap
        assert true.epsilon(1e-6).upper >= bound.epsilon(1e-6).lower


def _ends_by_hand(base, doubled, b, n, k, query, x):
    """The two ends computed from the two pairs directly, under add/remove."""
    from sampledprv.mechanisms.substitution import SymmetricDominatingPair
    member = sp.PoissonSubsampled(doubled, b / n)
    up = getattr(sp.Accountant(eps_error=0.01, delta_error=1e-12).compose(
        SymmetricDominatingPair(member), k), query)(x)
    low = getattr(sp.Accountant(eps_error=0.01, delta_error=1e-12).compose(member, k),
                  query)(x)
    return up, low


@pytest.mark.parametrize("base, doubled", [(sp.DiscreteGaussian(2.0), sp.DiscreteGaussian(2.0, 2)),
                                           (sp.Gaussian(2.0), sp.Gaussian(2.0, 2.0))])
def test_fixed_size_ends_come_from_the_two_pairs(base, doubled):
    """Upper end = the symmetric dominating pair's upper, lower end = the attained member
    pair's lower (both composed under add/remove by hand); the method names both."""
    b, n, k = 1, 20, 30
    acc = sp.Accountant(eps_error=0.01, delta_error=1e-12, neighbouring="substitute").compose(
        sp.FixedSizeSubsampled(base, b, n), k)
    for query, x in (("epsilon", 1e-5), ("delta", 1.0)):
        iv = getattr(acc, query)(x)
        up, low = _ends_by_hand(base, doubled, b, n, k, query, x)
        assert iv.upper == up.upper and iv.lower == low.lower, (query, iv, up, low)
        assert iv.lower <= iv.estimate <= iv.upper
        assert up.lower > low.upper    # the dominating pair is strictly above the member
        assert "symmetric dominating pair" in iv.method and "attained" in iv.method
    assert "symmetric dominating pair" in acc.describe()


def test_symmetric_dominating_pair_profile():
    """The pair S: a law of total mass 1 with a non-negative atom at 0, symmetric, whose
    profile at epsilon >= 0 is the member's remove profile, at least the add profile."""
    from sampledprv.mechanisms.substitution import SymmetricDominatingPair
    from sampledprv.mechanisms.relations import loss_pair
    member = sp.PoissonSubsampled(sp.DiscreteLaplace(0.7, 2), 0.4)
    s = SymmetricDominatingPair(member)
    assert s.symmetric
    law, mirror = loss_pair(s)
    total = law.finite_mass + law.p_pos_inf + law.p_neg_inf
    assert abs(total - 1.0) < 1e-12 and law.atom_masses[law.atom_values == 0].sum() > 0
    # the second law is that of the same loss under Q: E_Q[e^L] = P(L > -inf)
    assert abs(float(np.sum(mirror.atom_masses * np.exp(mirror.atom_values)))
               + law.p_neg_inf - 1.0) < 1e-12
    p_m, q_m = loss_pair(member)
    assert law.cont_mass == 0 and p_m.cont_mass == 0    # integer noise: atoms only

    def curve(d, e):      # E[(1 - e^(e - L))_+] of an atomic law
        return float(np.sum(d.atom_masses * np.maximum(0.0, -np.expm1(e - d.atom_values)))
                     + d.p_pos_inf)
    for e in (0.0, 0.3, 0.5, 1.5, 2.5):
        assert abs(curve(law, e) - curve(p_m, e)) < 1e-14            # remove profile
        assert curve(q_m.negated(), e) <= curve(law, e) + 1e-14       # above the add one


def test_symmetric_dominating_pair_sampler_matches_its_law():
    """The pair's numpy sampler (registry contract) draws its analytic law."""
    from sampledprv.mechanisms.registry import family_of
    from sampledprv.mechanisms.substitution import SymmetricDominatingPair
    from sampledprv.mechanisms.relations import loss_pair
    s = SymmetricDominatingPair(sp.PoissonSubsampled(sp.DiscreteLaplace(0.7, 2), 0.4))
    law = loss_pair(s)[0]
    draw_p, draw_q = family_of(s).numpy_losses(s)
    x = draw_p(np.random.default_rng(3), 200_000)
    values = np.unique(law.atom_values)
    masses = [float(law.atom_masses[np.abs(law.atom_values - v) < 1e-9].sum()) for v in values]
    assert values.size >= 3 and abs(sum(masses) - 1.0) < 1e-12
    for v, m in zip(values, masses):
        freq = float(np.mean(np.abs(x - v) < 1e-9))
        assert abs(freq - m) < 5 * math.sqrt(m * (1 - m) / x.size) + 1e-9, (v, m, freq)
    assert np.allclose(np.sort(-draw_q(np.random.default_rng(3), 1000)),
                       np.sort(draw_p(np.random.default_rng(3), 1000)))


def test_fixed_size_substitution_refusals():
    """Asymmetric noise is refused under fixed-size substitution (no dominating pair; the
    sampled accountant's support is tested in test_fixed_size_sampled.py)."""
    with pytest.raises(ValueError, match="symmetric noise"):
        sp.Accountant(neighbouring="substitute").compose(
            sp.FixedSizeSubsampled(sp.Binomial(20, 0.3), 1, 20), 3)


def test_symmetric_pair_is_dong_roth_su_subsampled_tradeoff():
    """The upper end of fixed-size batches rests on Dong, Roth and Su's subsampling
    theorem: the batch is C_gamma(f)-DP with C_gamma(f) = min(f_gamma, f_gamma^-1)**,
    f_gamma = T(Q*, P*).  The profile of that trade-off function, computed here from
    Neyman-Pearson tests on the member's atoms (delta(e) = 1 - inf_x (e^e x + g(x)), the
    same for g and its convex hull), must be the profile of the pair S at every real
    epsilon, negative ones (alpha < 1) included."""
    from sampledprv.mechanisms.substitution import SymmetricDominatingPair
    from sampledprv.mechanisms.relations import loss_pair
    for member in (sp.PoissonSubsampled(sp.DiscreteLaplace(0.7, 2), 0.4),
                   sp.PoissonSubsampled(sp.DiscreteGaussian(1.5, 2), 0.05)):
        law = loss_pair(SymmetricDominatingPair(member))[0]
        p_m, _ = loss_pair(member)
        assert p_m.cont_mass == 0 and p_m.p_neg_inf == 0
        l, m = p_m.atom_values, p_m.atom_masses           # loss atoms, masses under P*
        qm = m * np.exp(-l)                               # masses under Q*

        def tradeoff_points(order, type1, power):
            """Breakpoints (x, T(x)) of the most powerful tests that reject in ``order``."""
            x = np.concatenate([[0.0], np.cumsum(type1[order])])
            y = 1.0 - np.concatenate([[0.0], np.cumsum(power[order])])
            return x, y
        f_q_p = tradeoff_points(np.argsort(-l), qm, m)      # T(Q*, P*) = f_gamma
        f_p_q = tradeoff_points(np.argsort(l), m, qm)       # T(P*, Q*) = f_gamma^-1
        f_q_p = (f_q_p[0], f_q_p[1] - p_m.p_pos_inf)        # P* mass at +inf: free power

        def profile(points, e):
            x, y = points
            return 1.0 - float(np.min(np.exp(e) * x + np.maximum(y, 0.0)))

        def curve(d, e):
            return float(np.sum(d.atom_masses * np.maximum(0.0, -np.expm1(e - d.atom_values)))
                         + d.p_pos_inf)
        for e in (-2.0, -0.7, -0.2, 0.0, 0.2, 0.7, 2.0):
            c_gamma = max(profile(f_q_p, e), profile(f_p_q, e))
            assert abs(curve(law, e) - c_gamma) < 1e-12, (member, e, curve(law, e), c_gamma)
