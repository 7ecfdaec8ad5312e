"""Progress of long phases, shown in a terminal by default and never in a pipe (issue 32 §3).

* :class:`~sampledprv.core.progress.Progress` in automatic mode opens its
  bar once the phase has run ``_AUTO_PROGRESS_S`` seconds, even when no count arrives
  (a first chunk that is most of the work, or a phase with no counts: :func:`phase`);
* the balls-and-bins conditional envelope is such a phase;
* a first sampled run in a real pseudo-terminal shows a bar for its sampling and its
  envelope phases, and nothing of the kind in a pipe;
* no stray ``ESC[0m`` reaches the terminal at exit (Numba's colour library wrote one).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sampledprv.core import progress as _pypath

ROOT = Path(__file__).resolve().parents[1]


class _Recorder:
    """A stand-in for tqdm that records what was opened and refreshed."""
    opened: list = []

    def __init__(self, total=None, desc="", **kwargs):
        self.total, self.desc, self.n, self.refreshes = total, desc, kwargs.get("initial", 0), 0
        self.start_t = time.time()
        self.closed = False
        _Recorder.opened.append(self)

    def update(self, k):
        self.n += k

    def refresh(self):
        self.refreshes += 1

    def close(self):
        self.closed = True


@pytest.fixture
def terminal(monkeypatch):
    _Recorder.opened = []
    monkeypatch.setattr(_pypath, "tqdm_or_none", lambda: _Recorder)
    monkeypatch.setattr(_pypath, "stderr_is_terminal", lambda: True)
    monkeypatch.setattr(_pypath, "_AUTO_PROGRESS_S", 0.05)
    return _Recorder


def test_a_phase_without_counts_shows_its_bar_after_the_delay(terminal):
    with _pypath.phase(None, "building"):
        time.sleep(0.4)
    assert [b.desc for b in terminal.opened] == ["building"]
    bar = terminal.opened[0]
    assert bar.total is None and bar.closed and bar.refreshes >= 1


def test_a_short_phase_shows_nothing(terminal):
    with _pypath.phase(None, "quick"):
        pass
    assert terminal.opened == []


def test_a_single_long_chunk_still_shows_a_bar(terminal):
    """The rate is measured only after the first chunk; a run whose first chunk is most
    of the work used to show nothing at all."""
    bar = _pypath.Progress(None, 1000, "sampling")
    time.sleep(0.4)                   # the first (and only) chunk
    bar.update(1000)
    bar.close()
    assert len(terminal.opened) == 1 and terminal.opened[0].n == 1000


def test_no_bar_and_no_thread_outside_a_terminal(monkeypatch):
    _Recorder.opened = []
    monkeypatch.setattr(_pypath, "tqdm_or_none", lambda: _Recorder)
    monkeypatch.setattr(_pypath, "stderr_is_terminal", lambda: False)
    monkeypatch.setattr(_pypath, "_AUTO_PROGRESS_S", 0.01)
    bar = _pypath.Progress(None, 10, "sampling")
    assert bar._ticker is None
    time.sleep(0.1)
    bar.update(10)
    bar.close()
    assert _Recorder.opened == []


def test_forced_off_shows_nothing_in_a_terminal(terminal):
    with _pypath.phase(False, "off"):
        time.sleep(0.2)
    assert terminal.opened == []


def test_the_conditional_envelope_is_a_phase_with_progress(terminal):
    import sampledprv as sp
    from sampledprv.sampled.certification import conditional
    conditional._envelopes.clear()
    sp.SampledAccountant(20_000, alpha=1e-3, seed=2, progress=None).compose(
        sp.BallsAndBins(1.0, 6), count=2).epsilon(1e-3)
    assert any("conditional envelope" in b.desc for b in terminal.opened)


_CHILD = r"""
import sampledprv as sp
from sampledprv.core import progress as _pypath
_pypath._AUTO_PROGRESS_S = 0.0          # every phase counts as long here
from sampledprv.sampled.certification import conditional
acc = sp.SampledAccountant(20_000, alpha=1e-3, seed=4)      # progress: automatic
print("upper", acc.compose(sp.BallsAndBins(1.0, 5), count=3).epsilon(1e-3).upper)
import colorama
colorama.init(); colorama.deinit()      # what Numba does when it colours an error
"""


def _run_in_pty(code: str) -> str:
    import fcntl
    import pty
    import struct
    import termios
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    env = dict(os.environ, PYTHONPATH=str(ROOT), TERM="xterm")
    env.pop("TQDM_DISABLE", None)
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=slave, stdout=slave,
                            stderr=slave, env=env, cwd=ROOT, close_fds=True)
    os.close(slave)
    out = bytearray()
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:                 # the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    proc.wait(timeout=600)
    os.close(master)
    assert proc.returncode == 0, out.decode(errors="replace")[-3000:]
    return out.decode(errors="replace")


def test_first_sampled_run_in_a_terminal_shows_every_phase_and_no_reset_code():
    text = _run_in_pty(_CHILD)
    assert "upper" in text
    assert "sampling" in text and "%|" in text, text[-2000:]
    assert "conditional envelope" in text, text[-2000:]
    assert "\x1b[0m" not in text


def test_the_same_run_in_a_pipe_shows_no_bar():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True,
                         env=env, cwd=ROOT, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "%|" not in out.stderr and "elapsed" not in out.stderr
    assert "\x1b[0m" not in out.stdout
