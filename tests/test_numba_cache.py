"""Stale Numba caches are purged when any source file of the package changes."""

from __future__ import annotations

from sampledprv.sampled._numba_cache import purge_stale


def _tree(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "k.py").write_text("x = 1\n")
    (tmp_path / "b.py").write_text("y = 2\n")
    return tmp_path


def test_fresh_tree_gets_stamps_and_keeps_new_caches(tmp_path):
    root = _tree(tmp_path)
    assert purge_stale(root) == 0                       # nothing cached yet
    cache = root / "a" / "__pycache__"
    (cache / "k.f-1.py311.nbi").write_bytes(b"index")   # compiled after the stamp
    assert purge_stale(root) == 0 and (cache / "k.f-1.py311.nbi").exists()


def test_edit_of_any_source_purges_every_cache(tmp_path):
    root = _tree(tmp_path)
    purge_stale(root)
    caches = [root / "a" / "__pycache__" / "k.f-1.py311.nbi",
              root / "__pycache__" / "b.g-3.py311.1.nbc"]
    for c in caches:
        c.write_bytes(b"compiled")
    (root / "b.py").write_text("y = 3\n")                # a dependency changes
    assert purge_stale(root) == 2
    assert not any(c.exists() for c in caches)
    assert purge_stale(root) == 0                       # stamped again


def test_unstamped_caches_are_purged(tmp_path):
    root = _tree(tmp_path)
    cache = root / "a" / "__pycache__"
    cache.mkdir()
    (cache / "old.nbi").write_bytes(b"from before the stamps")
    assert purge_stale(root) == 1


def test_numba_cache_dir_is_purged_too(tmp_path, monkeypatch):
    import hashlib
    import os

    (tmp_path / "src").mkdir()
    root = _tree(tmp_path / "src")
    user = tmp_path / "numba-cache"
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(user))
    purge_stale(root)
    folder = os.path.abspath(root / "a")
    cache = user / f"a_{hashlib.sha1(folder.encode()).hexdigest()}"
    assert cache.is_dir()                               # where Numba will cache a/k.py
    (cache / "k.f-1.py311.nbi").write_bytes(b"compiled")
    (root / "a" / "k.py").write_text("x = 2\n")
    assert purge_stale(root) == 1 and not (cache / "k.f-1.py311.nbi").exists()
