"""Benchmark: DP-SGD accounting at k in {1e6, 1e7, 1e8}, sampledprv vs dp-accounting.

Setting: Poisson-subsampled Gaussian, sigma 0.8, q 4e-3, delta 1e-5, eps_error 0.01
(sampledprv ``delta_error=1e-10``; dp-accounting ``PLDAccountant()`` defaults).

Two measurements per ``k``:

* **same process**: warm (imports done, kernels compiled by a ``k=10`` call), best of
  ``--repeat`` runs of "construct + compose + epsilon";
* **whole process**: ``python -c "..."`` run as a subprocess, imports and compilation
  included (both packages' Python bytecode written first where missing, as an install
  from a wheel has it), ``--repeat`` times for each tool: the least wall time and CPU seconds (user +
  system, ``os.wait4``, waited for without polling) and the largest peak RSS
  (``VmHWM``).

Both print CPU seconds beside wall time: on a shared machine the CPU seconds are the
fair comparison (ours builds the two directions in two threads, dp-accounting uses one
core).  ``--phases`` adds our build's CPU budget phase by phase against the FFT floor
(``_phases.py``; the design notes' "Time budget against the arithmetic floor").

It prints the CPU model and load average, our interval and its width against
``2 eps_error`` plus the realised error terms (the epsilon shift: the discretization
shifts' certified mean errors; the delta error terms), dp-accounting's number, and the ratios
``dp-accounting / ours`` (> 1: we are faster / smaller).  A tool that fails (for example
a grid above ``max_grid_size``) is reported with its error message.

Usage::

    python benchmarks/bench_long_k.py                   # k = 1e6, 1e7, 1e8
    python benchmarks/bench_long_k.py --ks 1e6 --repeat 3
    python benchmarks/bench_long_k.py --ks 1e6 --phases   # and the phase budget
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
import time

SIGMA, Q, DELTA, EPS_ERROR = 0.8, 4e-3, 1e-5, 0.01

OURS = f"""
import sampledprv as sp
from sampledprv.mechanisms.laws import clear_law_cache
acc = sp.Accountant(eps_error={EPS_ERROR}, delta_error=1e-10)
acc.compose(sp.PoissonSubsampled(sp.Gaussian({SIGMA}), q={Q}), count=K)
iv = acc.epsilon(delta={DELTA})
d = iv.details
print(repr((iv.lower, iv.estimate, iv.upper, d['delta_error_upper'], d['delta_error_lower'],
            d['grid_points'], max(x for k, x in d['epsilon_shift'].items()
                                  if k not in d.get('screened', ())),
            ','.join(d.get('screened', ())) or '-')))
"""

DPA = f"""
import dp_accounting
from dp_accounting.pld import pld_privacy_accountant
acc = pld_privacy_accountant.PLDAccountant()
acc.compose(dp_accounting.PoissonSampledDpEvent({Q}, dp_accounting.GaussianDpEvent({SIGMA})), K)
print(repr(acc.get_epsilon({DELTA})))
"""


from _machine import cpu_model  # noqa: E402  (benchmarks/ is on sys.path)

from sampledprv.mechanisms.laws import clear_law_cache  # noqa: E402  (the parent forgets
# its shared laws before each timed call; the children run the code strings above)


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def in_process(code: str, k: int, repeat: int):
    run = code.replace("print(repr(", "_out = ((")
    exec(compile(run.replace("K", "10"), "warm-up", "exec"), {})  # imports, compilation
    best, best_cpu, out = None, None, None
    for _ in range(repeat):
        ns: dict = {}
        clear_law_cache()   # time a cold build: no laws shared from earlier calls
        t0, c0 = time.perf_counter(), time.process_time()
        try:
            exec(compile(run.replace("K", str(k)), "bench", "exec"), ns)
        except Exception as exc:  # noqa: BLE001 - a failure is a result
            return None, None, None, f"{type(exc).__name__}: {str(exc)[:300]}"
        dt, dc = time.perf_counter() - t0, time.process_time() - c0
        best = dt if best is None else min(best, dt)
        best_cpu = dc if best_cpu is None else min(best_cpu, dc)
        out = ns.get("_out")
    return best, best_cpu, out, None


# The child reports its own peak RSS: VmHWM of its address space (rusage's ru_maxrss
# would include the parent's pages inherited through fork before exec).
_HWM = """
for _line in open('/proc/self/status'):
    if _line.startswith('VmHWM:'):
        print('VmHWM', int(_line.split()[1]) * 1024)
"""


def whole_process(code: str, k: int, timeout: float):
    """Wall time, exit status, the child's own peak RSS (VmHWM) and its CPU seconds (user
    + system, all threads: ``wait4``'s resource usage)."""
    import tempfile
    with tempfile.TemporaryFile(mode="w+") as out:
        clear_law_cache()   # time a cold build: no laws shared from earlier calls
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-c", code.replace("K", str(k)) + _HWM],
                                stdout=out, stderr=subprocess.STDOUT)
        # a blocking wait (a polling loop would add up to its period to the wall time);
        # a timer kills the child past the timeout
        killer = threading.Timer(timeout, proc.kill)
        killer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            killer.cancel()
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)   # reaped here, not by Popen
        if wall >= timeout:
            return None, "timeout", None, None
        rc = os.waitstatus_to_exitcode(status)
        out.seek(0)
        hwm = [int(ln.split()[1]) for ln in out.read().splitlines() if ln.startswith("VmHWM")]
        cpu = usage.ru_utime + usage.ru_stime
        return wall, rc, (hwm[-1] if hwm else None), cpu


def best_whole(code: str, k: int, timeout: float, repeat: int):
    """:func:`whole_process` ``repeat`` times: the least wall time and CPU seconds, the
    largest peak RSS, and the first failing exit status if any."""
    runs = [whole_process(code, k, timeout) for _ in range(max(1, repeat))]
    bad = [r for r in runs if r[1] != 0]
    if bad:
        return bad[0]
    return (min(r[0] for r in runs), 0, max((r[2] or 0) for r in runs) or None,
            min(r[3] for r in runs))


def phases(k: int) -> None:
    """``--phases``: the CPU budget of our build, phase by phase (``_phases.py``)."""
    import sampledprv as sp
    from _phases import phase_budget, print_budget
    from sampledprv.analytic.build import directions_of

    mech = sp.PoissonSubsampled(sp.Gaussian(SIGMA), q=Q)

    def run():
        acc = sp.Accountant(eps_error=EPS_ERROR, delta_error=1e-10)
        acc.compose(mech, count=k)
        # the budget of one full build of both directions (a query over both directions
        # builds the dominated one only at screening accuracy; the design notes,
        # "Screening the dominated direction")
        acc._build()
        return acc.epsilon(delta=DELTA)

    clear_law_cache()
    clock, total, iv = phase_budget(run)
    print(f"  phases run: [{iv.lower:.4f}, {iv.upper:.4f}] (must equal the line above)")
    print_budget(clock, total, directions=len(directions_of({mech: k})))


def compile_bytecode() -> str:
    """Write the bytecode of both tools' packages where it is missing, as ``pip install``
    does: an editable install of sampledprv has none, and where
    ``PYTHONDONTWRITEBYTECODE`` is set (as on this project's machines) every child
    process would compile sampledprv's sources again (about 45 ms of a 0.55 s run at
    k = 1e6) while dp-accounting's came compiled from its wheel."""
    import compileall
    import importlib.util
    done = []
    for name in ("sampledprv", "dp_accounting"):
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            continue
        for path in spec.submodule_search_locations:
            compileall.compile_dir(path, quiet=1)
        done.append(name)
    return ", ".join(done)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ks", default="1e6,1e7,1e8")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=600.0)
    ap.add_argument("--phases", action="store_true",
                    help="also print our build's CPU budget phase by phase (one more run)")
    args = ap.parse_args()
    ks = [int(float(x)) for x in args.ks.split(",")]
    print(f"CPU: {cpu_model()} ({os.cpu_count()} logical CPUs); load average {load()}")
    print(f"bytecode compiled where missing (as pip install does): {compile_bytecode()}")
    print(f"DP-SGD sigma={SIGMA}, q={Q}, delta={DELTA}, eps_error={EPS_ERROR}\n")
    sec = lambda t: "-" if t is None else f"{t:.2f} s"  # noqa: E731
    for k in ks:
        print(f"== k = {k:.0e} (load {load()})")
        t_ours, c_ours, res, err = in_process(OURS, k, args.repeat)
        t_dpa, c_dpa, eps_dpa, err_dpa = in_process(DPA, k, args.repeat)
        if res is not None:
            low, est, up, e_up, e_low, grid, shift, screened = res
            print(f"  ours: [{low:.4f}, {up:.4f}] estimate {est:.4f}, width {up - low:.5f} "
                  f"(2 eps_error = {2 * EPS_ERROR}; epsilon shift {shift:.2g} per side; "
                  f"delta error terms {e_up:.2g} / {e_low:.2g} against delta {DELTA}), "
                  f"grid {grid:,}; screened (dominated) directions: {screened}")
        else:
            print(f"  ours: FAILED: {err}")
        print(f"  dp-accounting: {eps_dpa if eps_dpa is not None else 'FAILED: ' + str(err_dpa)}"
              + (f" ({'inside' if res and res[0] <= eps_dpa <= res[2] else 'outside'} ours)"
                 if eps_dpa is not None and res else ""))
        ratio = f"{t_dpa / t_ours:.2f}x" if t_ours and t_dpa else "-"
        cratio = f"{c_dpa / c_ours:.2f}x" if c_ours and c_dpa else "-"
        print(f"  same process (warm, best of {args.repeat}): ours {sec(t_ours)} wall, "
              f"{sec(c_ours)} CPU; dp-accounting {sec(t_dpa)} wall, {sec(c_dpa)} CPU; "
              f"dp-accounting / ours = {ratio} wall, {cratio} CPU")
        w_ours, rc_o, m_ours, cpu_o = best_whole(OURS, k, args.timeout, args.repeat)
        w_dpa, rc_d, m_dpa, cpu_d = best_whole(DPA, k, args.timeout, args.repeat)
        fmt_m = lambda b: "-" if b is None else f"{b / 2**20:.0f} MiB"  # noqa: E731
        ok = rc_o == 0 and rc_d == 0
        print(f"  whole process (best of {args.repeat}): ours {sec(w_ours)} wall, {sec(cpu_o)} CPU (rc {rc_o}, peak "
              f"RSS {fmt_m(m_ours)}), dp-accounting {sec(w_dpa)} wall, {sec(cpu_d)} CPU (rc "
              f"{rc_d}, peak RSS {fmt_m(m_dpa)}); time ratio "
              f"{f'{w_dpa / w_ours:.2f}x' if w_ours and w_dpa and ok else '-'} wall, "
              f"{f'{cpu_d / cpu_o:.2f}x' if cpu_o and cpu_d and ok else '-'} CPU, memory "
              f"ratio {f'{m_dpa / m_ours:.2f}x' if m_ours and m_dpa else '-'} "
              f"(load {load()})")
        if args.phases:
            phases(k)
    print(f"\nload average at the end: {load()}")


if __name__ == "__main__":
    main()
