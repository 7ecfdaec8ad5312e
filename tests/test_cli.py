"""The command line: outputs parsed, exit codes 0/1/2/130 checked.

Most tests call ``sampledprv.cli.main`` in this process (``cli_inprocess.run``: stdout,
stderr and the exit code as a subprocess would give them, without a second of interpreter
start-up each); the tests marked "real process" run ``python -m sampledprv`` (or the
console script) as a subprocess: the ``-m`` entry with exit codes 0, 1 and 2, Ctrl-C
(130) and ``--version``.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

import pytest
from cli_inprocess import TIMEOUT, run, run_process

import sampledprv as sp
import sampledprv.cli

DPSGD = "subsampled-gaussian sigma=1 q=0.01"


def ok_json(*args: str, **kw) -> dict:
    p = run(*args, "--json", **kw)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def bad(*args: str, process: bool = False, **kw) -> str:
    """Run expecting exit code 2 (in a real ``python -m sampledprv`` process if
    ``process``); returns stderr (which must not be a traceback)."""
    p = (run_process if process else run)(*args, **kw)
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    assert "Traceback" not in p.stderr
    assert p.stdout == ""
    return p.stderr


def table_rows(stdout: str, header_start: str) -> list[list[str]]:
    """Rows of the results table that follows the line starting with ``header_start``."""
    lines = stdout.splitlines()
    i = next(j for j, ln in enumerate(lines) if ln.strip().startswith(header_start))
    rows = []
    for ln in lines[i + 1:]:
        if not ln.strip():
            break
        rows.append(ln.split())
    return rows


# ---- help --------------------------------------------------------------------------------

COMMANDS = ["epsilon", "delta", "calibrate", "plan", "validate", "curve"]


def test_help_teaches():
    p = run_process("--help")                         # real process: python -m, exit 0
    assert p.returncode == 0
    for c in COMMANDS:
        assert c in p.stdout
    assert "examples:" in p.stdout and "subsampled-gaussian sigma=1 q=0.01" in p.stdout
    assert "exit codes" in p.stdout and "[[mechanism]]" in p.stdout


@pytest.mark.parametrize("command", COMMANDS)
def test_subcommand_help(command):
    p = run(command, "--help")
    assert p.returncode == 0, p.stderr
    assert "examples:" in p.stdout and f"sampledprv {command}" in p.stdout


def test_no_command_prints_the_help():
    p = run()
    assert p.returncode == 0 and "usage: sampledprv" in p.stdout and "COMMAND" in p.stdout
    assert p.stderr == ""


def test_console_script_installed():
    exe = shutil.which("sampledprv", path=os.path.dirname(sys.executable))
    if exe is None:
        pytest.skip("console script not installed next to this interpreter")
    p = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and sp.__version__ in p.stdout


# ---- epsilon / delta -------------------------------------------------------------------------

def test_epsilon_table_matches_library():
    # real process: python -m sampledprv computes and exits 0
    p = run_process("epsilon", "--delta", "1e-5", "1e-6", "--mechanism", DPSGD, "--count", "1000")
    assert p.returncode == 0, p.stderr
    rows = table_rows(p.stdout, "delta")
    assert [r[0] for r in rows] == ["1e-05", "1e-06"]
    acc = sp.Accountant().compose(sp.PoissonSubsampled(sp.Gaussian(1.0), 0.01), 1000)
    for r, d in zip(rows, (1e-5, 1e-6)):
        lo, est, up = map(float, r[1:])
        iv = acc.epsilon(delta=d)
        assert lo <= est <= up
        assert lo == pytest.approx(iv.lower, abs=1e-3) and up == pytest.approx(iv.upper, abs=1e-3)
    assert "certified: deterministic" in p.stdout
    assert "1,000 x subsampled-gaussian sigma=1 q=0.01" in p.stdout


def test_epsilon_json_heterogeneous():
    out = ok_json("epsilon", "--delta", "1e-5", "-m", DPSGD, "-c", "1000",
                  "-m", "laplace scale=20", "-c", "10", "-m", "gg beta=1.5 sigma=5", "-c", "3",
                  "-m", "randomized-response p=0.6", "-m", "pure-dp epsilon=0.01",
                  "-m", "approx-dp epsilon=0.01 delta=1e-9", "-m", "ggnmax beta=2 scale=50",
                  "-c", "1", "-c", "1", "-c", "2", "-c", "1")
    assert out["command"] == "epsilon" and out["accountant"]["type"] == "analytic"
    assert [m["count"] for m in out["composition"]] == [1000, 10, 3, 1, 1, 2, 1]
    (res,) = out["results"]
    assert res["delta"] == 1e-5 and res["certification"] == "deterministic"
    assert res["confidence"] == 1.0
    assert res["lower"] <= res["estimate"] <= res["upper"]
    acc = sp.Accountant()
    acc.compose(sp.PoissonSubsampled(sp.Gaussian(1.0), 0.01), 1000)
    acc.compose(sp.Laplace(20.0), 10)
    acc.compose(sp.GeneralizedGaussian.from_noise_multiplier(1.5, 5.0), 3)
    acc.compose(sp.RandomizedResponse(0.6), 1).compose(sp.PureDP(0.01), 1)
    acc.compose(sp.ApproxDP(0.01, 1e-9), 2).compose(sp.GGNMax(2.0, 50.0), 1)
    iv = acc.epsilon(delta=1e-5)
    assert res["upper"] == pytest.approx(iv.upper, rel=1e-9)
    assert res["lower"] == pytest.approx(iv.lower, rel=1e-9)


def test_eps_error_flag_narrows_interval():
    wide = ok_json("epsilon", "--delta", "1e-5", "-m", DPSGD, "-c", "100", "--eps-error", "0.05")
    narrow = ok_json("epsilon", "--delta", "1e-5", "-m", DPSGD, "-c", "100",
                     "--eps-error", "0.005", "--delta-error", "1e-11")
    w = lambda o: o["results"][0]["upper"] - o["results"][0]["lower"]  # noqa: E731
    assert w(narrow) < w(wide)
    assert narrow["accountant"]["eps_error"] == 0.005
    assert narrow["accountant"]["delta_error"] == 1e-11


def test_delta_json_and_table():
    out = ok_json("delta", "--epsilon", "1", "2", "-m", DPSGD, "-c", "1000")
    r1, r2 = out["results"]
    assert r1["epsilon"] == 1.0 and r2["epsilon"] == 2.0
    assert r1["lower"] <= r1["estimate"] <= r1["upper"]
    assert r2["upper"] < r1["lower"]          # delta decreases in epsilon
    p = run("delta", "--epsilon", "2", "-m", DPSGD, "-c", "1000")
    assert p.returncode == 0
    (row,) = table_rows(p.stdout, "epsilon")
    assert float(row[1]) <= float(row[2]) <= float(row[3])
    assert float(row[3]) == pytest.approx(r2["upper"], rel=1e-2)


@pytest.mark.parametrize("args, needle", [
    (["epsilon", "--delta", "1e-5", "-m", "subsampled-gausian sigma=1 q=0.01"],
     "unknown mechanism kind"),
    (["epsilon", "--delta", "1e-5", "-m", "gaussian sigma=-1"], "sigma must be"),
    (["epsilon", "--delta", "1e-5", "-m", "gaussian sigma=1 q=0.01"], "subsampled-gaussian"),
    (["epsilon", "--delta", "1e-5", "-m", "subsampled-gaussian sigma=1"], "needs the sampling"),
    (["epsilon", "--delta", "1e-5", "-m", "gaussian"], "gaussian needs sigma"),
    (["epsilon", "--delta", "1e-5", "-m", "gaussian sigma=abc"], "not a number"),
    (["epsilon", "--delta", "1e-5", "-m", "gaussian sigma=1 beta=2"], "unknown parameter"),
    (["epsilon", "--delta", "1e-5", "-m", "gaussian sigma=?"], "only meaningful for"),
    (["epsilon", "--delta", "1e-5", "-m", "gg beta=0.5 scale=1"], "beta must be"),
    (["epsilon", "--delta", "1e-5", "-m", "gg beta=2 scale=1 sigma=1"], "only one of"),
    (["epsilon", "--delta", "1e-5", "-m", "subsampled-gaussian sigma=1 q=1.5"], "q must lie"),
    (["epsilon", "--delta", "2", "-m", "gaussian sigma=1"], "delta must lie"),
    (["epsilon", "--delta", "1e-5"], "no mechanism given"),
    (["epsilon", "-m", "gaussian sigma=1"], "give --delta"),
    (["epsilon", "--delta", "1e-5", "-m", "gaussian sigma=1", "-m", "laplace scale=1",
      "-c", "3"], "one --count per --mechanism"),
    (["epsilon", "--delta", "1e-5", "-m", "gaussian sigma=1", "-c", "0"], "--count"),
    (["epsilon", "--delta", "1e-5", "-m", "gaussian sigma=1", "-c", "x"], "integer"),
    (["epsilon", "--delta", "x", "-m", "gaussian sigma=1"], "not a number"),
    (["epsilon", "--delta", "1e-5", "-m", "gaussian sigma=1", "--n-samples", "10"],
     "--accountant sampled"),
    (["epsilon", "--delta", "1e-5", "-m", "gaussian sigma=1", "--accountant", "sampled"],
     "--n-samples"),
    (["epsilon", "--delta", "1e-5", "-m", "gaussian sigma=1", "--accountant", "sampled",
      "--n-samples", "1000", "--eps-error", "0.1"], "only used by the analytic"),
    (["epsilon", "--delta", "1e-5", "-m", "gaussian sigma=1", "--eps-error", "2"],
     "eps_error must lie"),
    (["delta", "--epsilon", "-1", "-m", "gaussian sigma=1"], "epsilon must be"),
    (["delta", "-m", "gaussian sigma=1"], "give --epsilon"),
])
def test_bad_input_exits_2_with_the_fix(args, needle):
    err = bad(*args)
    assert needle in err, err
    assert any(ln.startswith(("sampledprv", "usage:")) for ln in err.splitlines())


# ---- configuration files ------------------------------------------------------------------------

TOML = """\
accountant = "analytic"
eps_error = 0.02
delta = [1e-5, 1e-6]

[[mechanism]]
spec = "subsampled-gaussian sigma=1 q=0.01"
count = 1000

[[mechanism]]
kind = "laplace"
scale = 20
count = 10
"""


def test_config_toml_and_json_agree(tmp_path):
    (tmp_path / "job.toml").write_text(TOML)
    js = {"accountant": "analytic", "eps_error": 0.02, "delta": [1e-5, 1e-6],
          "mechanism": [{"spec": DPSGD, "count": 1000},
                        {"kind": "laplace", "scale": 20, "count": 10}]}
    (tmp_path / "job.json").write_text(json.dumps(js))
    a = ok_json("epsilon", "--config", "job.toml", cwd=tmp_path)
    b = ok_json("epsilon", "--config", "job.json", cwd=tmp_path)
    assert [r["delta"] for r in a["results"]] == [1e-5, 1e-6]
    assert a["results"] == b["results"]
    assert a["accountant"]["eps_error"] == 0.02
    # flags override the file; --mechanism adds to its list
    c = ok_json("epsilon", "--config", "job.toml", "--delta", "1e-4", "-m", "gaussian sigma=50",
                cwd=tmp_path)
    assert [r["delta"] for r in c["results"]] == [1e-4] and len(c["composition"]) == 3


@pytest.mark.parametrize("name, content, needle", [
    ("job.toml", "acountant = 'analytic'\n", "unknown key"),
    ("job.toml", "[[mechanism]]\nspec = 'gaussian sigma=1'\ncount = -3\n", "count must be"),
    ("job.toml", "[[mechanism]]\ncount = 3\n", "needs spec"),
    ("job.toml", "[[mechanism]]\nspec = 'gaussian sigma=1'\nkind='x'\n", "either spec"),
    ("job.toml", "this is = = not toml\n", "not valid TOML"),
    ("job.json", "{not json", "not valid JSON"),
    ("job.json", "[1, 2]", "top level"),
    ("job.json", '{"accountant": "magic", "mechanism": ["gaussian sigma=1"]}', "accountant"),
    ("job.json", '{"mechanism": [{"spec": "gaussian sigma=0"}]}', "sigma"),
])
def test_bad_config_exits_2(tmp_path, name, content, needle):
    (tmp_path / name).write_text(content)
    err = bad("epsilon", "--delta", "1e-5", "--config", name, cwd=tmp_path)
    assert needle in err, err


def test_missing_config_exits_2(tmp_path):
    # real process: a usage error of ours exits 2
    assert "does not exist" in bad("epsilon", "--delta", "1e-5", "--config",
                                   str(tmp_path / "nope.toml"), process=True)


def test_sampled_config(tmp_path):
    (tmp_path / "job.toml").write_text(
        'accountant = "sampled"\nn_samples = 200_000\nalpha = 1e-6\nseed = 3\n'
        'delta = 1e-2\n[[mechanism]]\nspec = "subsampled-gaussian sigma=1 q=0.1"\ncount = 10\n')
    out = ok_json("epsilon", "--config", "job.toml", "--no-progress", cwd=tmp_path)
    acc = out["accountant"]
    assert acc == {"type": "sampled", "n_samples": 200000, "alpha": 1e-6, "certify": "envelope",
                   "bins": acc["bins"], "seed": 3,
                   "neighbouring": "add_remove"}
    (res,) = out["results"]
    assert res["certification"] == "probabilistic"
    assert res["confidence"] == pytest.approx(1 - 1e-6)
    true = sp.Accountant().compose(sp.PoissonSubsampled(sp.Gaussian(1.0), 0.1), 10)
    iv = true.epsilon(delta=1e-2)
    assert res["lower"] <= iv.upper and iv.lower <= res["upper"]
    assert res["lower"] <= res["estimate"] <= res["upper"] < math.inf


# ---- calibrate -------------------------------------------------------------------------------

def test_calibrate_gg_scale():
    out = ok_json("calibrate", "--epsilon", "2", "--delta", "1e-5",
                  "-m", "subsampled-gg beta=1.5 q=0.01", "-c", "300")
    assert out["parameter"] == "scale"
    assert out["noise_multiplier"] == pytest.approx(out["value"] / math.sqrt(2))
    iv = out["interval"]
    assert iv["upper"] <= 2.0 and iv["upper"] > 2.0 * 0.97
    assert out["mechanism"].startswith("subsampled-gg beta=1.5 scale=")
    # the reported scale is what the library certifies
    m = sp.PoissonSubsampled(sp.GeneralizedGaussian(1.5, out["value"]), 0.01)
    assert sp.Accountant().compose(m, 300).epsilon(delta=1e-5).upper <= 2.0


def test_calibrate_table_sigma_and_budget_rest():
    p = run("calibrate", "--epsilon", "2", "--delta", "1e-5", "-m", "laplace scale=20",
            "-c", "10", "-m", "subsampled-gaussian sigma=? q=0.01", "-c", "300")
    assert p.returncode == 0, p.stderr
    first = p.stdout.splitlines()[0]
    assert first.startswith("calibrated sigma = ")
    sigma = float(first.split("=")[1].split()[0])
    acc = sp.Accountant().compose(sp.Laplace(20.0), 10)
    acc.compose(sp.PoissonSubsampled(sp.Gaussian(sigma * 1.0001), 0.01), 300)
    assert acc.epsilon(delta=1e-5).upper <= 2.0
    assert "with the fixed part of the composition" in p.stdout


@pytest.mark.parametrize("args, needle", [
    (["-m", "gaussian sigma=1"], "exactly one --mechanism"),
    (["-m", "gaussian", "-m", "laplace"], "found 2"),
    (["-m", "pure-dp epsilon=?"], "calibrate can solve for nothing"),
    (["-m", "subsampled-gaussian sigma=1 q=?"], "not a number"),
])
def test_calibrate_bad_input(args, needle):
    err = bad("calibrate", "--epsilon", "1", "--delta", "1e-5", *args)
    assert needle in err, err


def test_calibrate_unreachable_target_exits_2():
    err = bad("calibrate", "--epsilon", "1", "--delta", "1e-5", "-m", "laplace scale=1",
              "-c", "100", "-m", "gaussian", "-c", "1")
    assert "unreachable" in err


def test_calibrate_requires_target():
    err = bad("calibrate", "-m", "gaussian", process=True)   # real process: exits 2
    assert "--epsilon" in err


# ---- plan ------------------------------------------------------------------------------------

def test_plan_floor_matches_library():
    # built-in specs bound their unseen tail by their Renyi divergences: no floor
    out = ok_json("plan", "--delta", "1e-5", "-m", DPSGD, "-c", "1000")
    # the bins are the sampled accountant's own default for k = 1000 (bins="auto")
    from sampledprv.sampled.certification.twolevel import bins_for
    assert out["bins"] == bins_for(1000) == 2**17
    n = sp.min_samples(1000, 1e-5, alpha=1e-9, bins=2**17, histograms=2)
    assert out["n_min"] == 1 and out["histograms"] == 2 and out["tail_bounds"][0]
    assert out["n_min_without_tail_bounds"] == n
    # approx-DP has no Renyi bound: its compositions set the floor
    out2 = ok_json("plan", "--delta", "1e-5", "-m", "approx-dp epsilon=0.5 delta=1e-9",
                   "-c", "10", "--alpha", "1e-3", "--bins", "1024")
    n2 = sp.min_samples(10, 1e-5, alpha=1e-3, bins=1024, histograms=1)
    assert out2["n_min"] == n2 and out2["total_draws_min"] == n2
    p = run("plan", "--delta", "1e-5", "-m", DPSGD, "-c", "1000")
    assert p.returncode == 0
    assert "no sample floor" in p.stdout and f"{n:,}" in p.stdout


def test_plan_target_width():
    out = ok_json("plan", "--delta", "1e-2", "-m", "subsampled-gaussian sigma=1 q=0.1",
                  "-c", "10", "--target-width", "0.05", "--pilot-n", "1e5", "--alpha", "1e-6",
                  "--no-progress")
    assert out["pilot_n"] >= 100000 and out["n_target"] >= out["n_min"]
    assert out["pilot_width"] > 0


@pytest.mark.parametrize("args, needle", [
    (["-m", DPSGD], "give --delta"),
    (["--delta", "1e-5", "1e-6", "-m", DPSGD], "one --delta"),
    (["--delta", "1e-5", "-m", DPSGD, "-m", "laplace scale=1", "--target-width", "0.1"],
     "single --mechanism"),
    (["--delta", "1e-5", "-m", DPSGD, "--target-width", "-1"], "target-width"),
    (["--delta", "0", "-m", DPSGD], "delta must lie"),
])
def test_plan_bad_input(args, needle):
    assert needle in bad("plan", *args)


# ---- validate ---------------------------------------------------------------------------------

def test_validate_pass_and_fail_exit_codes():
    out = ok_json("validate", "-m", "subsampled-laplace scale=1 q=0.2", "--n-samples", "3e4",
                  "--no-progress")
    assert out["passed"] is True and set(out["per_direction"]) == {"remove", "add"}
    assert 0 <= out["pvalue"] <= 1 and out["n_samples"] == 30000
    # a level no honest p-value can meet: the check reports FAIL and exits 1 (real process)
    p = run_process("validate", "-m", "subsampled-laplace scale=1 q=0.2", "--n-samples", "3e4",
            "--level", "0.999999", "--no-progress")
    assert p.returncode == 1, p.stderr
    assert "FAIL" in p.stdout and "reject" in p.stderr


@pytest.mark.parametrize("args, needle", [
    (["-m", "gaussian sigma=1", "-m", "laplace scale=1"], "exactly one --mechanism"),
    (["-m", "gaussian sigma=1", "--level", "2"], "--level"),
    (["-m", "gaussian sigma=1", "--n-samples", "0"], "n_samples"),
    (["-m", "ggnmax beta=2"], "ggnmax needs"),
])
def test_validate_bad_input(args, needle):
    assert needle in bad("validate", *args)


def test_validate_requires_mechanism():
    assert "--mechanism" in bad("validate")


# ---- curve ------------------------------------------------------------------------------------

def test_curve_csv_stdout():
    p = run("curve", "-m", DPSGD, "-c", "1000", "--eps-max", "3", "--points", "7")
    assert p.returncode == 0, p.stderr
    rows = list(csv.DictReader(io.StringIO(p.stdout)))
    assert [float(r["epsilon"]) for r in rows] == pytest.approx([0, .5, 1, 1.5, 2, 2.5, 3])
    for r in rows:
        assert float(r["delta_lower"]) <= float(r["delta_estimate"]) <= float(r["delta_upper"])
    ups = [float(r["delta_upper"]) for r in rows]
    assert all(a > b for a, b in zip(ups, ups[1:]))


def test_curve_json_file_and_plot(tmp_path):
    p = run("curve", "-m", "gg beta=1.5 sigma=3", "-c", "20", "--epsilons", "0.5", "1", "2",
            "--output", "c.json", "--plot", "c.png", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    data = json.loads((tmp_path / "c.json").read_text())
    assert data["epsilon"] == [0.5, 1.0, 2.0] and data["certification"] == "deterministic"
    assert all(lo <= up for lo, up in zip(data["delta_lower"], data["delta_upper"]))
    assert (tmp_path / "c.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "wrote plot" in p.stderr


def test_curve_json_stdout():
    out = ok_json("curve", "-m", "laplace scale=2", "--epsilons", "0", "0.25", "0.6")
    assert out["delta_upper"][-1] == pytest.approx(0.0, abs=1e-9)   # Laplace is 0.5-DP
    assert out["delta_lower"][0] > 0.2


@pytest.mark.parametrize("args, needle", [
    (["--eps-min", "3", "--eps-max", "1"], "--eps-min"),
    (["--points", "1"], "--points"),
    (["--epsilons", "-1", "2"], ">= 0"),
])
def test_curve_bad_input(args, needle):
    assert needle in bad("curve", "-m", "gaussian sigma=1", *args)


# ---- internal errors and Ctrl-C ----------------------------------------------------------------

def test_internal_error_exits_1(monkeypatch):
    def boom(args):
        raise RuntimeError("simulated failure")

    monkeypatch.setattr(sampledprv.cli, "cmd_epsilon", boom)
    p = run("epsilon", "--delta", "1e-5", "-m", "gaussian sigma=1")
    assert p.returncode == 1
    assert "internal error: RuntimeError: simulated failure" in p.stderr
    assert "--debug" in p.stderr and "Traceback" not in p.stderr


@pytest.mark.skipif(os.name != "posix", reason="SIGINT delivery is POSIX-specific")
def test_ctrl_c_stops_cleanly_with_130():
    # compile (and cache) the sampling kernels first: on a fresh clone the first call
    # spends its time in LLVM, which does not look at signals until it returns
    # (in this process: the kernels go to the same NUMBA_CACHE_DIR the child reads)
    warm = run("epsilon", "--delta", "1e-2", "-m", "gaussian sigma=1", "-c", "10",
               "--accountant", "sampled", "--n-samples", "1e5", "--no-progress")
    assert warm.returncode == 0, warm.stderr
    # Ctrl-C as a terminal delivers it: SIGINT at its default disposition in the child even
    # when the suite itself was started with SIGINT ignored (a background job, nohup), where
    # Python would install no KeyboardInterrupt handler and the signal would be lost
    proc = subprocess.Popen(
        [sys.executable, "-m", "sampledprv", "epsilon", "--delta", "1e-5", "-m", "gaussian "
         "sigma=1", "-c", "10", "--accountant", "sampled", "--n-samples", "1e11",
         "--progress"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    seen: list[str] = []

    def reader() -> None:
        assert proc.stderr is not None
        while True:
            ch = proc.stderr.read(1)
            if not ch:
                break
            seen.append(ch)

    t = threading.Thread(target=reader, daemon=True)
    t.start()
    try:
        deadline = time.time() + TIMEOUT
        while time.time() < deadline and "draw" not in "".join(seen) and proc.poll() is None:
            time.sleep(0.2)
        assert proc.poll() is None, "".join(seen)
        assert "draw" in "".join(seen)        # a progress bar with counts (and ETA) appeared
        time.sleep(1.0)                       # let the kernel run a few chunks
        proc.send_signal(signal.SIGINT)
        rc = proc.wait(timeout=120)
    finally:
        # a failed check must not leave 1e11 draws running on both cores for half an hour
        # (a loaded run of the suite did: the rest of the suite then crawled)
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=60)
    t.join(timeout=10)
    err = "".join(seen)
    assert rc == 130, err
    assert "interrupted" in err and "Traceback" not in err
