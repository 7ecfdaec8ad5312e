"""The ``tradeoff`` and ``audit`` subcommands (in-process through ``cli.main``)."""

import json

import numpy as np
import pytest
from scipy.stats import norm

from sampledprv import cli


def run_json(capsys, *args, rc=0):
    got = cli.main([*args, "--json"])
    out = capsys.readouterr().out
    assert got == rc
    return json.loads(out)


def test_tradeoff_json(capsys):
    data = run_json(capsys, "tradeoff", "-m", "gaussian sigma=1", "--fpr", "1e-3", "1e-2",
                    "1e-1", "--gdp")
    assert data["command"] == "tradeoff"
    for row in data["results"]:
        exact = norm.cdf(norm.ppf(row["fpr"]) + 1.0)
        assert row["lower"] <= exact <= row["upper"]
        assert set(row["details"]["per_direction"]) == {"remove", "add"}
    assert data["gdp_mu"]["lower"] <= 1.0 <= data["gdp_mu"]["upper"]


def test_tradeoff_bad_fpr_exits_2(capsys):
    assert cli.main(["tradeoff", "-m", "gaussian sigma=1", "--fpr", "2"]) == 2
    assert "--fpr" in capsys.readouterr().err


def test_audit_two_columns_and_json(tmp_path, capsys):
    rng = np.random.default_rng(0)
    f = tmp_path / "scores.txt"
    lines = [f"{x} 1" for x in rng.normal(2.0, 1.0, 500)] + \
            [f"{x} 0" for x in rng.normal(0.0, 1.0, 500)]
    f.write_text("\n".join(lines) + "\n")
    # a failed audit exits 1 (issue 32), its JSON still on stdout
    data = run_json(capsys, "audit", "--scores", str(f), "-m", "gaussian sigma=1", rc=1)
    assert data["consistent"] is False
    assert data["verdict"] == "the implementation leaks more than accounted"
    assert data["epsilon_lower"] > 0 and len(data["points"]) > 5
    g = tmp_path / "scores.json"
    g.write_text(json.dumps({"in": list(rng.normal(1.0, 1.0, 500)),
                             "out": list(rng.normal(0.0, 1.0, 500))}))
    data = run_json(capsys, "audit", "--scores", str(g), "-m", "gaussian sigma=1")
    assert data["consistent"] is True and data["verdict"] == "consistent"
    data = run_json(capsys, "audit", "--scores", str(g))
    assert data["verdict"].startswith("no accountant")


def test_audit_missing_file_exits_2(tmp_path, capsys):
    assert cli.main(["audit", "--scores", str(tmp_path / "nope.txt")]) == 2
    assert "nope.txt" in capsys.readouterr().err


def test_audit_plot(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    rng = np.random.default_rng(1)
    g = tmp_path / "scores.json"
    g.write_text(json.dumps({"in": list(rng.normal(1.0, 1.0, 300)),
                             "out": list(rng.normal(0.0, 1.0, 300))}))
    png = tmp_path / "a.png"
    assert cli.main(["audit", "--scores", str(g), "-m", "gaussian sigma=1", "--plot",
                     str(png)]) == 0
    assert png.stat().st_size > 1000


@pytest.mark.parametrize("command", ["tradeoff", "audit"])
def test_subcommand_help(command, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main([command, "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "examples:" in out and f"sampledprv {command}" in out
