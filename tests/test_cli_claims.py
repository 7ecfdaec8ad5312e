"""The check-claim subcommand: exit codes, the claim file formats, JSON output."""

from __future__ import annotations

import json
import math

from cli_inprocess import run

PF = ("finite-pair p=0.5:0.5 q={}:{}".format(repr(1 - math.exp(-2) / 2), repr(math.exp(-2) / 2)))


def test_permute_and_flip_refuted_exit_1():
    r = run("check-claim", "-m", PF, "--zcdp", "0.5", "--orders", "2", "3", "--epsilon", "2",
            "--json")
    assert r.returncode == 1, r.stderr
    out = json.loads(r.stdout)
    assert out["verdict"] == "refuted" and out["certification"] == "exact"
    pts = {p["order"]: p for p in out["points"] if p["quantity"] == "renyi"}
    assert abs(pts[2.0]["lower"] - 1.3769187395948) < 1e-9
    assert pts[3.0]["verdict"] == "refuted"
    dp = [p for p in out["points"] if p["quantity"] == "delta"][0]
    assert dp["verdict"] == "consistent"


def test_rdp_file_text_and_json(tmp_path):
    txt = tmp_path / "claim.txt"
    txt.write_text("# order epsilon\n2 1.0\n3, 1.5\n")
    r = run("check-claim", "-m", "gaussian sigma=1", "--rdp-file", str(txt))
    assert r.returncode == 0, r.stderr
    assert "verdict: consistent" in r.stdout
    js = tmp_path / "claim.json"
    js.write_text(json.dumps({"2": 0.7, "3": 1.05}))
    r = run("check-claim", "-m", "gaussian sigma=1", "--rdp-file", str(js))
    assert r.returncode == 1 and "verdict: refuted" in r.stdout


def test_sampled_method():
    r = run("check-claim", "-m", "gaussian sigma=1", "--zcdp", "0.35", "--orders", "2",
            "--method", "sampled", "--n-samples", "1e5", "--json")
    assert r.returncode == 1, r.stderr
    out = json.loads(r.stdout)
    assert out["certification"] == "sampled" and out["n_samples"] == 100000


def test_bad_input_exit_2(tmp_path):
    r = run("check-claim", "-m", "gaussian sigma=1")
    assert r.returncode == 2 and "no claim given" in r.stderr
    bad = tmp_path / "bad.txt"
    bad.write_text("2 1 3\n")
    r = run("check-claim", "-m", "gaussian sigma=1", "--rdp-file", str(bad))
    assert r.returncode == 2 and "line 1" in r.stderr
    r = run("check-claim", "-m", "gaussian sigma=1", "--rdp-file", str(tmp_path / "nope"))
    assert r.returncode == 2 and "--rdp-file" in r.stderr
    r = run("check-claim", "-m", "gaussian sigma=1", "--zcdp", "0.5", "--orders", "1")
    assert r.returncode == 2 and "orders" in r.stderr


def test_group_command():
    r = run("group", "-m", "subsampled-gaussian sigma=2 q=0.01", "-c", "100", "--size", "1",
            "2", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    (one, two) = out["results"]
    assert one["size"] == 1 and "itself" in one["method"]
    assert "exact: mixture of Gaussians" in two["method"]
    assert one["upper"] < two["lower"]
    r = run("group", "-m", "subsampled-laplace scale=2 q=0.05", "-c", "10", "--size", "3")
    assert r.returncode == 2 and "--from-curve" in r.stderr
    r = run("group", "-m", "subsampled-laplace scale=2 q=0.05", "-c", "10", "--size", "3",
            "--from-curve", "--json")
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)["results"][0]
    assert res["lower"] is None and res["method"].startswith("bound: group privacy")
    r = run("group", "-m", "gaussian sigma=1", "--size", "0")
    assert r.returncode == 2 and "--size" in r.stderr
