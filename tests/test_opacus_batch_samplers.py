"""The Opacus accountant accounts the batch sampler the loader uses: Poisson, balls-and-bins,
k-of-T allocation, shuffled (lower end, warning) and sequential batches
(sampledprv/torch/batch_samplers.py, allocation_steps.py, fixed_batch_steps.py,
loader_steps.py, epoch_history.py)."""

from __future__ import annotations

import itertools
import math
import warnings
from collections import Counter

import numpy as np
import pytest
from scipy import stats

import sampledprv as sp

torch = pytest.importorskip("torch")
pytest.importorskip("opacus")

import sampledprv.torch  # noqa: E402,F401 - registers "sampledprv"
from opacus import PrivacyEngine  # noqa: E402
from opacus.accountants import create_accountant  # noqa: E402
from opacus.data_loader import DPDataLoader  # noqa: E402

from sampledprv.torch import BallsAndBinsBatchSampler, RandomAllocationBatchSampler  # noqa: E402
from sampledprv.torch.batch_samplers import uniform_subsets  # noqa: E402
from sampledprv.torch.epoch_history import epochs_of  # noqa: E402
from sampledprv.torch.loader_steps import sampler_kind, steps_for_loader  # noqa: E402
from sampledprv.torch.opacus_accountant import (  # noqa: E402
    AllocationSteps, DeterministicSteps, PoissonSteps, SampledPrvOpacusAccountant,
    ShuffledSteps, accountant_class)

#: small, fast sampled settings (k = 2 has no conditional statistic: cheap envelopes)
FAST = dict(n_samples=20_000, alpha=1e-3, seed=3, bins=2**11)


def _data(n=48):
    g = torch.Generator().manual_seed(0)
    return torch.utils.data.TensorDataset(torch.randn(n, 4, generator=g),
                                          torch.randint(0, 2, (n,), generator=g))


def _run(acc, sigma, q, steps):
    for _ in range(steps):
        acc.step(noise_multiplier=sigma, sample_rate=q)


# ---- the samplers ------------------------------------------------------------------------------
def test_uniform_subsets_are_uniform_and_distinct():
    sub = uniform_subsets(60_000, 5, 2, torch.Generator().manual_seed(0))
    assert sub.shape == (60_000, 2) and bool((sub[:, 0] != sub[:, 1]).all())
    counts = Counter(tuple(sorted(r)) for r in sub.tolist())
    assert set(counts) == set(itertools.combinations(range(5), 2))
    assert stats.chisquare(list(counts.values())).pvalue > 1e-4
    assert uniform_subsets(7, 4, 4).sort(dim=1).values.tolist() == [[0, 1, 2, 3]] * 7


@pytest.mark.parametrize("steps,selected", [(7, 1), (9, 3), (4, 4)])
def test_each_record_in_exactly_k_steps_of_every_epoch(steps, selected):
    s = RandomAllocationBatchSampler(200, steps, selected, seed=5)
    assert len(s) == steps
    epochs = [list(s) for _ in range(3)]
    for batches in epochs:
        assert len(batches) == steps
        assert all(b == sorted(set(b)) for b in batches)       # no record twice in a step
        assert Counter(i for b in batches for i in b) == Counter({i: selected
                                                                  for i in range(200)})
    if selected < steps:
        assert epochs[0] != epochs[1]                          # a fresh allocation each epoch
    again = RandomAllocationBatchSampler(200, steps, selected, seed=5)
    assert [list(again) for _ in range(3)] == epochs           # seeded: reproducible


def test_balls_and_bins_steps_are_uniform_and_generator_driven():
    g = torch.Generator().manual_seed(11)
    s = BallsAndBinsBatchSampler(20_000, 10, generator=g)
    sizes = [len(b) for b in s]
    assert sum(sizes) == 20_000 and s.generator is g
    assert stats.chisquare(sizes).pvalue > 1e-4
    # a record's step is uniform over the epochs too
    step_of_0 = Counter(next(t for t, b in enumerate(BallsAndBinsBatchSampler(
        3, 4, generator=g)) if 0 in b) for _ in range(4000))
    assert stats.chisquare([step_of_0[t] for t in range(4)]).pvalue > 1e-4


def test_sampler_arguments_are_checked():
    with pytest.raises(ValueError, match="selected"):
        RandomAllocationBatchSampler(10, 3, 4)
    with pytest.raises(ValueError, match="n_records"):
        BallsAndBinsBatchSampler(0, 3)
    with pytest.raises(ValueError, match="generator"):
        BallsAndBinsBatchSampler(10, 3, generator=np.random.default_rng(0))


def test_loader_with_the_sampler_yields_every_record_once_per_epoch():
    ds = _data(30)
    loader = torch.utils.data.DataLoader(ds, batch_sampler=BallsAndBinsBatchSampler(30, 5))
    seen = torch.cat([x for x, _ in loader])
    assert len(loader) == 5 and seen.shape == (30, 4)
    assert sorted(map(tuple, seen.tolist())) == sorted(map(tuple, ds.tensors[0].tolist()))


# ---- epochs of a history -------------------------------------------------------------------------
def test_epochs_of_a_history():
    ep = epochs_of([(1.0, 0.25, 6), (1.0, 0.25, 2), (2.0, 0.25, 5)], 4)
    assert ep.full == ((1.0, 2), (2.0, 1)) and ep.partial == (2.0, 1) and ep.steps == 13
    assert epochs_of([(1.0, 0.25, 8)], 4).partial is None
    with pytest.raises(ValueError, match="sample_rate"):
        epochs_of([(1.0, 0.1, 8)], 4)
    with pytest.raises(ValueError, match="inside an epoch"):
        epochs_of([(1.0, 0.25, 3), (2.0, 0.25, 1)], 4)


# ---- detection ------------------------------------------------------------------------------------
def test_detection_of_each_loader_kind():
    ds = _data(48)
    dl = torch.utils.data.DataLoader
    poisson = DPDataLoader.from_data_loader(dl(ds, batch_size=8))
    bnb = dl(ds, batch_sampler=BallsAndBinsBatchSampler(48, 6))
    kot = dl(ds, batch_sampler=RandomAllocationBatchSampler(48, 6, 2))
    assert sampler_kind(poisson) == "poisson"
    assert steps_for_loader(poisson) == PoissonSteps()
    assert steps_for_loader(bnb, n_samples=1000) == AllocationSteps(6, 1, n_samples=1000)
    assert steps_for_loader(kot).selected == 2
    assert steps_for_loader(dl(ds, batch_size=8, shuffle=True)) == ShuffledSteps(6)
    assert steps_for_loader(dl(ds, batch_size=10, shuffle=True)) == ShuffledSteps(5)
    assert steps_for_loader(dl(ds, batch_size=8)) == DeterministicSteps(6)


@pytest.mark.parametrize("make,match", [
    (lambda ds: torch.utils.data.DataLoader(ds, batch_size=8, sampler=torch.utils.data.
                                            WeightedRandomSampler([1.0] * 48, 48)),
     "WeightedRandomSampler"),
    (lambda ds: torch.utils.data.DataLoader(ds, batch_size=8, sampler=torch.utils.data.
                                            RandomSampler(ds, replacement=True)),
     "replacement"),
    (lambda ds: torch.utils.data.DataLoader(ds, batch_size=10, shuffle=True, drop_last=True),
     "drop_last"),
    (lambda ds: torch.utils.data.DataLoader(ds, batch_size=None), "batch_size"),
    (lambda ds: torch.utils.data.DataLoader(ds, batch_sampler=[[0, 1], [2, 3]]),
     "unknown batch sampler list"),
    (lambda ds: [ds], "DataLoader"),
])
def test_unknown_loaders_are_refused_by_name(make, match):
    with pytest.raises(ValueError, match=match):
        steps_for_loader(make(_data(48)))


def test_generalized_gaussian_only_where_the_spec_covers_it():
    ds = _data(48)
    bnb = torch.utils.data.DataLoader(ds, batch_sampler=BallsAndBinsBatchSampler(48, 6))
    assert steps_for_loader(bnb, beta=1.5, dimension=1).spec(1.0).step == \
        sp.GeneralizedGaussian(1.5, math.sqrt(2.0))
    with pytest.raises(ValueError, match="dimension=1"):
        steps_for_loader(bnb, beta=1.5, dimension=100)
    with pytest.raises(ValueError, match="Gaussian noise only"):
        steps_for_loader(torch.utils.data.DataLoader(ds, batch_size=8), beta=1.5)
    pois = DPDataLoader.from_data_loader(torch.utils.data.DataLoader(ds, batch_size=8))
    assert steps_for_loader(pois, beta=1.5, dimension=3) == PoissonSteps(1.5, 3)


# ---- the accountant's intervals --------------------------------------------------------------------
def test_allocation_interval_is_the_sampled_accountants_on_the_same_composition():
    """Whole epochs: the interval of SampledAccountant(...).compose(spec, E) with the same
    settings and seed; a partial epoch: [lower of the completed epochs, upper of the
    epochs begun]; before any epoch ends the lower end is 0."""
    model = AllocationSteps(6, 2, **FAST)
    acc = SampledPrvOpacusAccountant(steps=model)
    spec = sp.RandomAllocation(0.9, 6, 2)

    def direct(epochs):
        return sp.SampledAccountant(FAST["n_samples"], alpha=FAST["alpha"], seed=FAST["seed"],
                                    bins=FAST["bins"]).compose(spec, count=epochs).epsilon(1e-5)
    _run(acc, 0.9, 1 / 6, 4)
    first = acc.get_epsilon_interval(1e-5)
    one, two, three = direct(1), direct(2), direct(3)
    assert (first.lower, first.upper) == (0.0, one.upper)
    assert "partial epoch (4 of 6 steps after 0 completed" in first.method
    _run(acc, 0.9, 1 / 6, 8)                                     # 12 steps: 2 epochs
    whole = acc.get_epsilon_interval(1e-5)
    assert (whole.lower, whole.estimate, whole.upper) == (two.lower, two.estimate, two.upper)
    _run(acc, 0.9, 1 / 6, 1)                                     # 13 steps
    part = acc.get_epsilon_interval(1e-5)
    assert (part.lower, part.upper) == (two.lower, three.upper)
    assert part.lower <= part.estimate <= part.upper and part.confidence == 1 - FAST["alpha"]
    assert acc.get_epsilon(1e-5) == part.upper
    # noise changed at an epoch boundary: two specs, the ends on different histograms
    acc2 = SampledPrvOpacusAccountant(steps=model)
    _run(acc2, 0.9, 1 / 6, 6)
    _run(acc2, 1.2, 1 / 6, 2)
    iv2 = acc2.get_epsilon_interval(1e-5)
    assert iv2.lower == one.lower and iv2.confidence == 1 - 2 * FAST["alpha"]
    mixed = sp.SampledAccountant(FAST["n_samples"], alpha=FAST["alpha"], seed=FAST["seed"],
                                 bins=FAST["bins"]).compose(spec).compose(
        sp.RandomAllocation(1.2, 6, 2)).epsilon(1e-5)
    assert iv2.upper == mixed.upper


def test_allocation_history_set_wholesale_and_smaller_again():
    model = AllocationSteps(6, 2, **FAST)
    acc = SampledPrvOpacusAccountant(steps=model)
    acc.history = [(0.9, 1 / 6, 18)]
    three = acc.get_epsilon_interval(1e-5)
    acc.history = [(0.9, 1 / 6, 6)]                               # fewer epochs: recomposed
    one = acc.get_epsilon_interval(1e-5)
    assert one.upper < three.upper
    direct = sp.SampledAccountant(FAST["n_samples"], alpha=FAST["alpha"], seed=FAST["seed"],
                                  bins=FAST["bins"]).compose(sp.RandomAllocation(0.9, 6, 2))
    assert one.upper == direct.epsilon(1e-5).upper


def test_shuffled_loader_reports_the_lower_end_with_a_warning():
    ds = _data(48)
    loader = torch.utils.data.DataLoader(ds, batch_size=8, shuffle=True)
    acc = SampledPrvOpacusAccountant.for_loader(loader)
    assert acc.steps == ShuffledSteps(6)
    _run(acc, 1.0, 1 / 6, 12)
    with pytest.warns(UserWarning, match="no known tight upper bound") as rec:
        iv = acc.get_epsilon_interval(1e-5)
    ref = sp.ShuffleAccountant().compose(sp.Shuffled(1.0, 6), count=2).epsilon(1e-5)
    assert (iv.lower, iv.upper) == (ref.lower, ref.upper)
    assert f"{ref.lower:.4g}" in str(rec[0].message)
    assert iv.upper == sp.Accountant().compose(sp.Gaussian(1.0), 2).epsilon(1e-5).upper
    assert rec[0].filename == __file__                           # the user's line
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert acc.get_epsilon(1e-5) == iv.upper                  # warned once
    _run(acc, 1.0, 1 / 6, 3)                                       # a partial epoch
    part = acc.get_epsilon_interval(1e-5)
    three = sp.ShuffleAccountant().compose(sp.Shuffled(1.0, 6), count=3).epsilon(1e-5)
    assert (part.lower, part.upper) == (ref.lower, three.upper)
    none = SampledPrvOpacusAccountant.for_loader(loader, shuffle_upper="none")
    _run(none, 1.0, 1 / 6, 6)
    with pytest.warns(UserWarning):
        assert none.get_epsilon(1e-5) == math.inf


def test_sequential_loader_is_one_gaussian_per_epoch_begun():
    loader = torch.utils.data.DataLoader(_data(48), batch_size=8)
    acc = SampledPrvOpacusAccountant.for_loader(loader)
    _run(acc, 2.0, 1 / 6, 13)                                       # 2 epochs and 1 step
    iv = acc.get_epsilon_interval(1e-5)
    ref = sp.Accountant().compose(sp.Gaussian(2.0), 3).epsilon(1e-5)
    assert iv.lower <= ref.estimate <= iv.upper and abs(iv.upper - ref.upper) < 1e-9


# ---- Opacus ---------------------------------------------------------------------------------------
def test_for_loader_registers_a_class_that_opacus_creates_by_name():
    loader = torch.utils.data.DataLoader(_data(48), batch_sampler=BallsAndBinsBatchSampler(48, 6))
    acc = SampledPrvOpacusAccountant.for_loader(loader, **{k: FAST[k] for k in
                                                           ("n_samples", "alpha", "seed")})
    made = create_accountant(acc.mechanism())
    assert type(made) is type(acc) and made.steps == acc.steps
    assert acc.mechanism().startswith("sampledprv:AllocationSteps(")
    assert accountant_class(acc.steps) is type(acc)
    assert create_accountant("sampledprv").steps == PoissonSteps()
    with pytest.raises(ValueError, match="step model"):
        accountant_class(object())
    with pytest.raises(ValueError, match="beta and dimension"):
        type(acc)(beta=1.5)


def test_use_loader_catches_a_sampler_opacus_replaced():
    ds = _data(48)
    bnb = torch.utils.data.DataLoader(ds, batch_sampler=BallsAndBinsBatchSampler(48, 6))
    acc = SampledPrvOpacusAccountant.for_loader(bnb)
    assert acc.use_loader(bnb) is acc
    with pytest.raises(ValueError, match="poisson_sampling=False"):
        acc.use_loader(DPDataLoader.from_data_loader(bnb))
    plain = SampledPrvOpacusAccountant()
    _run(plain, 1.0, 1 / 6, 2)
    with pytest.raises(ValueError, match="before training"):
        plain.use_loader(bnb)


def test_opacus_training_run_with_a_balls_and_bins_loader():
    """make_private(..., poisson_sampling=False) keeps our loader; the accountant detects
    it and its interval equals the sampled accountant's on the same epochs."""
    torch.manual_seed(0)
    ds = _data(64)
    loader = torch.utils.data.DataLoader(ds, batch_sampler=BallsAndBinsBatchSampler(
        64, 4, generator=torch.Generator().manual_seed(1)))
    model = torch.nn.Linear(4, 2)
    engine = PrivacyEngine(accountant="sampledprv")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model, opt, loader2 = engine.make_private(
            module=model, optimizer=torch.optim.SGD(model.parameters(), lr=0.1),
            data_loader=loader, noise_multiplier=1.5, max_grad_norm=1.0,
            poisson_sampling=False)
    assert loader2.batch_sampler is loader.batch_sampler
    settings = dict(n_samples=20_000, alpha=1e-3, seed=2, bins=2**11)
    engine.accountant.use_loader(loader2, **settings)
    assert engine.accountant.steps == AllocationSteps(4, 1, **settings)
    for _ in range(2):
        for x, y in loader2:
            opt.zero_grad()
            torch.nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
    assert engine.accountant.history == [(1.5, 0.25, 8)]
    iv = engine.accountant.get_epsilon_interval(1e-5)
    direct = sp.SampledAccountant(20_000, alpha=1e-3, seed=2, bins=2**11).compose(
        sp.BallsAndBins(1.5, 4), count=2).epsilon(1e-5)
    assert (iv.lower, iv.estimate, iv.upper) == (direct.lower, direct.estimate, direct.upper)
    assert engine.get_epsilon(1e-5) == direct.upper
    poisson = sp.Accountant().compose(sp.PoissonSubsampled(sp.Gaussian(1.5), 0.25), 8)
    assert iv.upper < poisson.epsilon(1e-5).upper      # amplification beats Poisson here


def test_make_private_with_epsilon_calibrates_with_the_loaders_sampler():
    """Opacus' bisection runs on the accountant class for_loader registered: the noise it
    returns has a certified k-of-T upper end within the target."""
    ds = _data(48)
    loader = torch.utils.data.DataLoader(ds, batch_sampler=RandomAllocationBatchSampler(
        48, 6, 2, seed=0))
    model = torch.nn.Linear(4, 2)
    engine = PrivacyEngine(accountant="sampledprv")
    engine.accountant = SampledPrvOpacusAccountant.for_loader(
        loader, n_samples=20_000, alpha=1e-3, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model, opt, loader2 = engine.make_private_with_epsilon(
            module=model, optimizer=torch.optim.SGD(model.parameters(), lr=0.1),
            data_loader=loader, target_epsilon=4.0, target_delta=1e-5, epochs=2,
            max_grad_norm=1.0, poisson_sampling=False)
    engine.accountant.use_loader(loader2)
    sigma = opt.noise_multiplier
    up = sp.SampledAccountant(20_000, alpha=1e-3, seed=1, bins=2**15).compose(
        sp.RandomAllocation(sigma, 6, 2), count=2).epsilon(1e-5).upper
    assert up <= 4.0
    engine.accountant.history = [(sigma, 1 / 6, 12)]
    assert engine.get_epsilon(1e-5) == up
