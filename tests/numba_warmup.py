"""Compile the package's disk-cached Numba kernels once, before the test workers start.

From a fresh clone (an empty Numba cache) the two pytest-xdist workers, and the
subprocesses of the tests that run examples, benchmarks and the command line, each
compiled the kernels they met first: the same kernel several times over when they met it
at about the same time.  :func:`warm_up` compiles every kernel of :data:`KERNELS` with the
signatures the suite calls it with (each is written to Numba's on-disk cache), split over
a few processes, before the workers start (``tests/conftest.py``); every later process
loads the kernels instead of compiling them.  Nothing here changes what a kernel computes:
a kernel compiled here is the one any caller would have compiled.

A signature the table does not list is compiled on first use as before (only time is
lost); at the end of an xdist run ``tests/conftest.py`` lists the signatures the workers
added to the caches of the package (:func:`missed`), so that the table can follow the
code.  ``tests/test_numba_warmup.py`` checks that every entry names a disk-cached kernel
with the right number of arguments, and that every disk-cached kernel of the package has
an entry.

Run as a script (``python tests/numba_warmup.py SHARE SHARES``) it compiles one share of
the table and prints one line per kernel that could not be compiled;
``python tests/numba_warmup.py --all N`` runs :func:`warm_up` with ``N`` processes
(``scripts/setup_env.sh`` does, while pip installs the rest of the stack).
"""

from __future__ import annotations

import importlib
import os
import pickle
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterable, NamedTuple, Optional, Sequence

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "sampledprv"


class Kernel(NamedTuple):
    """One disk-cached kernel: where it lives, its signatures, its compile cost."""

    module: str            #: module under ``sampledprv.`` that defines (or makes) it
    name: str              #: attribute of that module, or ``kind:<k>`` / ``online:<i>`` /
                           #: ``made:<factory>`` (a function of the module that makes it)
    signatures: tuple      #: argument types, in the notation of :func:`parse_signature`
    group: str             #: kernels of one group share callees: compiled by one process
    cost: float            #: CPU seconds to compile it in a fresh process (measured)


#: Every disk-cached kernel the test suite calls from Python, with its signatures.  The
#: kernels they call (random numbers, samplers, per-kind losses) compile and are cached
#: with them.  Costs: CPU seconds on the 2-core reference machine, Numba 0.6x.
KERNELS: tuple[Kernel, ...] = (
    # the sampling kernel and the fills of the built-in sampler kinds
    Kernel("sampled.histograms.kernels", "_kernel",
           ("I F1 STATES I1 I1 I F F I2 I2 I1 I I I",), "kernel", 0.3),
    Kernel("sampled.histograms._binning", "bin_losses", ("F1 F F I2 I2",), "kernel", 0.1),
    *(Kernel("sampled.draws._mechloss", f"kind:{k}", ("STATE F1 F1",), "fills", c)
      for k, c in (("gaussian", 0.4), ("gaussian_sym", 0.4), ("laplace", 0.7),
                   ("laplace_sym", 0.6), ("logistic", 0.3), ("table", 0.3),
                   ("table_sym", 0.4), ("two_point", 0.4))),
    # Generalized Gaussian draws
    Kernel("sampled.draws._ggblock", "gg_fill", ("STATE F1 F1",), "gg", 2.9),
    Kernel("sampled.draws._fastpow", "fast_pow_block", ("F1 F1 I F",), "gg", 0.9),
    Kernel("sampled.draws.samplers", "generalized_gaussian", ("STATE F F F1",), "gg", 2.5),
    Kernel("sampled.draws.samplers", "gg_gamma_transform",
           ("STATE I I", "STATE F I", "STATE F F"), "gg", 0.4),
    Kernel("sampled.draws.samplers", "subsampled_loss", ("F F",), "gg", 0.1),
    Kernel("sampled.draws.rng", "gamma", ("STATE I", "STATE F"), "gg", 0.6),
    Kernel("sampled.draws.ars", "_inv1", ("F F F F B",), "gg", 0.1),
    # random allocation (balls and bins): one group each, they are the largest
    Kernel("sampled.draws.allocation", "_fill_many", ("F1 STATES F1",), "allocation", 4.8),
    Kernel("sampled.draws.allocation", "_bulk_many", ("F1 STATES F1",), "bulk", 4.3),
    Kernel("sampled.draws.allocation", "_log_esp_logspace", ("F1 I I F1",), "allocation", 0.1),
    Kernel("sampled.certification.tilted_laws", "_allocation_losses",
           ("F2 I321 I321 I1 I F I I F I I",), "tilted_laws", 0.5),
    Kernel("sampled.certification.tilted_laws", "_forward_all", ("I I321 F1 I1 I",),
           "tilted_laws", 0.4),
    Kernel("sampled.certification.tilted_laws", "_probabilities", ("F2 I321 F1 I1",),
           "tilted_laws", 0.3),
    # matrix mechanism: draws, tilted law, Renyi moments
    Kernel("sampled.draws.matrix", "matrix_fill", ("STATE F1 F1",), "matrix", 0.4),
    Kernel("sampled.draws.matrix", "_gram_fill", ("STATE F1 F1",), "matrix", 1.0),
    Kernel("sampled.draws.matrix", "_ndim_fill", ("STATE F1 F1",), "matrix", 0.6),
    Kernel("sampled.draws.matrix", "_draw_pattern", ("STATE F1 F1",), "matrix", 0.6),
    Kernel("sampled.draws.matrix", "_loss_of_z", ("F1 F1 F1 F1 F1",), "matrix", 0.7),
    Kernel("sampled.draws.matrix", "_pointwise", ("F1 F1",), "matrix", 0.2),
    Kernel("sampled.draws.matrix", "_add_column", ("F1 I F1 F1 F1",), "matrix", 0.1),
    Kernel("sampled.certification.tilted_matrix", "_forward",
           ("F2R I I I2 I2 F1 I F2",), "tilted_matrix", 0.7),
    Kernel("sampled.certification.tilted_matrix", "_choices",
           ("F2R I I I2 I2 F1 F2 F3",), "tilted_matrix", 0.4),
    Kernel("sampled.certification.tilted_matrix", "_draw",
           ("STATE F2R I I I2 I2 F2 F3 I1 F1 I1 I1 F1 I1 I1 F1 F1 F F1 I2 B",),
           "tilted_matrix", 1.1),
    Kernel("rdp.matrix_moments", "_band_dp",
           ("F2R I I I2 I1 I2 F1",), "moments", 0.7),
    Kernel("rdp.matrix_moments", "_walk", ("F2R I",), "moments", 0.4),
    # the rest: Renyi tools, envelopes, the online accountant's loops
    Kernel("rdp.occupancy", "_build", ("I2 I1 I1 I1 F1 I I",), "rdp", 0.4),
    Kernel("rdp.occupancy", "_group", ("I321 I321 F1 I321 I",), "rdp", 0.3),
    Kernel("rdp.occupancy", "_sweep", ("F1 I321 F1 I1 I",), "rdp", 0.2),
    Kernel("rdp.gg_excess", "_cells_kernel", ("F1 I1 F1 F1 F F",), "rdp", 0.7),
    Kernel("mechanisms.generalized_gaussian", "made:_root_kernel", ("F1 F F F F1",), "rdp",
           0.5),
    Kernel("sampled.certification.identity_envelopes", "_lower_hull", ("F1 F1",), "rdp", 0.2),
    Kernel("sampled.certification.conditional", "_place", ("F2 I F2 F2 I1",), "rdp", 0.2),
    Kernel("engine.online", "online:0", ("C1 C1 C1 F1 F1 I I I1",), "online", 0.8),
    Kernel("engine.online", "online:1", ("C1 C1 C1 I F I",), "online", 0.1),
    Kernel("engine.online", "online:2", ("C1 C1 C1 I",), "online", 0.1),
)

_TOKEN = re.compile(r"^(F|I32|I|U|B|C)(\d)?(R?)$")


def parse_signature(text: str) -> tuple:
    """Numba argument types from a compact notation: ``F``/``I``/``I32``/``U``/``B``/``C``
    are float64, int64, int32, uint64, boolean and complex128 scalars; a digit after one
    makes it a C-contiguous array of that many dimensions, and a trailing ``R`` a
    read-only one (``F2R``); ``STATE`` is the xoshiro state record and ``STATES`` a 1-D
    array of them (:data:`sampledprv.sampled.draws.rng.STATE_DTYPE`)."""
    import numpy as np
    from numba import from_dtype, typeof
    from numba.core import types

    from sampledprv.sampled.draws.rng import STATE_DTYPE

    scalars = {"F": types.float64, "I": types.int64, "I32": types.int32,
               "U": types.uint64, "B": types.boolean, "C": types.complex128}
    out = []
    for tok in text.split():
        if tok == "STATE":
            out.append(from_dtype(STATE_DTYPE))
            continue
        if tok == "STATES":
            out.append(typeof(np.zeros(1, dtype=STATE_DTYPE)))
            continue
        m = _TOKEN.match(tok)
        if m is None:
            raise ValueError(f"unknown type token {tok!r} in {text!r}")
        base, ndim, ro = m.groups()
        t = scalars[base]
        if ndim:
            t = types.Array(t, int(ndim), "C", readonly=bool(ro))
        elif ro:
            raise ValueError(f"{tok!r}: only arrays can be read-only")
        out.append(t)
    return tuple(out)


def resolve(kernel: Kernel) -> Any:
    """The Numba dispatcher of ``kernel`` (importing its module; a sampler kind's fill is
    made the way the sampling code makes it)."""
    mod = importlib.import_module(f"sampledprv.{kernel.module}")
    if kernel.name.startswith("kind:"):
        kind = kernel.name[len("kind:"):]
        if kind.split("_")[0] == "logistic":        # an additive noise: made on first use
            from sampledprv.mechanisms.logistic import LOGISTIC_NOISE
            mod._additive_fill(LOGISTIC_NOISE)
        return mod.kind_fill(kind)
    if kernel.name.startswith("made:"):            # made on first use by a factory
        return getattr(mod, kernel.name[len("made:"):])()
    if kernel.name.startswith("online:"):
        return mod._compiled()[int(kernel.name[len("online:"):])]
    return getattr(mod, kernel.name)


def shares(kernels: Sequence[Kernel], n: int) -> list[list[Kernel]]:
    """``kernels`` split into ``n`` lists of about equal compile cost, each group whole
    (the kernels of a group share callees, which one process then compiles once)."""
    groups: dict[str, list[Kernel]] = {}
    for k in kernels:
        groups.setdefault(k.group, []).append(k)
    out: list[list[Kernel]] = [[] for _ in range(max(1, n))]
    load = [0.0] * len(out)
    for g in sorted(groups.values(), key=lambda ks: -sum(k.cost for k in ks)):
        i = load.index(min(load))
        out[i].extend(g)
        load[i] += sum(k.cost for k in g)
    return out


def compile_share(kernels: Iterable[Kernel]) -> list[str]:
    """Compile every signature of ``kernels`` (each lands in Numba's disk cache, or is
    loaded from it); returns one line per kernel that failed, saying why."""
    failed = []
    for k in kernels:
        try:
            disp = resolve(k)
            for sig in k.signatures:
                disp.compile(parse_signature(sig))
        except Exception as exc:  # noqa: BLE001 - a warm-up failure must not stop a run
            failed.append(f"{k.module}.{k.name}: {type(exc).__name__}: {exc}")
    return failed


def warm_up(processes: int, env: Optional[dict] = None,
            timeout: float = 600.0) -> tuple[float, list[str]]:
    """Compile :data:`KERNELS` in ``processes`` processes at once (each its share);
    returns the wall seconds and the lines of the failures (kernels not compiled, and
    processes that exited abnormally).  Stale caches are purged first, once (importing
    :mod:`sampledprv.sampled` does it), so that the processes do not purge each other's
    fresh files."""
    t0 = time.perf_counter()
    env = dict(os.environ if env is None else env)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    purge = subprocess.run([sys.executable, "-c", "import sampledprv.sampled"], env=env,
                           capture_output=True, text=True, timeout=timeout, check=False)
    if purge.returncode != 0:
        return time.perf_counter() - t0, [f"import sampledprv.sampled failed: "
                                          f"{purge.stderr.strip()[-500:]}"]
    n = max(1, min(processes, len(shares(KERNELS, processes))))
    procs = [subprocess.Popen([sys.executable, __file__, str(i), str(n)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for i in range(n)]
    failed: list[str] = []
    for p in procs:
        try:
            out, _ = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            out, _ = p.communicate()
            failed.append(f"warm-up process {p.args[-2]} timed out after {timeout:.0f} s")
        failed.extend(ln for ln in out.splitlines() if ln.strip())
        if p.returncode not in (0, None):
            failed.append(f"warm-up process {p.args[-2]} exited {p.returncode}")
    return time.perf_counter() - t0, failed


def covers_the_suite(args: Sequence[str], from_command_line: bool, cwd: Path) -> bool:
    """Whether a run with these path arguments is worth a warm-up: no paths given (pytest
    takes the ``tests`` folder), or one of them is the ``tests`` folder or the repository
    itself.  A run of a few files after an edit (which purges every cached kernel) then does
    not pay for compiling all of :data:`KERNELS`; ``-m`` and ``-k`` keep it."""
    if not from_command_line:
        return True
    tests = Path(__file__).resolve().parent
    for arg in args:
        path = (cwd / arg.split("::")[0]).resolve()
        if path in (tests, tests.parent):
            return True
    return False


def _index_signatures(path: Path) -> list[tuple]:
    """The argument types of the overloads in one Numba index file (``*.nbi``)."""
    with open(path, "rb") as f:
        pickle.load(f)                                # Numba's version
        _stamp, overloads = pickle.loads(f.read())
    return [key[0] for key in overloads]


def missed(root: Path = PACKAGE) -> list[str]:
    """``module.function(signature)`` of every overload in the package's Numba caches
    (the ``__pycache__`` folders under ``root``) that :data:`KERNELS` does not compile:
    neither a listed signature nor a kernel that a listed one calls (those have
    qualified names of their own).  Run after the suite, it names what the table
    misses."""
    wanted: dict[str, set] = {}
    for k in KERNELS:
        try:
            disp = resolve(k)
        except Exception:  # noqa: BLE001 - reported by tests/test_numba_warmup.py
            continue
        key = f"{disp.py_func.__module__}.{disp.py_func.__qualname__}"
        wanted.setdefault(key, set()).update(parse_signature(s) for s in k.signatures)
    out = []
    for index in sorted(root.rglob("__pycache__/*.nbi")):
        stem = index.name.split(".py")[0]              # "<module>.<qualname>-<line>"
        modname, _, rest = stem.partition(".")
        qual = rest.rsplit("-", 1)[0]
        folder = index.parent.parent.relative_to(root.parent)
        key = ".".join((*folder.parts, modname, qual))
        if key not in wanted:
            continue                                   # a callee: compiled with its caller
        try:
            sigs = _index_signatures(index)
        except Exception:  # noqa: BLE001 - another Numba's format: nothing to say
            continue
        out.extend(f"{key}{tuple(map(str, s))}" for s in sigs if s not in wanted[key])
    return out


def _main(argv: Sequence[str]) -> int:
    if argv and argv[0] == "--all":           # the whole table, in argv[1] processes
        seconds, failed = warm_up(max(1, int(argv[1])))
        for line in failed:
            print(f"not compiled: {line}", flush=True)
        print(f"numba warm-up: {len(KERNELS)} kernels, {seconds:.1f} s", flush=True)
        return 0
    share, n = int(argv[0]), int(argv[1])
    for line in compile_share(shares(KERNELS, n)[share]):
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
