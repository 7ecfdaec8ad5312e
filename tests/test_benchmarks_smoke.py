"""Every script in ``benchmarks/`` runs, at tiny sizes, in the test suite.

A benchmark that crashes (``bench_long_k.py`` once died on a ``NameError`` in the code
path that times the peers, and nothing noticed) is a performance claim nobody can check.
One list, :data:`SMOKE_ARGS`, gives each script the arguments that make it run in seconds
through all of its code paths (ours and the peers'); a script without an entry fails
:func:`test_every_benchmark_has_a_smoke_run`, so a new benchmark cannot be added without
one.  No timing is asserted: only that the script exits with status 0 and prints no
traceback, error or failure marker.

Most scripts run as ``__main__`` in the test worker (:func:`runpy.run_path`, the same
script, guard and argv, in the repository root, with Python's default warning filters and
the warnings it shows added to its output): a fresh interpreter per script spent about
half of this file's CPU time importing numpy, scipy, torch, the peers and the package
again and loading the Numba kernels the worker has loaded already.  A script that raises
fails the test with its traceback, as a crash in a subprocess did.  The scripts of
:data:`IN_A_SUBPROCESS` still run as ``python benchmarks/<script>``.
"""

from __future__ import annotations

import contextlib
import os
import re
import runpy
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"

#: script name -> arguments of its smoke run (tiny sizes; every peer that the script
#: compares against still runs, at those sizes).
SMOKE_ARGS: dict[str, list[str]] = {
    "bench_batch_samplers.py": ["--case", "1", "--n", "2e4"],
    "bench_cold_start.py": ["--n-samples", "10000", "--cases", "gauss"],
    "bench_compare_quick.py": [],
    "bench_dask_scale.py": ["--n", "1e5", "--eff-n", "1e5", "--repeats", "1", "--sims", "1",
                            "--skip-long"],
    "bench_gpu_acceptance.py": ["--smoke", "--checks", "1,2,3,4"],
    "bench_group.py": ["--sizes", "1,2", "--steps", "50"],
    "bench_dpsgd_accounting.py": ["--ks", "1e2", "--no-trace", "--repeat", "1"],
    "bench_long_k.py": ["--ks", "1e3", "--timeout", "120", "--phases"],
    "bench_matrix_mechanism.py": ["--case", "1", "--n", "2e4"],
    "bench_online_epsilon.py": ["--steps", "50"],
    "bench_online_schedule.py": ["--steps", "50"],
    "bench_opacus_get_epsilon.py": ["--steps", "20", "--prv-every", "10",
                                    "--bnb-samples", "1e4"],
    "bench_renyi_tails.py": ["--smoke"],
    "bench_sampled_tightness.py": ["--n", "1e4", "--k", "10", "--no-seed"],
    "bench_sampling_kernel.py": ["--quick", "--n", "10000", "--repeat", "1"],
    "bench_subsampled_user_pairs.py": ["--n", "10000"],
    "bench_tails.py": ["--case", "1", "--n", "2e4"],
    "bench_torch_backend.py": ["--n", "10000", "--repeats", "1", "--bins", "1024"],
    "bench_torch_noise.py": ["--sizes", "1000", "--repeats", "1"],
    "bench_tradeoff.py": ["--repeat", "1"],
}

#: what a benchmark prints when something of ours or a peer's broke (a peer that lacks a
#: feature says "not run", which is not matched)
_BROKEN = re.compile(r"Traceback|FAILED|\b[A-Z][A-Za-z]*(Error|Exception)\b|^\s*error:",
                     re.MULTILINE)


def _scripts() -> list[str]:
    return sorted(p.name for p in BENCH.glob("bench_*.py"))


def test_every_benchmark_has_a_smoke_run():
    missing = sorted(set(_scripts()) - set(SMOKE_ARGS))
    stale = sorted(set(SMOKE_ARGS) - set(_scripts()))
    assert not missing, f"benchmarks without a smoke run in SMOKE_ARGS: {missing}"
    assert not stale, f"SMOKE_ARGS names scripts that do not exist: {stale}"


def test_broken_marker_matches_what_a_crash_prints():
    """The marker is not vacuous: it catches the crash that motivated this file."""
    crash = ("Traceback (most recent call last):\n  File \"bench_long_k.py\", line 69\n"
             "NameError: name 'clear_law_cache' is not defined\n")
    assert _BROKEN.search(crash)
    assert _BROKEN.search("  ours: FAILED: ValueError: grid too large")
    assert not _BROKEN.search("# delta_error: ours 1e-10, prv/opacus 1e-08\n"
                              "peer: dp-accounting 0.6.0 has no get_true_positive_rates; "
                              "not run.")


#: scripts that run as ``python benchmarks/<script>`` in a subprocess: the Dask one starts a
#: cluster of worker processes and sets up Dask's logging; ``bench_long_k.py --phases``
#: wraps functions of the package in timers for its phase budget (undone afterwards, but
#: a test worker runs other tests after it)
IN_A_SUBPROCESS = frozenset({"bench_dask_scale.py", "bench_long_k.py"})

#: the warning filters of a plain ``python script.py`` (no ``-W``, no dev mode)
_PYTHON_DEFAULT_FILTERS = (("default", DeprecationWarning, "__main__"),
                           ("ignore", DeprecationWarning, None),
                           ("ignore", PendingDeprecationWarning, None),
                           ("ignore", ImportWarning, None),
                           ("ignore", ResourceWarning, None))


def _run_subprocess(script: str) -> tuple[int, str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), MPLBACKEND="Agg", TQDM_DISABLE="1")
    out = subprocess.run([sys.executable, str(BENCH / script), *SMOKE_ARGS[script]],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
                         check=False)
    return out.returncode, out.stdout + out.stderr


def _forget_modules_in(folder: Path) -> None:
    """Drop from ``sys.modules`` the modules imported from ``folder``.  Their ``__file__``
    is the folder's path as it stands on ``sys.path`` (resolved, as :data:`BENCH` is)
    joined with the file name: compared as strings, not resolved one by one (thousands
    of modules, twice per script: 3.7 of this file's CPU seconds went to ``realpath``)."""
    where = {str(folder), str(folder.resolve())}
    for name, mod in list(sys.modules.items()):
        file = getattr(mod, "__file__", None)
        if file and os.path.dirname(file) in where:
            del sys.modules[name]


def _run_in_process(script: str, capfd, monkeypatch) -> tuple[int, str]:
    """``python benchmarks/<script> *SMOKE_ARGS[script]`` as ``__main__`` in this process:
    (exit status, stdout + stderr + the warnings a plain run would have printed).  An
    exception propagates (the test fails with its traceback).  torch runs on one thread
    (its threads only contend with the other test worker); ``sys.path`` is restored
    afterwards (the scripts put folders on it)."""
    path = BENCH / script
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.setenv("TQDM_DISABLE", "1")
    monkeypatch.setattr(sys, "argv", [str(path), *SMOKE_ARGS[script]])
    # as ``python benchmarks/<script>``: its folder first on sys.path, and the helper
    # modules there (``_machine``, ``_phases``) imported afresh by the script itself
    monkeypatch.setattr(sys, "path", [str(BENCH), *sys.path])
    code = 0
    with contextlib.ExitStack() as stack:
        stack.callback(_forget_modules_in, BENCH)
        _forget_modules_in(BENCH)
        if "torch" in sys.modules:
            torch = sys.modules["torch"]
            threads = torch.get_num_threads()
            torch.set_num_threads(1)
            stack.callback(torch.set_num_threads, threads)
        caught = stack.enter_context(warnings.catch_warnings(record=True))
        warnings.resetwarnings()
        for action, category, module in reversed(_PYTHON_DEFAULT_FILTERS):
            warnings.filterwarnings(action, category=category, module=module or "")
        capfd.readouterr()
        try:
            runpy.run_path(str(path), run_name="__main__")
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    if "matplotlib.pyplot" in sys.modules:
        sys.modules["matplotlib.pyplot"].close("all")
    out = capfd.readouterr()
    shown = "".join(warnings.formatwarning(w.message, w.category, w.filename, w.lineno)
                    for w in caught)
    return code, out.out + out.err + shown


def test_a_crash_in_process_fails_the_smoke_run(tmp_path, capfd, monkeypatch):
    """The in-process runner is not vacuous: a script that raises, exits non-zero or
    prints a failure marker is caught as a subprocess run would catch it."""
    fake = {"bench_zz_raises.py": "raise NameError('clear_law_cache')\n",
            "bench_zz_exits.py": "import sys\nsys.exit(3)\n",
            "bench_zz_prints.py": "print('  ours: FAILED: ValueError: grid too large')\n",
            "bench_zz_warns.py": ("import warnings\n"
                                  "warnings.warn('the peer raised KeyError', UserWarning)\n"),
            "bench_zz_ok.py": "import sys\nprint('fine')\nsys.exit(0)\n",
            "bench_zz_helper.py": "import _zz_helper\nprint(_zz_helper.VALUE)\n",
            "_zz_helper.py": "VALUE = 'from the folder'\n"}
    for name, text in fake.items():
        (tmp_path / name).write_text(text)
        monkeypatch.setitem(SMOKE_ARGS, name, [])
    monkeypatch.setattr(sys.modules[__name__], "BENCH", tmp_path)
    with pytest.raises(NameError):
        _run_in_process("bench_zz_raises.py", capfd, monkeypatch)
    assert _run_in_process("bench_zz_exits.py", capfd, monkeypatch)[0] == 3
    assert _BROKEN.search(_run_in_process("bench_zz_prints.py", capfd, monkeypatch)[1])
    assert _BROKEN.search(_run_in_process("bench_zz_warns.py", capfd, monkeypatch)[1])
    code, text = _run_in_process("bench_zz_ok.py", capfd, monkeypatch)
    assert code == 0 and text.startswith("fine") and not _BROKEN.search(text)
    # a helper module of the folder is imported afresh by each script, and forgotten after
    assert _run_in_process("bench_zz_helper.py", capfd, monkeypatch)[1].startswith("from the")
    assert "_zz_helper" not in sys.modules


@pytest.mark.parametrize("script", _scripts())
def test_benchmark_smoke_run(script, capfd, monkeypatch):
    if script not in SMOKE_ARGS:
        pytest.fail(f"{script} has no entry in SMOKE_ARGS")
    if script in IN_A_SUBPROCESS:
        code, text = _run_subprocess(script)
    else:
        code, text = _run_in_process(script, capfd, monkeypatch)
    assert code == 0, f"{script} exited {code}:\n{text[-4000:]}"
    broken = _BROKEN.search(text)
    assert broken is None, (f"{script} printed {broken.group(0)!r}:\n"
                            f"{text[max(0, broken.start() - 2000):broken.end() + 2000]}")


def test_speed_probe_runs():
    """``benchmarks/speed_probe.py`` (the machine's speed beside a timed run) runs and
    prints its one line."""
    out = subprocess.run([sys.executable, str(BENCH / "speed_probe.py")], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert re.fullmatch(r"speed probe \d+\.\d\d s\n", out.stdout), out.stdout
