"""Progress bars of long phases: shown in a terminal, never in a pipe, a log or CI.

One home for every progress bar of the package (the sampling runs, the envelopes, the
FFT composition, phases without counts such as the balls-and-bins conditional
envelope): :class:`Progress` and :func:`phase`.  tqdm is optional; ``progress=True``
without it raises an :class:`ImportError` that says how to fix it.
"""

from __future__ import annotations

import contextlib
import threading
import time
from typing import Iterator

__all__ = ["Progress", "phase", "tqdm_or_none", "check_progress", "stderr_is_terminal",
           "TQDM_HINT"]

TQDM_HINT = "install tqdm (pip install tqdm) or turn progress bars off"


def tqdm_or_none():
    """The ``tqdm.auto.tqdm`` class, or ``None`` when tqdm is not installed."""
    try:
        from tqdm.auto import tqdm  # noqa: PLC0415 - optional at import time
    except ImportError:
        return None
    return tqdm


def check_progress(progress: object) -> None:
    """Validate a ``progress`` argument: ``True`` (needs tqdm), ``False`` or ``None``.

    ``None`` (automatic) shows bars only when tqdm is installed; ``True`` without tqdm
    raises :class:`ImportError` saying how to fix it.
    """
    if progress is not None and not isinstance(progress, bool):
        raise ValueError(f"progress must be True, False or None, got {progress!r}")
    if progress and tqdm_or_none() is None:
        raise ImportError(f"progress=True needs the tqdm package: {TQDM_HINT} "
                          "(progress=False)")

_AUTO_PROGRESS_S = 2.0     #: show a progress bar when the run is expected to last longer


def stderr_is_terminal() -> bool:
    """Whether ``stderr`` is a terminal (automatic progress bars show only there)."""
    import sys  # noqa: PLC0415
    try:
        return bool(sys.stderr.isatty())
    except (AttributeError, ValueError):    # replaced or closed stream
        return False


class Progress:
    """tqdm bar of one phase of a run, shown once the phase has lasted or is expected to
    last more than ``_AUTO_PROGRESS_S`` seconds.

    ``mode`` True/False forces the bar on/off; ``None`` (automatic) shows it only when
    ``stderr`` is a terminal (never in a pipe, a log or CI).  In automatic mode the bar
    opens as soon as either

    * the rate measured after the first chunk (which may include compilation, so it is
      not used) predicts more than ``_AUTO_PROGRESS_S`` seconds to go, or
    * the phase has run for ``_AUTO_PROGRESS_S`` seconds: a background ticker opens the
      bar then, and refreshes it twice a second, so a phase whose first chunk is most of
      the work (or that reports no counts at all: ``total=None``, see :func:`phase`)
      still shows its elapsed time.

    ``unit`` names what ``total`` counts.  Safe to update from one thread while the
    ticker runs (one lock guards the bar).
    """

    def __init__(self, mode: bool | None, total: int | None, desc: str,
                 unit: str = "draw") -> None:
        self.mode, self.total, self.desc, self.unit = mode, total, desc, unit
        self.bar = None
        check_progress(mode)
        if mode is None and not stderr_is_terminal():
            self.mode = False
        self.t0: float | None = None
        self.count = 0
        self.count0 = 0
        self._started = time.time()        # tqdm's clock: elapsed counts from here
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._ticker: threading.Thread | None = None
        if mode:
            self._open()
        if self.mode is not False:
            self._ticker = threading.Thread(target=self._tick, daemon=True,
                                            name="sampledprv-progress")
            self._ticker.start()

    def _open(self) -> None:
        tqdm = tqdm_or_none()
        if tqdm is None:         # automatic mode without tqdm: no bar (checked for True)
            self.mode = False
            return
        fmt = "{desc}: {elapsed} elapsed" if self.total is None else None
        self.bar = tqdm(total=self.total, desc=self.desc, unit=self.unit, unit_scale=True,
                        initial=self.count, bar_format=fmt)
        if hasattr(self.bar, "start_t"):       # elapsed time of the phase, not of the bar
            self.bar.start_t = min(self.bar.start_t, self._started)

    def _tick(self) -> None:
        if self._done.wait(_AUTO_PROGRESS_S):
            return
        while True:
            with self._lock:
                if self._done.is_set():
                    return
                if self.bar is None and self.mode is not False:
                    self._open()
                if self.bar is not None:
                    self.bar.refresh()
            if self._done.wait(0.5):
                return

    def update(self, k: int) -> None:
        with self._lock:
            self.count += k
            if self.bar is not None:
                self.bar.update(k)
                return
            if self.mode is False or not self.total:
                return
            now = time.perf_counter()
            if self.t0 is None:                 # first chunk: start the clock after it
                self.t0, self.count0 = now, self.count
                return
            rate = (self.count - self.count0) / max(now - self.t0, 1e-9)
            if (self.total - self.count) / rate > _AUTO_PROGRESS_S:
                self._open()

    def close(self) -> None:
        self._done.set()
        if self._ticker is not None and self._ticker is not threading.current_thread():
            self._ticker.join()
        with self._lock:
            if self.bar is not None:
                self.bar.close()


@contextlib.contextmanager
def phase(mode: bool | None, desc: str) -> Iterator[None]:
    """A phase of a run with no counts to report (an envelope built by quadrature, say):
    in a terminal, its elapsed time shows once it has run ``_AUTO_PROGRESS_S`` seconds
    (``mode``: as :class:`Progress`)."""
    bar = Progress(mode, None, desc, unit="s")
    try:
        yield
    finally:
        bar.close()
