"""The table of kernels that the xdist controller compiles before the workers start
(``tests/numba_warmup.py``) follows the code: every entry is a disk-cached kernel with
the right number of arguments, the notation gives Numba's own argument types, and the
signatures real calls compile are the listed ones."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from numba import typeof
from numba.core.caching import NullCache
from numba.core.dispatcher import Dispatcher

import numba_warmup as w
import sampledprv as sp
from sampledprv.sampled.draws.rng import STATE_DTYPE


@pytest.mark.parametrize("kernel", w.KERNELS, ids=lambda k: f"{k.module}.{k.name}")
def test_every_entry_is_a_disk_cached_kernel_with_its_arity(kernel):
    disp = w.resolve(kernel)
    assert isinstance(disp, Dispatcher), f"{kernel.name} is not a Numba dispatcher"
    assert not isinstance(disp._cache, NullCache), f"{kernel.name} is not cached on disk"
    arity = len(inspect.signature(disp.py_func).parameters)
    for sig in kernel.signatures:
        assert len(w.parse_signature(sig)) == arity, (kernel.name, sig)
    assert kernel.cost > 0 and kernel.group


def test_notation_gives_numbas_types_of_the_arrays_the_code_passes():
    states = np.zeros(3, dtype=STATE_DTYPE)
    ro = np.zeros((2, 2))
    ro.setflags(write=False)
    got = w.parse_signature("STATES STATE F2R F2 I321 I1 C1 F I U B")
    want = (typeof(states), typeof(states[0]), typeof(ro), typeof(np.zeros((2, 2))),
            typeof(np.zeros(2, dtype=np.int32)), typeof(np.zeros(2, dtype=np.int64)),
            typeof(np.zeros(2, dtype=np.complex128)), typeof(1.0), typeof(1),
            typeof(np.uint64(1)), typeof(True))
    assert got == want
    with pytest.raises(ValueError, match="unknown type token"):
        w.parse_signature("F1 X")


def test_shares_keep_groups_whole_and_balance_the_cost():
    parts = w.shares(w.KERNELS, 2)
    assert sorted(k for p in parts for k in p) == sorted(w.KERNELS)
    groups = [{k.group for k in p} for p in parts]
    assert not groups[0] & groups[1]
    costs = [sum(k.cost for k in p) for p in parts]
    biggest = max(sum(k.cost for k in w.KERNELS if k.group == g)
                  for g in {k.group for k in w.KERNELS})
    assert abs(costs[0] - costs[1]) <= biggest


def _listed(kernels) -> dict:
    out: dict = {}
    for k in kernels:
        out.setdefault(id(w.resolve(k)), set()).update(
            w.parse_signature(s) for s in k.signatures)
    return out


def test_real_calls_compile_only_listed_signatures():
    """The sampling kernel with a built-in kind's fill, and the exact occupancy moments,
    called as the package calls them: every signature they hold (compiled or loaded from
    the cache) is one the table lists."""
    sp.sampled.loss_histogram(sp.Gaussian(1.0), direction="remove", n=2000, lo=-4.0,
                              h=0.01, bins=800, seed=0, n_threads=2, progress=False)
    from sampledprv.rdp.occupancy import occupancy_log_moment
    occupancy_log_moment(np.log([1.0, 1.5, 3.0]), steps=6, selected=2)
    kernels = [k for k in w.KERNELS
               if k.module in ("sampled.histograms.kernels", "rdp.occupancy")
               or k.name == "kind:gaussian"]
    listed = _listed(kernels)
    for k in kernels:
        disp = w.resolve(k)
        assert disp.signatures, f"{k.name} was not called"
        extra = set(disp.signatures) - listed[id(disp)]
        assert not extra, f"{k.module}.{k.name} compiled unlisted signatures {extra}"


def test_warm_up_only_for_runs_of_the_suite(tmp_path):
    root = w.ROOT
    assert w.covers_the_suite([], False, root)                       # pytest -n 2
    assert w.covers_the_suite(["tests"], True, root)
    assert w.covers_the_suite(["."], True, root)
    assert w.covers_the_suite(["../tests"], True, root / "docs")
    assert not w.covers_the_suite(["tests/test_cli.py"], True, root)
    assert not w.covers_the_suite(["tests/test_cli.py::test_plan_target_width"], True, root)
    assert not w.covers_the_suite([str(tmp_path)], True, root)


def test_script_warms_the_whole_table(monkeypatch, capsys):
    """``python tests/numba_warmup.py --all N`` (scripts/setup_env.sh) runs the warm-up of
    the whole table with ``N`` processes and prints what it could not compile."""
    calls = []

    def fake(processes):
        calls.append(processes)
        return 1.5, ["rdp.x._k: TypingError: no"]
    monkeypatch.setattr(w, "warm_up", fake)
    assert w._main(["--all", "3"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert calls == [3]
    assert out == ["not compiled: rdp.x._k: TypingError: no",
                   f"numba warm-up: {len(w.KERNELS)} kernels, 1.5 s"]
