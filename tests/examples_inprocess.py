"""Run ``python examples/<script> --quick *args`` as ``__main__`` in the test process.

:func:`runpy.run_path` runs the same script, guard and argv; the test worker has numpy,
scipy, torch, sklearn, matplotlib and the package imported (and the Numba kernels loaded)
already, which a fresh interpreter pays for again on every example (2-6 CPU-seconds)."""

from __future__ import annotations

import contextlib
import runpy
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_in_process(script, capsys, monkeypatch, *args):
    """``python examples/<script> --quick *args`` as ``__main__`` in this process; stdout.

    torch runs on one intra-op thread meanwhile: its threads only contend with the other
    test worker on the 2-core machine (4x the CPU time on the beta-DP-SGD training steps,
    the same accuracies)."""
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.setattr(sys, "argv", [str(ROOT / "examples" / script), "--quick", *args])
    with contextlib.ExitStack() as stack:
        if "torch" in sys.modules:
            torch = sys.modules["torch"]
            threads = torch.get_num_threads()
            torch.set_num_threads(1)
            stack.callback(torch.set_num_threads, threads)
        capsys.readouterr()
        runpy.run_path(str(ROOT / "examples" / script), run_name="__main__")
    if "matplotlib.pyplot" in sys.modules:
        sys.modules["matplotlib.pyplot"].close("all")
    return capsys.readouterr().out
