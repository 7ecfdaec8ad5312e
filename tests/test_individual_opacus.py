"""Per-record Renyi accounting on a small Opacus model: records with small gradients are
charged less than the worst case and keep training after it stops; no record exceeds its
budget."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
opacus = pytest.importorskip("opacus")

from sampledprv.rdp.filters import IndividualRenyiFilter  # noqa: E402
from sampledprv.torch.individual import individual_dp_step, per_sample_grad_norms  # noqa: E402

ORDER, BUDGET, SIGMA, CLIP = 8.0, 2.0, 2.0, 1.0


def test_small_gradients_are_charged_less_than_the_worst_case():
    torch.manual_seed(0)
    n, d = 40, 5
    x = torch.randn(n, d)
    x[: n // 2] *= 0.05                    # half the records have tiny features -> tiny grads
    y = (torch.rand(n) < 0.5).float()
    model = opacus.GradSampleModule(torch.nn.Linear(d, 1, bias=False), loss_reduction="sum")
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    filt = IndividualRenyiFilter(n, {ORDER: BUDGET})
    gen = torch.Generator().manual_seed(1)
    worst_step = ORDER * CLIP ** 2 / (2 * (SIGMA * CLIP) ** 2)   # a record at the clip norm
    steps = 60
    for _ in range(steps):
        opt.zero_grad()
        model.zero_grad()
        loss = torch.nn.functional.binary_cross_entropy_with_logits(
            model(x).squeeze(1), y, reduction="sum")
        loss.backward()
        norms = per_sample_grad_norms(model)
        assert norms.shape == (n,)
        individual_dp_step(model, filt, np.arange(n), SIGMA, CLIP, generator=gen)
        opt.step()
    assert np.all(filt.spent <= BUDGET * (1 + 1e-12))
    small, large = filt.spent[: n // 2, 0], filt.spent[n // 2:, 0]
    # the worst case would have charged every record worst_step per step until the budget
    worst_total = min(steps, int(BUDGET / worst_step)) * worst_step
    assert np.all(small < 0.5 * worst_total)
    assert np.all(filt.active[: n // 2])           # small-gradient records never stopped
    assert not np.all(filt.active[n // 2:])        # some large ones were dropped
    assert small.max() < large.max()


def test_input_errors():
    model = opacus.GradSampleModule(torch.nn.Linear(2, 1))
    filt = IndividualRenyiFilter(3, {ORDER: BUDGET})
    with pytest.raises(ValueError, match="grad_sample"):
        individual_dp_step(model, filt, [0, 1, 2], SIGMA, CLIP)
    model(torch.randn(3, 2)).sum().backward()
    with pytest.raises(ValueError, match="indices"):
        individual_dp_step(model, filt, [0, 1], SIGMA, CLIP)
    with pytest.raises(ValueError, match="indices"):
        individual_dp_step(model, filt, [0, 1, 1], SIGMA, CLIP)
