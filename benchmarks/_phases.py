"""Phase-by-phase CPU budget of one analytic build (``bench_long_k.py --phases``).

The accountant's build is run once with its two directions one after the other (so that
every phase's CPU time is that of the one thread doing it), with thin wrappers around
the functions that make up each phase.  Times are *exclusive* CPU seconds
(``time.thread_time``; a phase nested in another is subtracted from it), so they add up
to the build's total.  The FFT passes are pocketfft's own calls (``numpy.fft``), counted
apart from the phase that issued them.  Next to them, the arithmetic floor: one real FFT
round trip (forward and inverse, numpy's pocketfft) of the length of each direction's
composed grid, and the bytes that one pass over that grid's input, spectrum and output
must touch.

The wrappers change no arithmetic: they call the same functions with the same
arguments (the accountant's result is printed beside the table so that it can be
compared with a plain run).
"""

from __future__ import annotations

import contextlib
import time

import numpy as np

#: (phase, module path, attribute): the functions that make up each phase
PHASES = [
    ("laws build", "sampledprv.analytic.build", "privacy_loss"),
    ("plan (tree, core/tail cuts)", "sampledprv.analytic.build", "CurveBuilder.plan"),
    ("discretization", "sampledprv.analytic.build", "CurveBuilder.discretized_step"),
    ("tail mixture W", "sampledprv.analytic.build", "tail_mixture"),
    ("tree levels (compose + fold)", "sampledprv.engine.evolving", "_compose_then_regrid"),
    ("top composition", "sampledprv.engine.evolving", "compose_lattices"),
    ("top composition", "sampledprv.analytic.build", "compose_lattices"),   # one level
    ("regrid (remainders)", "sampledprv.engine.evolving", "regrid"),
    ("curve (tail sums)", "sampledprv.analytic.build", "PrivacyCurve"),
    ("answers (epsilon search)", "sampledprv.analytic.accountant", "epsilon_interval"),
    ("FFT passes (pocketfft)", "numpy.fft._pocketfft", "_raw_fft"),
]


class _Clock:
    """Exclusive thread-CPU time per phase (a stack of open phases)."""

    def __init__(self) -> None:
        self.spent: dict[str, float] = {}
        self.calls: dict[str, int] = {}
        self.stack: list[list] = []
        #: sizes of the composed laws of the top compositions (the floor's lengths)
        self.top_sizes: list[int] = []

    def wrap(self, name: str, fn):
        def timed(*args, **kwargs):
            frame = [time.thread_time(), 0.0]
            self.stack.append(frame)
            try:
                out = fn(*args, **kwargs)
                if name == "top composition":
                    self.top_sizes.append(int(out.probs.size))
                return out
            finally:
                self.stack.pop()
                total = time.thread_time() - frame[0]
                self.spent[name] = self.spent.get(name, 0.0) + total - frame[1]
                self.calls[name] = self.calls.get(name, 0) + 1
                if self.stack:
                    self.stack[-1][1] += total
        return timed


@contextlib.contextmanager
def _patched(clock: _Clock):
    import importlib
    undo = []
    try:
        for name, module, attr in PHASES:
            owner = importlib.import_module(module)
            *path, leaf = attr.split(".")
            for part in path:
                owner = getattr(owner, part)
            original = owner.__dict__[leaf]
            wrapped = clock.wrap(name, original)
            setattr(owner, leaf, wrapped)
            undo.append((owner, leaf, original))
        yield
    finally:
        for owner, leaf, original in reversed(undo):
            setattr(owner, leaf, original)


def fft_floor(n: int, repeat: int = 3) -> float:
    """Best thread-CPU seconds of one real FFT round trip of length ``n`` (numpy)."""
    x = np.random.default_rng(0).random(n)
    best = float("inf")
    for _ in range(repeat):
        t0 = time.thread_time()
        np.fft.irfft(np.fft.rfft(x), n)
        best = min(best, time.thread_time() - t0)
    return best


def phase_budget(run, *, sequential_attr=("sampledprv.analytic.build", "_PARALLEL_GRID")
                 ) -> tuple[_Clock, float, object]:
    """Run ``run()`` (one accountant build and query) with the directions in sequence and
    every phase timed; returns (the clock: CPU seconds and calls per phase, the top
    compositions' sizes; total thread-CPU seconds; ``run``'s result)."""
    import importlib
    mod = importlib.import_module(sequential_attr[0])
    saved = getattr(mod, sequential_attr[1])
    setattr(mod, sequential_attr[1], 0)          # directions one after the other
    from sampledprv.engine import workers
    saved_cores = workers.available_cores
    # one thread per direction: thread_time sees only the calling thread, so worker
    # threads' CPU (and their FFT calls on the shared stack) would go unaccounted
    workers.available_cores = lambda: 1
    clock = _Clock()
    try:
        with _patched(clock):
            t0 = time.thread_time()
            out = run()
            total = time.thread_time() - t0
    finally:
        setattr(mod, sequential_attr[1], saved)
        workers.available_cores = saved_cores
    return clock, total, out


def print_budget(clock: _Clock, total: float, directions: int) -> None:
    """The table: phase, calls, CPU seconds and share; then the floor (one FFT round trip
    per direction at the length of its composed law: the largest top compositions)."""
    spent, calls = clock.spent, clock.calls
    grids = sorted(clock.top_sizes)[-directions:]
    print(f"  phase budget (thread CPU seconds, directions in sequence; total {total:.3f} s):")
    for name in dict.fromkeys(name for name, _, _ in PHASES):      # in order, once each
        if name in spent:
            print(f"    {name:<30} {calls[name]:>5} calls {spent[name]:8.3f} s "
                  f"{100 * spent[name] / total:5.1f} %")
    rest = total - sum(spent.values())
    print(f"    {'other (Python glue, checks)':<30} {'':>11} {rest:8.3f} s "
          f"{100 * rest / total:5.1f} %")
    floor = 0.0
    from sampledprv.engine.fft import next_fast_len
    for n in grids:
        m = next_fast_len(n)
        t = fft_floor(m)
        floor += t
        # one pass: the step's input (8 B/point), the half spectrum (16 B per 2 points,
        # read and written), the output (8 B/point)
        print(f"    floor: one rfft + irfft of {m:,} points {t:.3f} s; one pass touches "
              f"{(8 + 8 + 8 + 8) * m / 2**20:.0f} MiB")
    print(f"    floor total {floor:.3f} s = {100 * floor / total:.0f} % of the build")
