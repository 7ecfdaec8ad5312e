import os
import sys

# One OpenBLAS thread per test process.  The suite runs in parallel worker processes
# (pytest-xdist, scripts/test.sh) that already keep every core busy; OpenBLAS' extra
# threads there do no useful work but busy-wait between the matrix products of the
# envelope builds (measured: 28.4 -> 17.5 CPU s for tests/test_sample_sizes_per_direction.py
# and tests/test_conditional_envelope_reuse.py, the same wall time).  Set before numpy is
# imported (the workers and any subprocess inherit it); a value set by the caller wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
if "numpy" in sys.modules:       # imported already (by a plugin): limit it at run time
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - only without scikit-learn's dependency
        pass
    else:
        threadpool_limits(int(os.environ["OPENBLAS_NUM_THREADS"]), user_api="blas")

sys.path.insert(0, os.path.dirname(__file__))
