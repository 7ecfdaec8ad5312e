"""Fault paths of sharded sampling (issue 24, item 3): client.restart() during a Dask
run, damaged or foreign checkpoint files, and edited user functions."""

from __future__ import annotations

import os
import shutil
import threading
import time
import zipfile

import numpy as np
import pytest

import sampledprv as sp
from sampledprv.sampled.histograms.checkpoint import describe, fingerprint

MECH = sp.PoissonSubsampled(sp.GeneralizedGaussian(beta=1.5, scale=1.5), q=0.1)
KW = dict(alpha=1e-6, seed=11, bins=1024, progress=False)


def _interval(n=200_000, shard_size=20_000, **kw):
    acc = sp.SampledAccountant(n, shard_size=shard_size, **{**KW, **kw})
    iv = acc.compose(MECH, 4).epsilon(delta=1e-2)
    return (iv.lower, iv.estimate, iv.upper)


@pytest.fixture(scope="module")
def reference():
    return _interval()


# ---- client.restart() -----------------------------------------------------------------
@pytest.mark.slow
def test_client_restart_mid_run_gives_the_same_interval(reference, tmp_path):
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None)
    client = distributed.Client(cluster)
    try:
        pids = set(client.run(os.getpid).values())
        seen = {}

        def restarter():
            t0 = time.time()
            while time.time() - t0 < 120:
                done = list(tmp_path.rglob("shard-*.npz"))
                if done:
                    seen["done"] = len(done)
                    try:
                        client.restart()
                    except Exception as err:  # noqa: BLE001 - comms closed by the restart
                        seen["restart_error"] = err
                    seen["restarted"] = True
                    return
                time.sleep(0.001)

        th = threading.Thread(target=restarter)
        th.start()
        iv = _interval(executor=client, checkpoint=tmp_path)
        th.join()
        assert seen.get("restarted") and seen["done"] < 20       # restarted mid-run
        assert not pids & set(client.run(os.getpid).values())     # new worker processes
        assert iv == reference
    finally:
        client.close()
        cluster.close()


def test_cancelled_futures_are_resubmitted(reference, monkeypatch):
    """Without a cluster: a fake Dask client whose first futures come back cancelled."""
    pytest.importorskip("distributed")
    from concurrent.futures import CancelledError

    from sampledprv.sampled.histograms import sharding

    class Future:
        def __init__(self, key, fn, args, cancelled):
            self.key, self._fn, self._args = key, fn, args
            self.status = "cancelled" if cancelled else "finished"

        def result(self):
            if self.status == "cancelled":
                raise CancelledError(self.key)
            return self._fn(*self._args)

    class Client:
        submitted = 0

        def submit(self, fn, *args, key=None, pure=None, retries=None):
            Client.submitted += 1
            # every third first attempt is cancelled (what client.restart() does)
            return Future(key, fn, args, "retry" not in key and Client.submitted % 3 == 0)

        def cancel(self, futures):
            pass

    class AsCompleted:
        def __init__(self, futures):
            self.queue = list(futures)

        def add(self, fut):
            self.queue.append(fut)

        def __iter__(self):
            while self.queue:
                yield self.queue.pop(0)

    import distributed
    from sampledprv.sampled.histograms.sharding import HistogramJob, run_jobs
    job = HistogramJob(MECH, "remove", 100_000, -2.0, 2.0**-6, 512, np.random.SeedSequence(4),
                       shard_size=10_000)
    plain = run_jobs([job])[0]
    monkeypatch.setattr(distributed, "as_completed", AsCompleted)
    monkeypatch.setattr(sharding, "check_executor", lambda ex, jobs: "dask")
    client = Client()
    client.scheduler_info = lambda: {"workers": {}}
    got = run_jobs([job], client)[0]
    assert np.array_equal(got.counts, plain.counts)
    assert Client.submitted > job.n_shards                  # some shards ran twice


# ---- checkpoint corruption ------------------------------------------------------------
def _fresh_checkpoint(tmp_path):
    _interval(n=100_000, checkpoint=tmp_path)
    shards = sorted(tmp_path.rglob("shard-*.npz"))
    assert len(shards) == 10
    return shards


def _flip(path):
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


def _truncate(path):
    path.write_bytes(path.read_bytes()[:-40])


def _empty(path):
    path.write_bytes(b"")


def _edit_counts(path):
    with np.load(path) as z:
        counts, extra, digest = z["counts"].copy(), z["extra"], z["digest"]
    j = int(np.argmax(counts))
    counts[j] -= 5
    counts[j + 1] += 5          # same total: only the digest tells
    np.savez(path, counts=counts, extra=extra, digest=digest)


@pytest.mark.parametrize("damage", [_flip, _truncate, _empty, _edit_counts])
def test_damaged_shard_is_refused_by_name(tmp_path, damage):
    shards = _fresh_checkpoint(tmp_path)
    damage(shards[3])
    with pytest.raises(ValueError) as err:
        _interval(n=100_000, checkpoint=tmp_path)
    assert str(shards[3]) in str(err.value) and "delete this file" in str(err.value)
    # the remedy works: delete the file, the run resumes bit-identically
    shards[3].unlink()
    assert _interval(n=100_000, checkpoint=tmp_path) == _interval(n=100_000)


def test_garbage_manifest_is_refused_by_name(tmp_path):
    _fresh_checkpoint(tmp_path)
    manifest = sorted(tmp_path.rglob("manifest.json"))[0]
    manifest.write_text("{not json")
    with pytest.raises(ValueError, match="not a readable manifest") as err:
        _interval(n=100_000, checkpoint=tmp_path)
    assert str(manifest) in str(err.value)
    manifest.write_text("[1, 2]")
    with pytest.raises(ValueError, match="not a manifest object"):
        _interval(n=100_000, checkpoint=tmp_path)


def test_foreign_shard_is_refused(tmp_path):
    """A shard copied in from a run with another seed (same mechanism and window)."""
    other = tmp_path / "other"
    mine = tmp_path / "mine"
    _interval(n=100_000, checkpoint=mine)
    _interval(n=100_000, checkpoint=other, seed=12)
    src = sorted(other.rglob("shard-000002.npz"))[0]
    dst = mine / src.relative_to(other)
    if not dst.parent.exists():          # labels are the same; windows may differ
        pytest.skip("the other seed chose another window label")
    shutil.copyfile(src, dst)
    with pytest.raises(ValueError, match="another run") as err:
        _interval(n=100_000, checkpoint=mine)
    assert str(dst) in str(err.value)


def test_shard_moved_to_another_index_is_refused(tmp_path):
    shards = _fresh_checkpoint(tmp_path)
    shutil.copyfile(shards[0], shards[1])
    with pytest.raises(ValueError, match="digest"):
        _interval(n=100_000, checkpoint=tmp_path)


def test_a_zip_without_digest_is_refused(tmp_path):
    shards = _fresh_checkpoint(tmp_path)
    with np.load(shards[0]) as z:
        np.savez(shards[0], counts=z["counts"], extra=z["extra"])
    assert zipfile.is_zipfile(shards[0])
    with pytest.raises(ValueError, match="no content digest"):
        _interval(n=100_000, checkpoint=tmp_path)


# ---- user functions ------------------------------------------------------------------
def _make(scale):
    def sample(rng, n):
        return scale * rng.normal(size=n)
    return sample


def test_fingerprint_sees_code_and_closure():
    a, b, c = _make(1.0), _make(1.0), _make(0.9)
    assert describe(a) == describe(b)                 # same code, same closure
    assert describe(a) != describe(c)                 # the closure value changed

    def f(w):
        return -0.5 * w ** 2

    def g(w):                                         # noqa: E306 - same name below
        return -0.5 * w ** 2 + 0.1
    g.__qualname__ = f.__qualname__
    assert describe(f).split("#")[0] == describe(g).split("#")[0]
    assert fingerprint(f) != fingerprint(g)           # the body changed
    assert fingerprint(len) == ""                     # builtins: the name only
