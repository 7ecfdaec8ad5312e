"""Sharded sampling: executors, Dask cluster, worker faults, checkpoints, bad input.

One 2-worker ``LocalCluster`` (worker processes) is started once for the module.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import threading
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

import numpy as np
import pytest

import sampledprv as sp
from sampledprv.sampled.histograms import sharding
from sampledprv.sampled.histograms.sharding import HistogramJob, run_jobs, shard_seed

distributed = pytest.importorskip("distributed")   # the 'distributed' extra (installed in CI)

MECH = sp.PoissonSubsampled(sp.GeneralizedGaussian(beta=1.5, scale=1.5), q=0.1)
KW = dict(alpha=1e-6, seed=11, bins=1024, shard_size=50_000, progress=False)
N = 500_000


def _interval(executor=None, **kw):
    acc = sp.SampledAccountant(N, executor=executor, **{**KW, **kw})
    iv = acc.compose(MECH, 8).epsilon(delta=1e-2)
    return iv, acc


@pytest.fixture(scope="module")
def client():
    from distributed import Client, LocalCluster
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                           dashboard_address=None)
    c = Client(cluster)
    yield c
    c.close()
    cluster.close()


@pytest.fixture(scope="module")
def reference():
    return _interval()


def _same(a, b):
    assert (a.lower, a.estimate, a.upper) == (b.lower, b.estimate, b.upper)


def test_shards_are_keyed_by_index():
    root = np.random.SeedSequence(5).spawn(1)[0]
    a = shard_seed(root, 3).generate_state(4)
    root.spawn(7)     # spawning elsewhere does not move the keyed children
    assert np.array_equal(a, shard_seed(root, 3).generate_state(4))
    assert not np.array_equal(a, shard_seed(root, 2).generate_state(4))


def test_completion_order_and_threads_do_not_matter():
    job = HistogramJob(MECH, "add", 450_001, -2.0, 2.0**-8, 1024, np.random.SeedSequence(1),
                       shard_size=100_000)
    ref = run_jobs([job])[0]
    assert ref.n == 450_001 and job.n_shards == 5
    parts = [sharding.run_shard(job, i, 1) for i in reversed(range(job.n_shards))]
    counts = sum(p[1] for p in parts)
    assert np.array_equal(counts, ref.counts)
    with ThreadPoolExecutor(3) as ex:
        h = run_jobs([job], ex, threads_per_task=1)[0]
    assert np.array_equal(h.counts, ref.counts) and h.above == ref.above


def test_in_process_local_cluster_and_process_pool_agree(client, reference):
    ref, acc_ref = reference
    iv, acc = _interval(client)
    _same(iv, ref)
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload(["sampledprv.sampled.histograms.sharding"])  # import once, fork workers
    with ProcessPoolExecutor(2, mp_context=ctx) as ex:
        iv2, _ = _interval(ex)
    _same(iv2, ref)
    e1, e2 = acc_ref.empirical(MECH), acc.empirical(MECH)
    assert np.array_equal(e1.remove.counts, e2.remove.counts)
    assert np.array_equal(e1.add.counts, e2.add.counts)


def test_bad_executor_and_workers_refused_before_sampling(client, monkeypatch):
    with pytest.raises(ValueError, match="executor must be"):
        sp.SampledAccountant(N, executor=object())
    real = sharding._required_modules
    monkeypatch.setattr(sharding, "_required_modules",
                        lambda b: real(b) + ("no_such_module_for_sampledprv",))
    calls = []
    monkeypatch.setattr(sharding, "run_shard", lambda *a: calls.append(a))
    with pytest.raises(ValueError, match="cannot import no_such_module_for_sampledprv"):
        sp.SampledAccountant(N, executor=client)
    assert not calls


def test_process_pool_needs_picklable_mechanism():
    lam = sp.PrivacyLossSampler(lambda rng, size: rng.normal(0.5, 1.0, size), name="lambda")
    ex = ProcessPoolExecutor(1, mp_context=mp.get_context("spawn"))
    acc = sp.SampledAccountant(10_000, executor=ex, progress=False)
    with pytest.raises(ValueError, match="must pickle the mechanism"):
        acc.compose(lam, 2).epsilon(delta=0.1)
    with pytest.raises(ValueError, match="forks"):
        sp.SampledAccountant(10_000, executor=ProcessPoolExecutor(1, mp_context=mp.get_context("fork")))
    ex.shutdown()


def test_checkpoint_path_not_writable(tmp_path):
    f = tmp_path / "a_file"
    f.write_text("x")
    with pytest.raises(ValueError, match="checkpoint path .* not a writable directory"):
        sp.SampledAccountant(N, checkpoint=f / "ck")
    with pytest.raises(ValueError, match="not a writable directory"):
        sp.SampledAccountant(N, checkpoint=f)


def test_checkpoint_resume_is_bit_identical(tmp_path, reference, monkeypatch):
    ref, _ = reference
    real = sharding.run_shard
    calls = []
    armed = [True]

    def flaky(job, i, threads=None):
        calls.append(i)
        if len(calls) == 7 and armed:
            raise RuntimeError("crash")   # a crash (or Ctrl-C) in the middle of the run
        return real(job, i, threads)

    monkeypatch.setattr(sharding, "run_shard", flaky)
    with pytest.raises(RuntimeError, match="crash"):
        _interval(checkpoint=tmp_path)
    files = sorted(tmp_path.rglob("shard-*.npz"))
    assert len(files) == 6 and not list(tmp_path.rglob("*.tmp"))
    calls.clear()
    armed.clear()
    iv, _ = _interval(checkpoint=tmp_path)
    assert len(calls) == 2 * N // KW["shard_size"] - 6      # only the missing shards ran
    _same(iv, ref)


@pytest.mark.parametrize("change, word", [({"seed": 12}, "seed"), ({"bins": 4096}, "bins"),
                                          ({"mech": sp.Gaussian(2.0)}, "mechanism")])
def test_mismatched_checkpoint_refused(tmp_path, change, word):
    acc = sp.SampledAccountant(200_000, **{**KW, "checkpoint": tmp_path})
    acc.compose(MECH, 2).epsilon(delta=0.1)
    kw = {**KW, "checkpoint": tmp_path}
    mech = change.pop("mech", MECH)
    kw.update(change)
    acc2 = sp.SampledAccountant(200_000, **kw).compose(mech, 2)
    with pytest.raises(ValueError, match=f"different .*{word}"):
        acc2.epsilon(delta=0.1)


def test_one_progress_bar_with_rate(capsys):
    job = HistogramJob(MECH, "remove", 300_000, -2.0, 2.0**-8, 1024,
                       np.random.SeedSequence(2), shard_size=50_000)
    run_jobs([job, job.__class__(**{**job.__dict__, "direction": "add", "label": "b"})],
             progress=True)
    err = capsys.readouterr().err
    assert "sampling 2 histogram(s)" in err and "draw/s" in err and "600k/600k" in err


def test_worker_killed_mid_run_gives_same_interval(client, reference, tmp_path):
    """SIGKILL one worker process after the first shard lands; the run still matches."""
    ref, _ = reference
    pids = client.run(os.getpid)
    seen = {}

    def killer():
        t0 = time.time()
        while time.time() - t0 < 120:
            done = list(tmp_path.rglob("shard-*.npz"))
            if done:
                seen["done_at_kill"] = len(done)
                os.kill(next(iter(pids.values())), signal.SIGKILL)
                return
            time.sleep(0.001)

    th = threading.Thread(target=killer)
    th.start()
    iv, _ = _interval(client, checkpoint=tmp_path)
    th.join()
    assert seen["done_at_kill"] < 2 * N // KW["shard_size"]     # killed mid-run
    assert next(iter(pids.values())) not in client.run(os.getpid).values()
    _same(iv, ref)
