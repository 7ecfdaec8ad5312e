"""Cold start of the sampled accountant: first call with an empty Numba cache vs warm.

Each case runs in fresh subprocesses with a temporary, initially empty
``NUMBA_CACHE_DIR``:

* **cold**: the first process, empty cache (everything it needs is compiled);
* **warm**: a second fresh process on the cache the first one filled;
* **hot**: the same call repeated inside the warm process (nothing loaded any more).

Printed: the seconds of the call itself (``import sampledprv`` excluded and printed
apart), the cold - warm difference (the goal: at most 10 s on a 2-core machine), the CPU
model and the load average before and after.  Usage::

    python benchmarks/bench_cold_start.py [--n-samples 1000000] [--cases gauss,gg]
        [--tree PATH]       # baseline: git archive <old commit> sampledprv | tar -x -C PATH
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _machine import cpu_model  # noqa: E402

CASES = {
    "gauss": ("sp.Gaussian(2.0)", 10),
    "gg": ("sp.PoissonSubsampled(sp.GeneralizedGaussian(beta=1.5, scale=2.0), q=0.01)", 10),
}

CHILD = r"""
import json, sys, time
def cpu():
    return time.process_time()
t0, c0 = time.perf_counter(), cpu()
import sampledprv as sp
t1, c1 = time.perf_counter(), cpu()
mech = {mech}
acc = sp.SampledAccountant(n_samples={n}, progress=False)
iv = acc.compose(mech, count={count}).epsilon(delta=1e-5)
t2, c2 = time.perf_counter(), cpu()
iv2 = sp.SampledAccountant(n_samples={n}, progress=False).compose(mech, count={count}) \
    .epsilon(delta=1e-5)
t3, c3 = time.perf_counter(), cpu()
print(json.dumps(dict(imp=t1 - t0, call=t2 - t1, again=t3 - t2, call_cpu=c2 - c1,
                      again_cpu=c3 - c2, lo=float(iv.lower), hi=float(iv.upper))))
"""


def _load() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:          # pragma: no cover - not on this platform
        return "n/a"


def _run(code: str, cache: str, root: str) -> dict:
    env = dict(os.environ, NUMBA_CACHE_DIR=cache)
    env["PYTHONPATH"] = root
    t = time.perf_counter()
    # cwd = the tree: ``python -c`` puts the working directory first on sys.path
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=False, cwd=root)
    wall = time.perf_counter() - t
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-3000:])
    res = json.loads(out.stdout.strip().splitlines()[-1])
    res["wall"] = wall
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-samples", type=int, default=10**6)
    ap.add_argument("--cases", default="gauss,gg")
    ap.add_argument("--tree", default=str(Path(__file__).resolve().parents[1]),
                    help="source tree to import sampledprv from (e.g. an export of an "
                         "older commit, for a baseline)")
    args = ap.parse_args()
    print(f"sampledprv from {args.tree}")
    print(f"CPU: {cpu_model()}, {os.cpu_count()} logical cores; load before: {_load()}")
    print(f"{'case':6s} {'import':>7s} {'cold':>7s} {'warm':>7s} {'hot':>7s} "
          f"{'cold-warm':>9s} | CPU s: {'cold':>6s} {'warm':>6s} {'cold-warm':>9s}  "
          "interval (cold == warm?)")
    for name in args.cases.split(","):
        mech, count = CASES[name]
        code = CHILD.format(mech=mech, n=args.n_samples, count=count)
        with tempfile.TemporaryDirectory(prefix="numba-cold-") as cache:
            cold = _run(code, cache, args.tree)
            warm = _run(code, cache, args.tree)
        same = (cold["lo"], cold["hi"]) == (warm["lo"], warm["hi"])
        print(f"{name:6s} {warm['imp']:7.2f} {cold['call']:7.2f} {warm['call']:7.2f} "
              f"{warm['again']:7.2f} {cold['call'] - warm['call']:9.2f} |        "
              f"{cold['call_cpu']:6.2f} {warm['call_cpu']:6.2f} "
              f"{cold['call_cpu'] - warm['call_cpu']:9.2f}  "
              f"[{cold['lo']:.6f}, {cold['hi']:.6f}] ({'same' if same else 'DIFFERENT'})",
              flush=True)
    print(f"load after: {_load()}")
    print("seconds (wall, then CPU of all threads of the process); cold = first call in a fresh process with an empty NUMBA_CACHE_DIR, "
          "warm = same call in a second fresh process on that cache, hot = the call "
          "repeated in the warm process")


if __name__ == "__main__":
    main()
