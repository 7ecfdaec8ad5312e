"""What the command line says: advice in flags, JSON-safe infinities, one number format per
column, explained p-values, a help text whose examples work, and public names only."""

from __future__ import annotations

import json
import math
import re
import shlex
import warnings
from pathlib import Path

import numpy as np
import pytest

import sampledprv as sp
from sampledprv.core.advice import AdvisedError, flag_wording
from sampledprv.cli import main
from sampledprv.cli.errors import SETTING_FLAGS, error_message
from sampledprv.cli.output import format_triplets, jsonable

ROOT = Path(__file__).resolve().parents[1]


def cli(capsys, *args: str) -> tuple[int, str, str]:
    rc = main(list(args))
    out, err = capsys.readouterr()
    return rc, out, err


# ---- advice in the caller's vocabulary -----------------------------------------------------

def test_calibrate_names_the_real_limit_and_the_flag(capsys):
    rc, out, err = cli(capsys, "calibrate", "--epsilon", "0.005", "--delta", "1e-5", "-m",
                       "laplace", "-c", "1")
    assert rc == 2 and out == ""
    assert "eps_error = 0.01" in err and "--eps-error" in err
    assert "unreachable" not in err and "bracket" not in err and "Accountant(" not in err
    # following the advice works
    value = re.search(r"--eps-error ([0-9.e-]+)", err).group(1)
    rc, out, err = cli(capsys, "calibrate", "--epsilon", "0.005", "--delta", "1e-5", "-m",
                       "laplace", "-c", "1", "--eps-error", value, "--json")
    assert rc == 0, err
    assert json.loads(out)["interval"]["upper"] <= 0.005


def test_accountant_errors_suggest_flags(capsys):
    rc, _, err = cli(capsys, "epsilon", "--delta", "1e-12", "-m", "gaussian sigma=1")
    assert rc == 2 and "--delta-error 1e-14" in err and "Accountant(" not in err
    rc, _, err = cli(capsys, "epsilon", "--delta", "1e-5", "-m", "gaussian sigma=1", "-c", "10",
                     "--max-grid-size", "1000")
    assert rc == 2 and "--max-grid-size" in err and "--eps-error" in err
    assert "max_grid_size=1,000" in err and "raise max_grid_size" not in err
    with pytest.raises(ValueError, match=r"Accountant\(delta_error=1e-14\)"):   # Python wording
        sp.Accountant().compose(sp.Gaussian(1.0)).epsilon(1e-12)


def test_unreachable_target_wording():
    with pytest.raises(AdvisedError) as info:
        sp.calibrate(lambda x: sp.Laplace(1.0), count=1, epsilon=0.1, delta=1e-5)
    exc = info.value
    assert "unreachable" in str(exc) and "bracket" in str(exc)      # Python: bracket= exists
    cli_text = error_message(exc)
    assert "bracket" not in cli_text and "--epsilon" in cli_text and "--count" in cli_text
    assert exc.render(flag_wording({})) == exc.problem              # nothing to act on


def test_max_evaluations_is_a_value_error_not_a_crash():
    with pytest.raises(AdvisedError, match="max_evaluations=2"):
        sp.calibrate(lambda s: sp.Laplace(s), count=1, epsilon=0.5, delta=1e-5,
                     max_evaluations=2)


# ---- JSON: infinities encoded the same documented way everywhere -----------------------------

def test_jsonable_encodes_non_finite_values_with_a_flag():
    got = jsonable({"lower": 1.0, "upper": math.inf, "low": -math.inf, "x": np.float64("nan"),
                    "arr": np.array([0.5, np.inf]), "nested": {"u": (math.inf, 2.0)}})
    assert got == {"lower": 1.0, "upper": None, "upper_nonfinite": "+inf", "low": None,
                   "low_nonfinite": "-inf", "x": None, "x_nonfinite": "nan",
                   "arr": [0.5, None], "arr_nonfinite": {"1": "+inf"},
                   "nested": {"u": [None, 2.0], "u_nonfinite": {"0": "+inf"}}}
    json.dumps(got, allow_nan=False)
    doc = (ROOT / "docs" / "cli.md").read_text()
    assert "_nonfinite" in doc and '"+inf"' in doc


def test_infinite_upper_in_cli_json(capsys):
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        rc, out, err = cli(capsys, "epsilon", "--delta", "1e-9", "-m", "approx-dp epsilon=1 delta=1e-12",
                           "-c", "10", "--accountant", "sampled", "--n-samples", "5000",
                           "--json", "--no-progress")
    assert rc == 0, err
    # the too-few-samples warning is worded with flags on the command line
    assert "warning: n_samples=5,000 cannot give a finite upper bound" in err
    assert "use --n-samples " in err and "SampledAccountant(" not in err

    def strict(c):
        raise AssertionError(f"non-standard JSON constant {c}")
    res = json.loads(out, parse_constant=strict)["results"][0]
    assert res["upper"] is None and res["upper_nonfinite"] == "+inf"
    assert math.isfinite(res["lower"]) and "lower_nonfinite" not in res


# ---- tables, CSV and validate -----------------------------------------------------------------

def test_one_number_format_per_column():
    rows = format_triplets([[0.8177, 0.8185, 0.8193], [3.98e-7, 4.04e-7, 4.11e-7],
                            [0.0, 0.0, 3.4e-11], [0.5, 0.5, math.inf]])
    for col in zip(*rows):
        fin = [c for c in col if c != "inf"]
        styles = {("e" in c, len(c.split("e")[0].split(".")[1])) for c in fin}
        assert len(styles) == 1, col
    fixed = format_triplets([[0.5, 0.51, 0.52], [2.0, 2.1, 2.2]])
    assert all("e" not in c for r in fixed for c in r)


def test_delta_table_and_curve_csv(capsys):
    rc, out, _ = cli(capsys, "delta", "--epsilon", "1", "10", "20", "-m", "gaussian sigma=1",
                     "-c", "10")
    assert rc == 0
    lines = out.splitlines()
    i = next(j for j, ln in enumerate(lines) if ln.strip().startswith("epsilon"))
    table = [ln.split()[1:] for ln in lines[i + 1:i + 4]]
    for col in zip(*table):
        assert len({("e" in c, len(c.split("e")[0])) for c in col}) == 1, col
    rc, out, _ = cli(capsys, "curve", "-m", "gaussian sigma=1", "--eps-max", "1", "--points", "11")
    assert rc == 0
    eps = [ln.split(",")[0] for ln in out.splitlines()[1:]]
    assert eps == [repr(x / 10) for x in range(11)]       # 0.3, never 0.30000000000000004


def test_validate_explains_the_combined_p_value(capsys):
    rc, out, _ = cli(capsys, "validate", "-m", "subsampled-laplace scale=1 q=0.2",
                     "--n-samples", "2e4", "--no-progress")
    assert rc == 0
    assert "Bonferroni" in out and "combined p-value" in out and "2 x smallest" in out


# ---- the help's sampled example works with its own settings; the legend shows alpha ---------

def test_help_sampled_example_gives_a_finite_bound(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    text = capsys.readouterr().out.replace("\\\n", " ")
    cmds = [ln.strip() for ln in text.splitlines()
            if ln.strip().startswith("sampledprv epsilon") and "--accountant sampled" in ln]
    assert cmds, text
    for c in cmds:
        args = shlex.split(c)[1:]
        rc, out, err = cli(capsys, *args, "--json", "--no-progress")
        assert rc == 0, err
        for res in json.loads(out)["results"]:
            assert res["upper"] is not None and math.isfinite(res["upper"]), c


def test_plot_legend_shows_alpha():
    pytest.importorskip("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from sampledprv.plotting import CurveBand, plot_privacy_curve
    e = np.linspace(0, 1, 5)
    band = CurveBand(e, e * 0 + 1e-6, e * 0 + 2e-6, e * 0 + 3e-6, "probabilistic", 1 - 1e-9)
    ax = plot_privacy_curve(band)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    plt.close(ax.figure)
    assert any("prob. >= 1 - 1e-09" in t for t in labels), labels


# ---- one name per concept; public hooks; no private imports in the CLI ------------------------

def test_one_privacy_curve_class():
    hits = [p for p in (ROOT / "sampledprv").rglob("*.py")
            if re.search(r"^class PrivacyCurve\b", p.read_text(), re.M)]
    assert [p.relative_to(ROOT).as_posix() for p in hits] == ["sampledprv/engine/curve.py"]


def test_cli_imports_no_private_names():
    """The command line uses only public names of the modules it imports from."""
    bad = []
    for p in sorted((ROOT / "sampledprv" / "cli").glob("*.py")):
        text = re.sub(r"\\\n", " ", p.read_text())
        text = re.sub(r"\(([^)]*)\)", lambda m: m.group(0).replace("\n", " "), text)
        for m in re.finditer(r"^\s*from\s+(\S+)\s+import\s+(.+)$", text, re.M):
            names = [n.strip().split(" as ")[0] for n in m.group(2).strip("() ").split(",")]
            bad += [f"{p.name}: from {m.group(1)} import {n}" for n in names
                    if n.startswith("_") and n != "__version__"]
    assert not bad, bad


def test_extension_hooks_are_public_and_old_names_still_work():
    from sampledprv.sampled.histograms.kernels import loss_histogram

    def sample(rng, size):
        return rng.normal(0.5, 1.0, size)

    class New:
        def loss_sampler(self, direction):
            return sample

    class Old:
        def _loss_sampler(self, direction):
            return sample

    kw = dict(direction="remove", n=5000, lo=-5.0, h=0.1, bins=100, seed=1, progress=False)
    a = loss_histogram(New(), **kw)
    with pytest.warns(DeprecationWarning, match="loss_sampler"):
        b = loss_histogram(Old(), **kw)
    assert np.array_equal(a.counts, b.counts)
    pair = sp.PrivacyLossSampler(sample)
    assert callable(pair.loss_sampler("remove")) and callable(pair.numpy_loss_sampler("add"))
