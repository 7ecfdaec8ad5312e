"""Matrix-factorization training (DP-FTRL / banded MF): certified intervals, with times.

The acceptance cases of the matrix-mechanism work (default ``alpha = 1e-9``, whole
process, wall and CPU time, CPU model and load), each beside the no-amplification
Gaussian bound (sensitivity :math:`\\max_j\\|m_j\\|`, exact):

1. fixed bin, n = 100, b = 10, ``c_col = [1, 1/2, 1/4, 1/8]`` normalised, sigma = 3:
   ``delta(1)`` in each direction; target width <= 3% of the value, <= 60 s.
2. same, sigma = 4: ``epsilon(1e-5)``; target width <= 0.05, <= 60 s.
3. fixed bin, n = 1000, b = 100, same ``c_col``, sigma = 2: ``epsilon(1e-5)``; target
   width <= 0.1, <= 120 s.
4. ``c_col = [1]``, n = 100, b = 10, sigma = 3: ``epsilon(1e-5)`` against
   ``RandomAllocation(3/sqrt(10), 10, 1)``; target: the interval contains the
   random-allocation estimate and is at most twice as wide.

For the fixed bin the sampled accountant also draws ``n / 10`` points of the tilted law
:math:`P_a` for the remove direction's tail (design notes, "Tilted sampling of the
fixed-bin matrix mechanism"); each line says which bound set each end.
jax_privacy's Monte Carlo recipe (an uncertified estimate) runs beside the epsilon
cases when ``SAMPLEDPRV_JAX_PRIVACY_PYTHON`` names a Python that has ``jax_privacy``
(``pip install jax-privacy`` in its own environment; it is not a dependency), with
``SAMPLEDPRV_JAX_PRIVACY_N`` draws per direction (default 1e5), through
``peer_jax_privacy_mc.py`` in a subprocess.
Each case runs in a fresh process (``--case N`` runs one; the default runs all in
subprocesses, so the times include imports and compilation).

Usage::

    python benchmarks/bench_matrix_mechanism.py
    python benchmarks/bench_matrix_mechanism.py --case 2 --n 6e7
"""

from __future__ import annotations

import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _machine import run_cases  # noqa: E402

DEFAULT_N = {1: 12_000_000, 2: 6_000_000, 3: 2_000_000, 4: 4_000_000}



def _c4() -> tuple:
    import numpy as np
    c = np.array([1.0, 0.5, 0.25, 0.125])
    return tuple(c / np.linalg.norm(c))


def _no_amplification(spec, what: str):
    import numpy as np
    import sampledprv as sp
    s = math.sqrt(float(np.max(np.diag(spec.scaled_gram()))))   # max_j ||m_j|| / sigma
    acc = sp.Accountant().compose(sp.Gaussian(1.0 / s))
    return acc.delta(1.0) if what == "delta" else acc.epsilon(1e-5)


def _end(iv, which: str) -> str:
    """Which bound set an end (the tilted draws name their order and draw count)."""
    name = iv.details.get(f"{which}_end")
    if name is None:
        return "the own sampled envelopes (no other bound)"
    if name == "tilted sampling":
        part = iv.method.split(f"{which} end: ", 1)[1]
        return part.split("); ", 1)[0] + ")"
    return name


def case1(n: int) -> None:
    import sampledprv as sp
    spec = sp.MatrixMechanism(3.0, 100, sp.FixedBin(10), c_col=_c4())
    t0, c0 = time.time(), time.process_time()
    acc = sp.SampledAccountant(n, seed=1, progress=False).compose(spec)
    res = {d: acc.delta(1.0, direction=d) for d in ("remove", "add")}
    wall, cpu = time.time() - t0, time.process_time() - c0
    print(f"case 1  fixed bin n=100 b=10 4 bands sigma=3, delta(1), n={n:,}")
    for d, iv in res.items():
        w = (iv.upper - iv.lower) / iv.estimate
        print(f"  {d:7s} [{iv.lower:.5f}, {iv.upper:.5f}] (estimate {iv.estimate:.5f}) "
              f"width {100 * w:.2f}%  target <= 3%: {'met' if w <= 0.03 else 'NOT met'}")
        print(f"          upper set by {_end(iv, 'upper')}; lower by {_end(iv, 'lower')}")
    print(f"  no amplification (Gaussian) delta(1) = {_no_amplification(spec, 'delta').upper:.5f}")
    print(f"  time     {wall:.1f} s wall, {cpu:.1f} s CPU (target <= 60 s wall)")


def _eps_case(label: str, spec, n: int, target: float, limit: float) -> None:
    import sampledprv as sp
    t0, c0 = time.time(), time.process_time()
    iv = sp.SampledAccountant(n, seed=1, progress=False).compose(spec).epsilon(1e-5)
    wall, cpu = time.time() - t0, time.process_time() - c0
    w = iv.upper - iv.lower
    print(f"{label}, epsilon(1e-5), n={n:,}")
    print(f"  certified [{iv.lower:.4f}, {iv.upper:.4f}] (estimate {iv.estimate:.4f}) "
          f"width {w:.4f}  target <= {target}: {'met' if w <= target else 'NOT met'}")
    print(f"  ends set by: upper {_end(iv, 'upper')}; lower {_end(iv, 'lower')}")
    print(f"  no amplification (Gaussian) epsilon = {_no_amplification(spec, 'eps').upper:.4f}")
    print(f"  time     {wall:.1f} s wall, {cpu:.1f} s CPU (target <= {limit:.0f} s wall)")
    _jax_privacy(spec)


def _jax_privacy(spec) -> None:
    """jax_privacy's Monte Carlo estimate of epsilon(1e-5), where a Python with it is
    named (module docstring); an uncertified estimate, labelled so."""
    import json
    import subprocess
    py = os.environ.get("SAMPLEDPRV_JAX_PRIVACY_PYTHON")
    if not py:
        print("  jax_privacy Monte Carlo: not run (set SAMPLEDPRV_JAX_PRIVACY_PYTHON)")
        return
    n = int(float(os.environ.get("SAMPLEDPRV_JAX_PRIVACY_N", "1e5")))
    c_col = ",".join(repr(float(x)) for x in spec.c_col)
    out = subprocess.run([py, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                           "peer_jax_privacy_mc.py"),
                          "--sigma", repr(spec.sigma), "--steps", str(spec.steps),
                          "--bins", str(spec.sampler.bins), "--c-col", c_col,
                          "--delta", "1e-5", "--n", str(n)],
                         capture_output=True, text=True, check=False)
    if out.returncode != 0:
        print(f"  jax_privacy Monte Carlo: failed ({out.stderr.strip().splitlines()[-1:]})")
        return
    res = json.loads(out.stdout.strip().splitlines()[-1])
    print(f"  jax_privacy Monte Carlo (UNCERTIFIED estimate, no confidence bound): "
          f"epsilon {res['epsilon']:.4f} from {n:,} draws per direction in "
          f"{res['seconds']:.1f} s")


def case2(n: int) -> None:
    import sampledprv as sp
    _eps_case("case 2  fixed bin n=100 b=10 4 bands sigma=4",
              sp.MatrixMechanism(4.0, 100, sp.FixedBin(10), c_col=_c4()), n, 0.05, 60)


def case3(n: int) -> None:
    import sampledprv as sp
    _eps_case("case 3  fixed bin n=1000 b=100 4 bands sigma=2",
              sp.MatrixMechanism(2.0, 1000, sp.FixedBin(100), c_col=_c4()), n, 0.1, 120)


def case4(n: int) -> None:
    import sampledprv as sp
    t0 = time.time()
    mf = sp.SampledAccountant(n, seed=1, progress=False).compose(
        sp.MatrixMechanism(3.0, 100, sp.FixedBin(10), c_col=(1.0,))).epsilon(1e-5)
    t1 = time.time()
    ra = sp.SampledAccountant(n, seed=2, progress=False).compose(
        sp.RandomAllocation(3.0 / math.sqrt(10.0), 10, 1)).epsilon(1e-5)
    t2 = time.time()
    ok = mf.lower <= ra.estimate <= mf.upper and \
        (mf.upper - mf.lower) <= 2.0 * (ra.upper - ra.lower)
    print(f"case 4  c_col=[1] fixed bin n=100 b=10 sigma=3 vs RandomAllocation(3/sqrt(10), 10), "
          f"epsilon(1e-5), n={n:,}")
    print(f"  matrix     [{mf.lower:.4f}, {mf.upper:.4f}] (estimate {mf.estimate:.4f}) "
          f"width {mf.upper - mf.lower:.4f}, {t1 - t0:.1f} s")
    print(f"             upper set by {_end(mf, 'upper')}; lower by {_end(mf, 'lower')}")
    print(f"  allocation [{ra.lower:.4f}, {ra.upper:.4f}] (estimate {ra.estimate:.4f}) "
          f"width {ra.upper - ra.lower:.4f}, {t2 - t1:.1f} s")
    print(f"  contains the allocation estimate and <= 2x its width: {'met' if ok else 'NOT met'}")


def main() -> None:
    run_cases(__file__, {1: case1, 2: case2, 3: case3, 4: case4}, DEFAULT_N, (1, 2, 3, 4), __doc__)

if __name__ == "__main__":
    main()
