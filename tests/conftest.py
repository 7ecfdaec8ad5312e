import os
import sys

import pytest

# One OpenBLAS thread per test process.  The suite runs in parallel worker processes
# (pytest-xdist, scripts/test.sh) that already keep every core busy; OpenBLAS' extra
# threads there do no useful work but busy-wait between the matrix products of the
# envelope builds (measured: 28.4 -> 17.5 CPU s for tests/test_sample_sizes_per_direction.py
# and tests/test_conditional_envelope_reuse.py, the same wall time).  Set before numpy is
# imported (the workers and any subprocess inherit it); a value set by the caller wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
# OpenMP threads (torch's and its MKL's, libgomp) that wait sleep instead of spinning: with
# every core busy with a test worker, a spinning torch thread takes its time from the
# other worker (measured under -n 2, twice each: 31.0 -> 25.6 CPU s, 17.4 -> 15.7 s wall
# for the torch_noise/torch_dpsgd/torch_opacus/interop_opacus/individual_opacus/
# sampled_torch_backend files; within the noise, 80-84 CPU s either way, for the examples
# and Opacus-training files, which mostly run torch on one thread).  Only how idle threads
# wait changes, not the threads or what they compute.  Read when libgomp loads (the first
# torch import): set before; a value set by the caller wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
if "numpy" in sys.modules:       # imported already (by a plugin): limit it at run time
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - only without scikit-learn's dependency
        pass
    else:
        threadpool_limits(int(os.environ["OPENBLAS_NUM_THREADS"]), user_api="blas")

sys.path.insert(0, os.path.dirname(__file__))


# --- Numba kernels compiled once, before the pytest-xdist workers start -------------------
# From an empty Numba cache (a fresh clone) the workers and the subprocesses of the tests
# each compiled the kernels they met first, the same kernel several times over; the
# controller compiles them once, split over as many processes as there will be workers
# (tests/numba_warmup.py), and every later process loads them from the disk cache.
# Runs of a few test files skip it; SAMPLEDPRV_NO_WARMUP=1 turns it off.

@pytest.hookimpl(optionalhook=True)
def pytest_xdist_setupnodes(config, specs):
    """Called by the xdist controller just before it starts the workers."""
    n = len(specs)
    if n < 2 or os.environ.get("SAMPLEDPRV_NO_WARMUP"):
        return
    import numba_warmup  # noqa: PLC0415 - only the xdist controller needs it

    if not numba_warmup.covers_the_suite(
            config.args, config.args_source == pytest.Config.ArgsSource.ARGS,
            config.invocation_params.dir):
        return
    seconds, failed = numba_warmup.warm_up(n)
    config._numba_warmup = (n, seconds, failed)
    term = config.pluginmanager.get_plugin("terminalreporter")
    if term is not None:
        term.write_line(f"numba warm-up: {len(numba_warmup.KERNELS)} kernels in {n} "
                        f"processes, {seconds:.1f} s")
        for line in failed:
            term.write_line(f"numba warm-up: not compiled: {line}", yellow=True)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if getattr(config, "_numba_warmup", None) is None:
        return
    import numba_warmup  # noqa: PLC0415 - only the xdist controller needs it

    extra = numba_warmup.missed()
    if extra:
        terminalreporter.section("numba warm-up")
        terminalreporter.write_line("signatures compiled by the tests that "
                                    "tests/numba_warmup.py does not list:")
        for line in extra:
            terminalreporter.write_line(f"  {line}")


# --- the collector's full passes skip what collection built ---------------------------------
# A worker holds hundreds of thousands of long-lived objects once it has collected the
# suite (about 400,000 from importing the stack alone: the
# modules of numpy, scipy, torch, Dask, the peers and the package, and the test items);
# every full (generation 2) pass of Python's cyclic collector walked them all again.
# gc.freeze() moves them to a permanent generation that the collector skips; reference
# counting still frees anything that becomes unreachable, and objects created by the
# tests are collected as before.  Measured with gc.callbacks over a whole run (both
# workers): collector time 6.2 -> 4.4 s, of it full passes 4.9 -> 3.0 s.

def pytest_collection_finish(session):
    import gc  # noqa: PLC0415 - only here

    gc.freeze()
