"""The rough edges a new user meets first (issue 24, item 4): each behaviour pinned down."""

from __future__ import annotations

import os
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

import sampledprv as sp
from sampledprv.core.advice import AdvisedWarning

ROOT = Path(__file__).resolve().parents[1]


def _gauss_pair() -> sp.LogDensityPair:
    return sp.LogDensityPair(
        logp=lambda w: -0.5 * np.asarray(w) ** 2, logq=lambda w: -0.5 * (np.asarray(w) - 1.0) ** 2,
        sample_p=lambda rng, n: rng.normal(0.0, 1.0, n),
        sample_q=lambda rng, n: rng.normal(1.0, 1.0, n))


class _Shown(Exception):
    pass


def test_advised_warning_points_at_the_users_line(monkeypatch):
    """The sample-floor warning is attributed to this file, not to a library module."""
    seen = []

    def show(message, category, filename, lineno, file=None, line=None):
        seen.append((message, filename, lineno))
        raise _Shown        # stop before sampling: only the attribution matters here

    acc = sp.SampledAccountant(n_samples=1000, alpha=1e-6, progress=False)
    acc.compose(_gauss_pair(), count=50)
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        monkeypatch.setattr(warnings, "showwarning", show)
        with pytest.raises(_Shown):
            acc.epsilon(delta=1e-6)          # the user's line
    message, filename, _ = seen[0]
    assert isinstance(message, AdvisedWarning)
    assert os.path.abspath(filename) == os.path.abspath(__file__), filename


# ---- command line -------------------------------------------------------------------------

def _cli(capsys, *argv):
    from sampledprv.cli import main

    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_plan_header_and_bins_help_state_the_bins_used(capsys):
    from sampledprv.sampled.certification.twolevel import bins_for

    code, out, _ = _cli(capsys, "plan", "--delta", "1e-5", "-m",
                        "subsampled-gaussian sigma=1 q=0.01", "-c", "1000")
    assert code == 0
    assert bins_for(1000) == 131072
    assert "bins=131,072" in out.splitlines()[0]
    code, out, _ = _cli(capsys, "plan", "--delta", "1e-5", "-m", "gaussian sigma=1", "-c", "2",
                        "--bins", "4096")
    assert "bins=4,096)" in out.splitlines()[0]
    with pytest.raises(SystemExit):
        _cli(capsys, "epsilon", "--help")
    help_text = " ".join(capsys.readouterr().out.split())
    assert "histogram bins (default auto" in help_text and "(32768)" not in help_text


def test_no_arguments_prints_the_help(capsys):
    code, out, err = _cli(capsys)
    assert code == 0 and "usage: sampledprv" in out and "epsilon" in out and not err


@pytest.mark.parametrize("argv, flag", [
    (["epsilon", "--delta", "-1e-5", "-m", "gaussian sigma=1"], "--delta"),
    (["epsilon", "--delta", "1e-5", "-2.5e-6", "-m", "gaussian sigma=1"], "--delta"),
    (["delta", "--epsilon", "-1E0", "-m", "gaussian sigma=1"], "--epsilon"),
])
def test_negative_scientific_value_names_its_flag(capsys, argv, flag):
    code, _, err = _cli(capsys, *argv)
    assert code == 2
    assert f"error: {flag} -" in err and "positive" in err and "expected" not in err


def test_curve_checks_the_plot_path_before_computing(capsys, tmp_path, monkeypatch):
    import sampledprv.cli.commands_accounting as ca

    def boom(*a, **k):
        raise AssertionError("computed before checking the output paths")
    monkeypatch.setattr(ca, "composed", boom)
    out_csv = tmp_path / "curve.csv"
    code, _, err = _cli(capsys, "curve", "-m", "gaussian sigma=1", "--output", str(out_csv),
                        "--plot", "/nonexistent-dir-sampledprv/x.png")
    assert code == 2 and "--plot /nonexistent-dir-sampledprv/x.png" in err
    assert "does not exist" in err and not out_csv.exists()
    code, _, err = _cli(capsys, "curve", "-m", "gaussian sigma=1", "--output", str(tmp_path))
    assert code == 2 and "--output" in err and "is a directory" in err


@pytest.mark.parametrize("typed, expected", [
    ("subsampled-gausian", "subsampled-gaussian"), ("fixed-laplase", "fixed-laplace"),
    ("gausian", "gaussian"), ("subsampledgaussian", "subsampled-gaussian")])
def test_kind_suggestions_are_full_kind_names(typed, expected):
    from sampledprv.cli.errors import UsageError
    from sampledprv.cli.mechanism_strings import parse_mechanism

    with pytest.raises(UsageError) as exc:
        parse_mechanism(f"{typed} sigma=1 q=0.1")
    assert f"did you mean {expected!r}?" in str(exc.value)


def test_validate_refuses_too_few_samples_and_states_its_power(capsys):
    from sampledprv.sampled.histograms.validate import detectable_distance

    code, _, err = _cli(capsys, "validate", "-m", "gaussian sigma=1", "--n-samples", "10")
    assert code == 2 and "--n-samples 1000" in err and "0.58" in err
    with pytest.raises(ValueError, match="n_samples=1000"):
        sp.validate(sp.Gaussian(1.0), 10)
    # the detectable distance is the KS critical value: about 1.95 / sqrt(n) at 1e-3
    assert abs(detectable_distance(10**6) * 1000 - 1.95) < 0.01
    assert detectable_distance(10**4, directions=2) > detectable_distance(10**4)


def test_validation_report_says_pass_or_fail():
    from sampledprv.sampled.histograms.validate import ValidationReport

    good = ValidationReport(0.001, 0.5, 0.3, "remove", 10**6, {"remove": (0.001, 0.5, 0.3)})
    bad = ValidationReport(0.05, 1e-9, 0.3, "add", 10**6,
                           {"remove": (0.001, 0.5, 0.3), "add": (0.05, 1e-9, 0.3)})
    assert str(good).startswith("PASS") and "detects distances above 0.00195" in str(good)
    assert str(bad).startswith("FAIL")


def test_validate_without_reference_names_the_pair_briefly():
    pair = _gauss_pair()
    with pytest.raises(ValueError, match="reference=") as exc:
        sp.validate(pair, 1000)
    msg = str(exc.value)
    assert "LogDensityPair" in msg and "<function" not in msg and "lambda" not in msg


# ---- Python API messages ------------------------------------------------------------------

@pytest.mark.parametrize("make", [
    lambda: sp.Gaussian(np.float64(-0.788)),
    lambda: sp.Laplace(scale=np.float32(-2.0)),
    lambda: sp.PoissonSubsampled(sp.Gaussian(1.0), q=np.float64(1.5)),
    lambda: sp.Accountant(eps_error=np.float64(-1)),
    lambda: sp.Accountant().compose(sp.Gaussian(1.0)).epsilon(np.float64(-0.788)),
    lambda: sp.SampledAccountant(n_samples=np.float64(2.5)),
    lambda: sp.GeneralizedGaussian(beta=np.float64(0.5), scale=1.0),
])
def test_messages_print_plain_numbers(make):
    with pytest.raises(ValueError) as exc:
        make()
    assert "np." not in str(exc.value) and "float64(" not in str(exc.value), str(exc.value)


def test_integral_floats_are_accepted_as_counts():
    acc = sp.SampledAccountant(n_samples=1e6)
    assert acc.n_samples == 10**6 and type(acc.n_samples) is int
    a = sp.Accountant().compose(sp.Gaussian(20.0), count=1e3)
    b = sp.Accountant().compose(sp.Gaussian(20.0), count=1000)
    assert a.epsilon(1e-5) == b.epsilon(1e-5)
    for bad in (2.5, float("nan"), float("inf"), 1e300, -1e3, True):
        with pytest.raises(ValueError, match="count"):
            sp.Accountant().compose(sp.Gaussian(1.0), count=bad)


def _losses(pair):
    return sp.SampledAccountant(n_samples=2000, alpha=1e-3, progress=False).compose(pair, 1)


def test_swapped_sampler_arguments_name_the_signature():
    pair = sp.LogDensityPair(
        logp=lambda w: -0.5 * w ** 2, logq=lambda w: -0.5 * (w - 1.0) ** 2,
        sample_p=lambda n, rng: rng.normal(0.0, 1.0, n),       # swapped
        sample_q=lambda n, rng: rng.normal(1.0, 1.0, n))
    with pytest.raises(ValueError) as exc:
        _losses(pair).epsilon(1e-2)
    msg = str(exc.value)
    assert "sample_p" in msg and "sample(rng, size)" in msg and "swapped" in msg
    assert isinstance(exc.value.__cause__, AttributeError)       # the original is chained
    sampler = sp.PrivacyLossSampler(sample_remove=lambda n, rng: rng.normal(0.5, 1.0, n))
    with pytest.raises(ValueError, match=r"sample_remove raised .*sample\(rng, size\)"):
        _losses(sampler).epsilon(1e-2)


def test_non_vectorized_log_density_names_the_signature():
    import math

    pair = sp.LogDensityPair(
        logp=lambda w: -0.5 * math.pow(w, 2), logq=lambda w: -0.5 * (w - 1.0) ** 2,
        sample_p=lambda rng, n: rng.normal(0.0, 1.0, n),
        sample_q=lambda rng, n: rng.normal(1.0, 1.0, n))
    with pytest.raises(ValueError) as exc:
        _losses(pair).epsilon(1e-2)
    msg = str(exc.value)
    assert msg.startswith("logp raised TypeError") and "not vectorized" in msg
    assert "np.vectorize" in msg and isinstance(exc.value.__cause__, TypeError)
    branchy = sp.LogDensityPair(
        logp=lambda w: -0.5 * w ** 2 if w > 0 else -0.5 * w ** 2,
        logq=lambda w: -0.5 * (w - 1.0) ** 2,
        sample_p=lambda rng, n: rng.normal(0.0, 1.0, n),
        sample_q=lambda rng, n: rng.normal(1.0, 1.0, n))
    with pytest.raises(ValueError, match="np.where"):
        _losses(branchy).epsilon(1e-2)


# ---- item 3, minor: GG at large beta, and the advice loop --------------------------------

def test_large_beta_gg_is_refused_for_the_right_reason():
    with pytest.raises(ValueError) as exc:
        sp.GeneralizedGaussian(beta=50, scale=1.0)
    msg = str(exc.value)
    assert "heavy" not in msg and "tails are light" in msg and "Use scale >=" in msg
    s_min = float(msg.split("Use scale >= ")[1].split()[0])
    assert 1.0 < s_min < 2.0
    sp.GeneralizedGaussian(beta=50, scale=s_min * 1.001)        # the advice is enough
    # the refusal is about P(loss > 1e12): checked against scipy's law of the noise
    from scipy import stats
    from sampledprv.mechanisms.generalized_gaussian import _prob_loss_above
    x = stats.gennorm(50, scale=1.2).rvs(size=200_000, random_state=np.random.default_rng(1))
    with np.errstate(over="ignore"):
        frac = np.mean((np.abs(x - 1.0) ** 50 - np.abs(x) ** 50) / 1.2 ** 50 > 1e12)
    p = _prob_loss_above(50.0, 1.2, 1.0, 1e12)
    assert abs(frac - p) < 5 * np.sqrt(p / 200_000) + 1e-4
    # moderate shapes and the beta-validating helpers are unaffected
    for beta, scale in ((1.0, 1e-3), (1.5, 0.01), (2.0, 0.5), (8.0, 1.0), (20.0, 1.0)):
        sp.GeneralizedGaussian(beta=beta, scale=scale)
    from sampledprv.mechanisms.generalized_gaussian import check_beta
    assert check_beta(50) == 50.0


def test_delta_error_advice_does_not_loop():
    """Each remedy the too-small-delta error offers, applied, gives an answer."""
    from sampledprv.core.advice import AdvisedError

    mech = sp.PoissonSubsampled(sp.Gaussian(1.0), q=0.01)
    with pytest.raises(AdvisedError) as exc:
        sp.Accountant().compose(mech, 1000).epsilon(1e-12)
    remedies = exc.value.remedies
    assert any(r.setting == "delta_error" for r in remedies)
    for r in remedies:
        if r.setting == "delta":
            iv = sp.Accountant().compose(mech, 1000).epsilon(r.value)
        else:
            floor = float(r.note.split("delta >= ")[1].split(":")[0]) \
                if "delta >= " in r.note else 1e-12
            iv = sp.Accountant(delta_error=r.value).compose(mech, 1000).epsilon(floor)
        assert 0 < iv.lower <= iv.upper < np.inf


def test_cli_docs_list_every_mechanism_kind():
    """docs/cli.md's mechanism-string table has a row for every kind the parser knows,
    and for the subsampled- and fixed- prefixes."""
    from sampledprv.cli.mechanism_strings import KINDS

    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    table = [line for line in text.splitlines() if line.startswith("| `")]
    missing = [k for k in KINDS if not any(line.startswith(f"| `{k} ") for line in table)]
    assert not missing, f"docs/cli.md has no mechanism-string row for {missing}"
    assert any(line.startswith("| `subsampled-<") for line in table)
    assert any(line.startswith("| `fixed-<") for line in table)


def test_demo_composes_what_the_readme_tour_composes():
    """scripts/demo.sh runs examples/quickstart.py: its accountant composes the README
    tour's mechanisms and counts, so the numbers agree."""
    import re

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    tour = readme.split("## Five-minute tour", 1)[1].split("```python", 1)[1].split("```", 1)[0]
    demo = (ROOT / "examples" / "quickstart.py").read_text(encoding="utf-8").split("# 3.", 1)[0]
    calls = re.compile(r"acc\.compose\((.*)\)")
    norm = lambda text: sorted(" ".join(m.split()) for m in calls.findall(text))  # noqa: E731
    assert norm(tour) and norm(tour) == norm(demo), (norm(tour), norm(demo))
    assert "demo.sh" in readme and "quickstart.py" in (ROOT / "scripts" / "demo.sh").read_text()


def test_readme_states_test_time_and_the_fast_lane():
    """The README points to the measured test time (kept in benchmarks/RESULTS.md with its
    machine and load, so that the README's prose does not go stale) and to the fast lane."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "benchmarks/RESULTS.md" in readme
    assert not re.search(r"\b\d[\d,]* tests\b", readme), "test counts go stale: keep them out"
    results = (ROOT / "benchmarks" / "RESULTS.md").read_text(encoding="utf-8")
    section = results[results.index("## Test suite time"):]
    assert re.search(r"\d+ min \d+ s", section.split("\n## ")[0])
    assert 'scripts/test.sh -m "not slow"' in readme
    assert '"$@"' in (ROOT / "scripts" / "test.sh").read_text()      # the flag reaches pytest


def test_sample_floor_formula_is_the_same_everywhere():
    """The SampledAccountant docstring, the how-to and min_samples agree on the floor
    n ~ k ln((2 bins + 3) H / alpha) / delta."""
    import math

    doc = " ".join(sp.SampledAccountant.__doc__.split())
    assert "n > k ln((2 bins + 3) H / alpha) / delta" in doc
    howto = (ROOT / "docs" / "howto" / "sample-at-scale.md").read_text(encoding="utf-8")
    assert r"k \ln((2\,\text{bins}+3) H / \alpha) / \delta" in howto
    k, delta, alpha, bins, h = 20, 1e-4, 1e-6, 4096, 2
    n = sp.min_samples(k, delta, alpha=alpha, bins=bins, histograms=h)
    assert abs(n / (k * math.log((2 * bins + 3) * h / alpha) / delta) - 1) < 0.01


def test_normalization_warning_points_at_the_users_line():
    pair = sp.LogDensityPair(
        logp=lambda w: -0.5 * np.asarray(w) ** 2,
        logq=lambda w: -0.5 * (np.asarray(w) - 1.0) ** 2 - 0.01,       # off by a constant
        sample_p=lambda rng, n: rng.normal(0.0, 1.0, n),
        sample_q=lambda rng, n: rng.normal(1.0, 1.0, n))
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        pair.check()                                                     # the user's line
        sp.SampledAccountant(n_samples=2000, progress=False).compose(pair)  # and this one
    mine = [w for w in seen if "integrates to" in str(w.message)]
    assert len(mine) == 2
    assert all(os.path.abspath(w.filename) == os.path.abspath(__file__) for w in mine), \
        [w.filename for w in mine]


def test_examples_page_shows_the_footer_the_beta_dpsgd_example_prints():
    import ast

    src = (ROOT / "examples" / "beta_dpsgd_digits.py").read_text(encoding="utf-8")
    calls = [n for n in ast.walk(ast.parse(src)) if isinstance(n, ast.Call)
             and getattr(n.func, "id", "") == "print"
             and "eps spent:" in (ast.get_source_segment(src, n) or "")]
    assert len(calls) == 1
    footer = eval("(" + ast.get_source_segment(src, calls[0].args[0]) + ")",  # noqa: S307
                  {"d": 2410})
    page = (ROOT / "docs" / "examples.md").read_text(encoding="utf-8")
    assert footer in page
    assert "[1.7334, 1.9999]" in page and "one-hot sensitivity vector, the GG" not in page
    assert "< 1 minute" not in src
