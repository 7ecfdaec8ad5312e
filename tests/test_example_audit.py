"""The audit example trains a small DP-SGD run with Opacus and audits it (slow)."""

import importlib.util
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_audit_dpsgd_example_quick():
    pytest.importorskip("opacus")
    pytest.importorskip("sklearn")
    spec = importlib.util.spec_from_file_location("audit_dpsgd",
                                                  ROOT / "examples" / "audit_dpsgd.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    result = mod.main(["--quick"])
    assert result.mode == "one-run"
    assert result.consistent and result.verdict == "consistent"
    assert 0.0 <= result.epsilon_lower <= result.epsilon_upper < 3.0
