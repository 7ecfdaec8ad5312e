"""PrivacyEngine(accountant="sampledprv") (issue 27)."""

from __future__ import annotations

import subprocess
import sys
import time
import warnings

import numpy as np
import pytest

import sampledprv as sp

torch = pytest.importorskip("torch")
pytest.importorskip("opacus")
datasets = pytest.importorskip("sklearn.datasets")

import sampledprv.torch  # noqa: E402,F401 - registers "sampledprv"
from opacus import PrivacyEngine  # noqa: E402
from opacus.accountants import create_accountant  # noqa: E402

from sampledprv.torch.opacus_accountant import PoissonSteps, SampledPrvOpacusAccountant  # noqa: E402


def _digits_loader(batch_size=128):
    x, y = datasets.load_digits(return_X_y=True)
    ds = torch.utils.data.TensorDataset(torch.tensor(x / 16.0, dtype=torch.float32),
                                        torch.tensor(y))
    return torch.utils.data.DataLoader(ds, batch_size=batch_size)


def _train(engine, loader, model, opt, epochs, query=None):
    times = []
    for _ in range(epochs):
        for xb, yb in loader:
            opt.zero_grad()
            torch.nn.functional.cross_entropy(model(xb), yb).backward()
            opt.step()
            if query is not None:
                t = time.perf_counter()
                engine.get_epsilon(query)
                times.append(time.perf_counter() - t)
    return times


def test_registered_and_created_by_name():
    acc = create_accountant("sampledprv")
    assert isinstance(acc, SampledPrvOpacusAccountant)
    assert acc.mechanism() == "sampledprv"
    assert acc.get_epsilon(1e-5) == 0.0
    assert sp.torch.SampledPrvOpacusAccountant is SampledPrvOpacusAccountant


def test_import_without_opacus_does_not_fail():
    code = ("import sys, warnings; sys.modules['opacus'] = None; "
            "warnings.simplefilter('error'); import sampledprv.torch; print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0 and "ok" in out.stdout, out.stderr


@pytest.mark.slow
def test_training_run_gives_the_direct_interval():
    """A short DP-SGD run on the digits data: the engine's interval is the one our
    analytic accountant gives when called directly with the same steps (online path,
    one step at a time), and it brackets the from-scratch rebuild's estimate."""
    torch.manual_seed(0)
    loader = _digits_loader()
    model = torch.nn.Linear(64, 10)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    engine = PrivacyEngine(accountant="sampledprv")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model, opt, loader = engine.make_private(module=model, optimizer=opt,
                                                 data_loader=loader, noise_multiplier=1.1,
                                                 max_grad_norm=1.0)
        times = _train(engine, loader, model, opt, epochs=2, query=1e-5)
    steps = len(engine.accountant)
    q = 1.0 / len(loader)
    iv = engine.accountant.get_epsilon_interval(1e-5)
    assert engine.get_epsilon(1e-5) == iv.upper
    spec = sp.PoissonSubsampled(sp.Gaussian(1.1), q)
    direct = sp.Accountant(horizon=64)
    for _ in range(steps):
        direct.compose(spec)
        direct.epsilon(1e-5)
    d = direct.epsilon(1e-5)
    assert (iv.lower, iv.estimate, iv.upper) == (d.lower, d.estimate, d.upper)
    rebuilt = sp.Accountant().compose(spec, steps).epsilon(1e-5)
    assert iv.lower <= rebuilt.estimate <= iv.upper
    print(f"\nget_epsilon: first {1e3 * times[0]:.2f} ms, then median "
          f"{1e3 * np.median(times[1:]):.3f} ms, max {1e3 * max(times[1:]):.2f} ms "
          f"over {len(times) - 1} calls")


def test_make_private_with_epsilon_lands_within_target():
    torch.manual_seed(0)
    loader = _digits_loader()
    model = torch.nn.Linear(64, 10)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    engine = PrivacyEngine(accountant="sampledprv")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model, opt, loader = engine.make_private_with_epsilon(
            module=model, optimizer=opt, data_loader=loader, target_epsilon=2.0,
            target_delta=1e-5, epochs=3, max_grad_norm=1.0)
    sigma, q = opt.noise_multiplier, 1.0 / len(loader)
    steps = int(3 / q)
    fresh = SampledPrvOpacusAccountant()
    fresh.history = [(sigma, q, steps)]
    assert fresh.get_epsilon(1e-5) <= 2.0
    direct = sp.Accountant().compose(sp.PoissonSubsampled(sp.Gaussian(sigma), q), steps)
    up = direct.epsilon(1e-5).upper
    print(f"\nmake_private_with_epsilon(2): sigma={sigma:.5f}, certified upper end "
          f"{fresh.get_epsilon(1e-5):.4f} (accountant), {up:.4f} (sp.Accountant rebuild)")
    assert up <= 2.0


@pytest.mark.slow
def test_generalized_gaussian_steps():
    acc = SampledPrvOpacusAccountant(beta=1.5, dimension=10)
    for _ in range(3):
        acc.step(noise_multiplier=2.0, sample_rate=0.5)
    iv = acc.get_epsilon_interval(1e-5)
    assert 0 < iv.lower <= iv.upper < np.inf
    assert acc.steps == PoissonSteps(1.5, 10)


def test_step_model_is_pluggable_and_checked():
    class Whole:
        def composition(self, history):
            return [(sp.Gaussian(sum(s for s, _, _ in history)), 1)]

        def accountant(self, steps):
            return sp.Accountant()
    acc = SampledPrvOpacusAccountant(steps=Whole())
    acc.step(noise_multiplier=3.0, sample_rate=1.0)
    assert acc.get_epsilon(1e-5) == sp.Accountant().compose(sp.Gaussian(3.0)).epsilon(1e-5).upper
    with pytest.raises(ValueError, match="steps"):
        SampledPrvOpacusAccountant(steps=object())


def test_history_set_wholesale_restarts():
    acc = SampledPrvOpacusAccountant()
    acc.history = [(1.0, 0.01, 100)]
    a = acc.get_epsilon(1e-5)
    acc.history = [(2.0, 0.01, 100)]
    b = acc.get_epsilon(1e-5)
    assert b < a
    acc.history = [(1.0, 0.01, 100)]
    assert acc.get_epsilon(1e-5) == a
