"""Every script in ``benchmarks/`` runs, at tiny sizes, in the test suite.

A benchmark that crashes (``bench_long_k.py`` once died on a ``NameError`` in the code
path that times the peers, and nothing noticed) is a performance claim nobody can check.
One list, :data:`SMOKE_ARGS`, gives each script the arguments that make it run in seconds
through all of its code paths (ours and the peers'); a script without an entry fails
:func:`test_every_benchmark_has_a_smoke_run`, so a new benchmark cannot be added without
one.  No timing is asserted: only that the script exits with status 0 and prints no
traceback, error or failure marker.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
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
    "bench_gpu_acceptance.py": ["--smoke"],
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


@pytest.mark.parametrize("script", _scripts())
def test_benchmark_smoke_run(script):
    if script not in SMOKE_ARGS:
        pytest.fail(f"{script} has no entry in SMOKE_ARGS")
    env = dict(os.environ, PYTHONPATH=str(ROOT), MPLBACKEND="Agg", TQDM_DISABLE="1")
    out = subprocess.run([sys.executable, str(BENCH / script), *SMOKE_ARGS[script]],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
                         check=False)
    text = out.stdout + out.stderr
    assert out.returncode == 0, f"{script} exited {out.returncode}:\n{text[-4000:]}"
    broken = _BROKEN.search(text)
    assert broken is None, (f"{script} printed {broken.group(0)!r}:\n"
                            f"{text[max(0, broken.start() - 2000):broken.end() + 2000]}")
