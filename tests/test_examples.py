"""The quickstart demo and the custom-mechanism example run end to end (--quick)."""

from __future__ import annotations

import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


@pytest.mark.slow       # subprocesses that compile and sample: tens of seconds each
@pytest.mark.parametrize("script", ["quickstart.py", "custom_mechanism.py"])
def test_example_runs_quick(script):
    out = subprocess.run([sys.executable, str(ROOT / "examples" / script), "--quick"],
                         capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "certified" in out.stdout
