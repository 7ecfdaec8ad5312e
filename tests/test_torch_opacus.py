"""Opacus integration: beta-norm clipping + GG noise optimizer, accountant, privacy engine."""

import math
import warnings

import numpy as np
import pytest
import scipy.stats as st

torch = pytest.importorskip("torch")
pytest.importorskip("opacus")

import sampledprv as sp  # noqa: E402
from sampledprv.torch import clip_per_sample  # noqa: E402
from sampledprv.torch.opacus_integration import (  # noqa: E402
    DEFAULT_HORIZON, GGDPOptimizer, GGPrivacyEngine, gg_accountant_class, step_mechanism,
)


def loader(n=64, batch=16, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 4, generator=g)
    y = (x[:, 0] > 0).long()
    return torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=batch)


@pytest.mark.parametrize("beta,accounting", [(1.5, "vector"), (3.0, "paper-1d")])
def test_make_private_with_epsilon_beta(beta, accounting):
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    engine = GGPrivacyEngine(beta=beta, accounting=accounting)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model, opt, dl = engine.make_private_with_epsilon(
            module=model, optimizer=opt, data_loader=loader(), target_epsilon=2.0,
            target_delta=1e-5, epochs=2, max_grad_norm=0.5)
    assert isinstance(opt, GGDPOptimizer) and opt.beta == beta
    cal = engine.calibration
    assert opt.noise_multiplier == cal.x
    assert 0.98 * 2.0 <= cal.interval.upper <= 2.0
    for _ in range(2):
        for x, y in dl:
            opt.zero_grad()
            torch.nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
    assert len(engine.accountant) == cal.count == 8
    eps = engine.get_epsilon(1e-5)
    assert eps <= 2.0
    # the history matches the calibrated mechanism (Poisson rate = 1/len(loader))
    if accounting == "vector":
        assert engine.accountant.dimension == 10
        # only ref.upper is compared, and the Renyi upper end does not depend on the
        # spreads of the PLD lower end: the one-hot spread alone is enough
        ref = (sp.VectorGGAccountant(spreads=(1,))
               .compose(step_mechanism(beta, cal.x, 0.25, 10), count=8).epsilon(delta=1e-5))
        assert "Renyi" in engine.accountant.get_epsilon_interval(1e-5).method
    else:
        ref = (sp.Accountant(horizon=DEFAULT_HORIZON)
               .compose(step_mechanism(beta, cal.x, 0.25, accounting="paper-1d"), count=8)
               .epsilon(delta=1e-5))
        assert "NOT a worst-case" in engine.accountant.get_epsilon_interval(1e-5).method
    assert eps == pytest.approx(ref.upper, rel=1e-9)


@pytest.mark.parametrize("beta", [1.0, 2.0, 3.0])
def test_optimizer_clips_in_beta_norm_and_adds_gg_noise(beta):
    torch.manual_seed(1)
    w = torch.nn.Parameter(torch.zeros(200, 100))
    b = torch.nn.Parameter(torch.zeros(100))
    c, sigma = 0.3, 0.7
    opt = GGDPOptimizer(torch.optim.SGD([w, b], lr=1.0), beta=beta, noise_multiplier=sigma,
                        max_grad_norm=c, expected_batch_size=8, loss_reduction="sum",
                        generator=torch.Generator().manual_seed(2))
    gw, gb = torch.randn(8, 200, 100), torch.randn(8, 100)
    w.grad_sample, b.grad_sample = gw.clone(), gb.clone()
    opt.clip_and_accumulate()
    clipped, _ = clip_per_sample([gw, gb], beta, c)
    torch.testing.assert_close(w.summed_grad, clipped[0].sum(0), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(b.summed_grad, clipped[1].sum(0), rtol=1e-5, atol=1e-6)
    opt.add_noise()
    noise = torch.cat([(w.grad - w.summed_grad).reshape(-1), (b.grad - b.summed_grad)]).double()
    s = math.sqrt(2) * sigma * c
    assert st.kstest(noise.numpy(), st.gennorm(beta, scale=s).cdf).pvalue > 1e-3
    if beta == 2.0:
        assert noise.std().item() == pytest.approx(sigma * c, rel=0.02)  # Opacus' Gaussian


def test_accountant_registered_with_opacus():
    from opacus.accountants import create_accountant
    from opacus.accountants.utils import get_noise_multiplier
    assert create_accountant(gg_accountant_class(1.5).mechanism()).accounting == "vector"
    cls = gg_accountant_class(1.5, "paper-1d")
    acc = create_accountant(cls.mechanism())
    assert isinstance(acc, cls) and acc.beta == 1.5 and acc.get_epsilon(1e-5) == 0.0
    for _ in range(3):
        acc.step(noise_multiplier=1.0, sample_rate=0.1)
    acc.step(noise_multiplier=2.0, sample_rate=0.1)
    assert acc.history == [(1.0, 0.1, 3), (2.0, 0.1, 1)] and len(acc) == 4
    iv = acc.get_epsilon_interval(1e-5)
    ref = (sp.Accountant(horizon=DEFAULT_HORIZON)
           .compose(step_mechanism(1.5, 1.0, 0.1, accounting="paper-1d"), count=3)
           .compose(step_mechanism(1.5, 2.0, 0.1, accounting="paper-1d"), count=1)
           .epsilon(delta=1e-5))
    assert iv.upper == pytest.approx(ref.upper)
    # Opacus' own binary search runs on our accountant too
    sigma = get_noise_multiplier(target_epsilon=2.0, target_delta=1e-5, sample_rate=0.1, steps=10,
                                 accountant=cls.mechanism(), epsilon_tolerance=0.05)
    acc2 = cls()
    acc2.history = [(sigma, 0.1, 10)]
    assert acc2.get_epsilon(1e-5) <= 2.0


def test_per_step_get_epsilon_is_online_and_certified():
    """Each get_epsilon composes only the new steps into one persistent online accountant
    (O(n) per step); the answers bracket what a fresh rebuild certifies."""
    cls = gg_accountant_class(2.0)
    acc = cls()
    for step in range(1, 41):
        acc.step(noise_multiplier=1.0, sample_rate=0.05)
        iv = acc.get_epsilon_interval(1e-5)
        assert acc.get_epsilon(1e-5) == pytest.approx(iv.upper, rel=1e-9)
        if step in (1, 17, 40):
            ref = sp.Accountant().compose(step_mechanism(2.0, 1.0, 0.05, accounting="paper-1d"),
                                          count=step)
            ref = ref.epsilon(delta=1e-5)
            assert iv.lower <= ref.upper and ref.lower <= iv.upper, (step, iv, ref)
    assert "online" in iv.method and "online updates: on" in acc._acc.describe()
    assert sum(c for _, c in acc._acc.composition) == 40
    acc.history = [(2.0, 0.05, 3)]          # any other change starts afresh
    assert acc.get_epsilon_interval(1e-5).upper < iv.upper


def test_unsupported_modes():
    with pytest.raises(ValueError, match="secure_mode"):
        GGPrivacyEngine(beta=1.5, secure_mode=True)
    with pytest.raises(ValueError, match="beta"):
        GGPrivacyEngine(beta=0.5)
    engine = GGPrivacyEngine(beta=1.5)
    with pytest.raises(ValueError, match="clipping"):
        engine._prepare_optimizer(optimizer=torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1),
                                  noise_multiplier=1.0, max_grad_norm=1.0, expected_batch_size=1,
                                  clipping="per_layer")
