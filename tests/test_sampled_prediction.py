"""Planner predictions: simulated width at n vs a real run, n for a target width, time."""

from __future__ import annotations

import math

import pytest

import sampledprv as sp
from sampledprv.sampled.certification.prediction import predict_width

MECH = sp.PoissonSubsampled(sp.Gaussian(1.0), q=0.2)
K, DELTA, ALPHA, BINS = 10, 1e-3, 1e-6, 4096


def test_predicted_width_matches_a_real_run():
    n = 1_000_000
    pred = predict_width(MECH, K, DELTA, n, alpha=ALPHA, bins=BINS, sims=3, seed=1,
                         rate=(1e8, 5e7), workers=4)
    acc = sp.SampledAccountant(n, alpha=ALPHA, bins=BINS, seed=3, progress=False)
    iv = acc.compose(MECH, K).epsilon(delta=DELTA)
    assert pred.source == "analytic" and len(pred.widths) == 3
    assert abs(iv.width / pred.width - 1) < 0.2, (iv.width, pred)
    assert pred.draws == 2 * n     # asymmetric: two histograms
    assert math.isclose(pred.seconds_on(4), 2 * n / (4 * 5e7))
    assert math.isclose(pred.seconds_here, 2 * n / 1e8)
    assert "predicted width" in str(pred) and "on 4 workers" in str(pred)


def test_pilot_source_for_mechanisms_without_a_law():
    pair = sp.PrivacyLossSampler(lambda rng, size: 0.125 + 0.5 * rng.standard_normal(size),
                                 name="gauss-loss")
    pred = predict_width(pair, 4, 1e-2, 200_000, alpha=1e-3, bins=1024, sims=2,
                         pilot_n=200_000, rate=(1e7, 1e7))
    assert pred.source == "pilot" and math.isfinite(pred.width) and pred.width > 0


def test_plan_for_a_target_width_is_simulated():
    plan = sp.plan_samples(MECH, K, DELTA, alpha=ALPHA, bins=BINS, target_width=0.15,
                           pilot_n=200_000, workers=2, sims=1)
    assert plan.n_target is not None and plan.prediction is not None
    assert plan.prediction.n == plan.n_target and plan.prediction.workers == 2
    assert abs(plan.prediction.width / 0.15 - 1) < 0.15
    assert "simulat" in plan.note and "on 2 workers" in str(plan)


def test_cli_plan_predicts_width_and_time(capsys):
    from sampledprv.cli import main
    rc = main(["plan", "--delta", "1e-3", "-m", "subsampled-gaussian sigma=1 q=0.2", "-c", "10",
               "--alpha", "1e-6", "--bins", "4096", "--predict-n", "1e6", "--workers", "4"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "predicted certified width at n = 1,000,000" in out
    assert "on 4 single-core workers" in out


@pytest.mark.parametrize("setup,rates", [(0.0, (5e8, 2.5e8)), (0.004, (6e7, 3e7)),
                                         (0.0, (1e5, 1e5)), (0.0, (1e11, 1e11))])
def test_measure_rate_times_one_run_of_at_least_min_seconds(monkeypatch, setup, rates):
    """A simulated kernel (per-call set-up plus draws at a fixed rate, on a simulated
    clock): every rate comes from a run of at least ``min_seconds`` (or of 2^28 draws,
    the cap), the draw count grows 2x to 16x between runs, and the rates returned are the
    simulated ones up to the set-up's share of the timed run."""
    from sampledprv.sampled.certification import prediction

    clock = [0.0]
    runs = []

    def fake_histogram(mechanism, n, n_threads=1, **kw):
        rate = rates[0] if n_threads is None else rates[1]
        clock[0] += setup + n / rate
        runs.append((n_threads, n, setup + n / rate))

    monkeypatch.setattr(prediction, "loss_histogram", fake_histogram)
    monkeypatch.setattr(prediction.time, "perf_counter", lambda: clock[0])
    monkeypatch.setattr(prediction, "choose_window", lambda *a, **k: (0.0, 1.0, 8))
    got = prediction.measure_rate(sp.Gaussian(1.0), min_seconds=0.25)
    for threads, want in zip((None, 1), got):
        seq = [(n, dt) for t, n, dt in runs[1:] if t == threads]      # runs[0]: warm-up
        assert seq[-1][1] >= 0.25 or seq[-1][0] == 1 << 28
        assert all(dt < 0.25 for _, dt in seq[:-1])
        assert all(2 <= b / a <= 16 for (a, _), (b, _) in zip(seq, seq[1:]))
        assert want == pytest.approx(seq[-1][0] / seq[-1][1])
    for want, rate in zip(got, rates):
        assert want == pytest.approx(rate, rel=0.02)      # set-up: under 2% of the run
    # a short run is scaled to the count its rate says takes 1.25 min_seconds: the timed
    # run comes at the second or third run (doubling from 2^20 took up to five here)
    assert len([r for r in runs[1:] if r[0] is None]) <= 3
