"""The quickstart demo and the custom-mechanism example run end to end (--quick), as
``__main__`` in the test process (tests/examples_inprocess.py; tests/test_examples_gg.py
runs pate_ggnmax.py in a fresh interpreter, as a user would)."""

from __future__ import annotations

import pytest

from examples_inprocess import run_in_process


@pytest.mark.slow       # they compile and sample: seconds each
@pytest.mark.parametrize("script", ["quickstart.py", "custom_mechanism.py"])
def test_example_runs_quick(script, capsys, monkeypatch):
    out = run_in_process(script, capsys, monkeypatch)
    assert "certified" in out
