"""The rough edges a new user meets first (issue 24, item 4): each behaviour pinned down."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import sampledprv as sp
from sampledprv.advice import AdvisedWarning

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
