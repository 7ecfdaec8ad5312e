"""First use (issue 32, section 3, the Python and documentation bullets done here): an
Interval refuses float() and comparisons with a hint to use its ends, prints a short
method, TradeoffCurve has a one-line repr, and the CLI docs list every subcommand."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import sampledprv as sp
from sampledprv.core.interval import SHORT_METHOD, Interval

ROOT = Path(__file__).resolve().parents[1]


def _iv(method="m"):
    return Interval(1.0, 1.5, 2.0, "deterministic", 1.0, method)


@pytest.mark.parametrize("op", [lambda iv: float(iv), lambda iv: iv < 3.0,
                                lambda iv: 3.0 > iv, lambda iv: iv >= 1.0])
def test_interval_as_a_number_says_use_upper(op):
    with pytest.raises(TypeError, match=r"use iv\.upper"):
        op(_iv())


def test_interval_str_is_short_and_method_is_whole():
    long = "word " * 200
    iv = _iv(long)
    assert len(str(iv)) < SHORT_METHOD + 120 and "full text in .method" in str(iv)
    assert iv.method == long
    assert _iv("short method").__str__().endswith("(short method))")


def test_tradeoff_curve_repr_is_one_short_line():
    curve = sp.Accountant().compose(sp.Gaussian(1.0)).tradeoff_curve(points=51)
    r = repr(curve)
    assert "\n" not in r and len(r) < 250 and "TradeoffCurve(53 fprs" in r


def test_cli_docs_and_readme_list_every_subcommand():
    from sampledprv.cli.parser import build_parser  # noqa: PLC0415
    sub = next(a for a in build_parser()._actions if a.__class__.__name__ ==
               "_SubParsersAction")
    names = set(sub.choices)
    cli_md = (ROOT / "docs" / "cli.md").read_text()
    table = set(re.findall(r"^\| `([a-z-]+)", cli_md.split("## Mechanism strings")[0], re.M))
    assert names <= table, names - table
    readme = (ROOT / "README.md").read_text()
    listed = re.search(r"lists every subcommand: (.*?)\)", readme, re.S).group(1)
    assert names <= set(re.findall(r"`([a-z-]+)`", listed)), names


# ---- command-line hints ------------------------------------------------------------------
from cli_inprocess import run  # noqa: E402


@pytest.mark.parametrize("argv, expect", [
    (("epsilon", "--epsilon", "1", "-m", "gaussian sigma=1"), "did you mean --delta?"),
    (("epsilon", "--delta", "1e-5", "-m", "gaussian", "sigma=1"),
     'quote it, e.g. -m "gaussian sigma=1"'),
    (("epsilon", "--delta", "1e-5", "-m", "subsampled-gaussian sigma=1 sample_rate=0.01"),
     "did you mean 'q'?"),
    (("epsilon", "--delta", "1e-5", "-m", "balls-and-bins sigma=1 steps=10"),
     "add --accountant sampled"),
    (("curve", "-m", "gaussian sigma=1", "--plot", "out.txt"), "not an image format"),
])
def test_cli_hints(argv, expect, tmp_path):
    p = run(*argv, cwd=tmp_path)
    assert p.returncode == 2
    assert expect in p.stderr, p.stderr
    assert p.stdout == ""          # refused before anything is computed or printed


def test_kind_typo_gives_the_suggestion_not_the_list():
    p = run("epsilon", "--delta", "1e-5", "-m", "gausian sigma=1")
    assert p.returncode == 2 and "did you mean 'gaussian'?" in p.stderr
    assert "known kinds" not in p.stderr and len(p.stderr.splitlines()) == 1


def test_accountant_accepts_neighboring_spelling():
    a = sp.Accountant(neighboring="substitute").compose(sp.Gaussian(1.0))
    b = sp.Accountant(neighbouring="substitute").compose(sp.Gaussian(1.0))
    assert a.neighbouring == b.neighbouring and a.epsilon(1e-5) == b.epsilon(1e-5)
    with pytest.raises(ValueError, match="not both"):
        sp.Accountant(neighbouring="substitute", neighboring="add_remove")


# ---- Opacus' and dp-accounting's spelling of the Gaussian's noise ---------------------------

def test_gaussian_takes_noise_multiplier():
    """``noise_multiplier`` is sigma / sensitivity (Opacus' clipping-norm units)."""
    assert sp.Gaussian(noise_multiplier=1.5) == sp.Gaussian(1.5)
    assert sp.Gaussian(noise_multiplier=0.5, sensitivity=2.0) == sp.Gaussian(1.0, 2.0)
    with pytest.raises(ValueError, match="not both"):
        sp.Gaussian(1.0, noise_multiplier=1.0)
    with pytest.raises(ValueError, match="noise_multiplier"):
        sp.Gaussian()
    with pytest.raises(ValueError, match="noise_multiplier"):
        sp.Gaussian(noise_multiplier=-1.0)
    acc = sp.Accountant().compose(sp.Gaussian(noise_multiplier=2.0), 4)
    assert acc.epsilon(1e-5).upper == sp.Accountant().compose(sp.Gaussian(2.0), 4).epsilon(
        1e-5).upper
