"""Benchmark: DP-SGD accounting, sampledprv vs prv-accountant, opacus PRV and dp-accounting PLD.

The DP-SGD setting: the Poisson-subsampled Gaussian with ``sigma=0.8``, ``q=4e-3``,
``k`` steps in {1e3, 1e4, 1e5, 1e6}, ``eps_error=0.01``, ``delta=1e-5``.  For every
``k`` and tool the script measures, in this one process,

* **time**: end to end, *constructing the accountant and computing epsilon* (best of
  ``--repeat`` runs, after one untimed warm-up call at ``k=10`` per tool so that imports,
  Numba JIT/caches and scipy plans are not charged to the first ``k``);
* **traced peak** (the ``mem`` column and the ``mem/ours`` ratio): ``tracemalloc`` peak
  of an extra, separate run (tracing slows Python code, so it is never the timed run).
  numpy registers its buffers with tracemalloc, so arrays are counted; memory that C/C++
  code takes with plain ``malloc`` (pocketfft work buffers, Numba NRT arrays, torch) is
  *not*;
* **RSS peak** (the ``rss`` column and ``rss/ours``): the resident-set high-water mark
  during the timed runs minus the RSS just before the call.  On Linux the kernel's
  ``VmHWM`` is reset through ``/proc/self/clear_refs`` before each call (exact); elsewhere
  a psutil thread polls the RSS every 2 ms.  Freed heap is handed back (``gc.collect`` +
  ``malloc_trim``) before each call so that one tool's leftovers do not hide the next
  one's growth.  This catches every allocation, traced or not.

and prints ``lower / estimate / upper`` of epsilon, the interval width, and the ratios
``peer time / our time`` and ``peer memory / our memory`` (> 1: we are better).

The tools and exactly what is called:

* ``ours``: ``sp.Accountant(eps_error=0.01, delta_error=1e-10).compose(
  sp.PoissonSubsampled(sp.Gaussian(0.8), q=4e-3), count=k).epsilon(delta=1e-5)`` ->
  certified ``Interval(lower, estimate, upper)``;
* ``prv``: prv-accountant's ``PRVAccountant(prvs=[PoissonSubsampledGaussianMechanism(
  q, sigma)], max_self_compositions=[k], eps_error=0.01, delta_error=delta/1000)
  .compute_epsilon(delta, [k])`` -> ``(lower, estimate, upper)``;
* ``opacus``: ``opacus.accountants.PRVAccountant`` with ``history=[(sigma, q, k)]``.  Its
  public ``get_epsilon(delta, eps_error=0.01)`` returns **only the upper bound**
  (``delta_error`` defaults to ``delta/1000``).  By default the script runs the body of
  ``get_epsilon`` itself -- ``_get_dprv(eps_error, delta_error).compute_epsilon(delta,
  delta_error, eps_error)``, the same work -- to show all three numbers; pass
  ``--opacus-public`` to call ``get_epsilon`` (then lower and estimate are blank);
* ``dpa``: dp-accounting's ``PLDAccountant()`` (default ``value_discretization_interval
  =1e-4``) ``.compose(PoissonSampledDpEvent(q, GaussianDpEvent(sigma)), k)
  .get_epsilon(delta)`` -> one number, a pessimistic (upper) bound with no lower bound
  and no stated error; shown in the ``upper`` column and used as its estimate.

prv-accountant at ``k=1e6`` needs about 19 GB and 400 s (recorded); it is skipped by
default (``--skip-slow``) and its recorded figures are printed instead, marked
``not run, recorded``.  ``--no-skip-slow`` runs it anyway.

Usage::

    python benchmarks/bench_dpsgd_accounting.py                  # full k set
    python benchmarks/bench_dpsgd_accounting.py --quick          # k in {1e3, 1e4}
    python benchmarks/bench_dpsgd_accounting.py --ks 1e3,1e5 --peers prv,dpa --repeat 3
    python benchmarks/bench_dpsgd_accounting.py --max-peer-seconds 60 --markdown
"""

from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import datetime
import gc
import importlib.metadata
import json
import os
import platform
import subprocess
import sys
import threading
import time
import tracemalloc
from dataclasses import asdict, dataclass, field
from typing import Callable, Optional

SIGMA = 0.8
Q = 4e-3
DELTA = 1e-5
EPS_ERROR = 0.01
OUR_DELTA_ERROR = 1e-10
PEER_DELTA_ERROR = DELTA / 1000
DEFAULT_KS = (1_000, 10_000, 100_000, 1_000_000)
PEERS = ("prv", "opacus", "dpa")
WARMUP_K = 10

# Figures recorded in an earlier run on this machine (seconds, bytes): used for runs that are
# skipped, printed with the mark "not run, recorded".
RECORDED = {
    ("prv", 10_000): (2.3, None),
    ("prv", 1_000_000): (401.0, 19e9),
    ("opacus", 10_000): (0.30, None),
    ("opacus", 1_000_000): (28.0, 4e9),
    ("dpa", 10_000): (0.83, None),
    ("dpa", 1_000_000): (1.2, 0.4e9),
}
# Runs that --skip-slow (default on) does not attempt: they would exhaust the RAM of a
# 24 GiB machine or take minutes.
SLOW = {("prv", 1_000_000)}


# ============================================================================ the tools
def _forget_shared_laws() -> None:
    """sampledprv shares the laws of a spec within a process; forget them (if it is loaded)
    so that every timed call of ours builds them, as a first call would."""
    laws = sys.modules.get("sampledprv.mechanisms.laws")
    if laws is not None:
        laws.clear_law_cache()


def run_ours(k: int) -> tuple[Optional[float], Optional[float], Optional[float], dict]:
    import sampledprv as sp

    acc = sp.Accountant(eps_error=EPS_ERROR, delta_error=OUR_DELTA_ERROR)
    acc.compose(sp.PoissonSubsampled(sp.Gaussian(SIGMA), q=Q), count=k)
    iv = acc.epsilon(delta=DELTA)
    det = iv.details or {}
    return iv.lower, iv.estimate, iv.upper, {
        "certification": iv.certification,
        "grid_points": det.get("grid_points"),
        "mesh": det.get("mesh"),
    }


def run_prv(k: int):
    from prv_accountant import PRVAccountant
    from prv_accountant.privacy_random_variables import PoissonSubsampledGaussianMechanism

    acc = PRVAccountant(
        prvs=[PoissonSubsampledGaussianMechanism(noise_multiplier=SIGMA, sampling_probability=Q)],
        max_self_compositions=[k],
        eps_error=EPS_ERROR,
        delta_error=PEER_DELTA_ERROR,
    )
    low, est, up = acc.compute_epsilon(delta=DELTA, num_self_compositions=[k])
    return float(low), float(est), float(up), {}


def make_run_opacus(public: bool):
    def run_opacus(k: int):
        from opacus.accountants import PRVAccountant

        acc = PRVAccountant()
        acc.history = [(SIGMA, Q, k)]      # what k calls of step(noise_multiplier, sample_rate) leave
        if public:
            up = acc.get_epsilon(DELTA, eps_error=EPS_ERROR)
            return None, None, float(up), {"api": "get_epsilon (upper only)"}
        # The body of opacus 1.6 PRVAccountant.get_epsilon, keeping all three numbers.
        dprv = acc._get_dprv(eps_error=EPS_ERROR, delta_error=PEER_DELTA_ERROR)
        low, est, up = dprv.compute_epsilon(DELTA, PEER_DELTA_ERROR, EPS_ERROR)
        return float(low), float(est), float(up), {
            "api": "_get_dprv().compute_epsilon (get_epsilon returns the upper only)"}
    return run_opacus


def run_dpa(k: int):
    import dp_accounting
    from dp_accounting.pld import pld_privacy_accountant

    acc = pld_privacy_accountant.PLDAccountant()
    acc.compose(dp_accounting.PoissonSampledDpEvent(Q, dp_accounting.GaussianDpEvent(SIGMA)), k)
    eps = acc.get_epsilon(DELTA)
    # One-sided: a pessimistic estimate that upper-bounds epsilon; no lower bound.
    return None, float(eps), float(eps), {"note": "one-sided (upper) bound"}


# ============================================================================ memory
_LIBC = None
if sys.platform.startswith("linux"):
    try:
        _LIBC = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        _LIBC = None


def release_memory() -> None:
    """gc + hand freed heap back to the OS, so RSS deltas start from a clean state."""
    gc.collect()
    if _LIBC is not None:
        try:
            _LIBC.malloc_trim(0)
        except AttributeError:
            pass


def _status_kb(key: str) -> Optional[int]:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def _can_reset_hwm() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return _status_kb("VmHWM") is not None
    except OSError:
        return False


class RSSPeak:
    """Peak RSS growth during a block: exact VmHWM reset on Linux, psutil polling otherwise."""

    HWM = _can_reset_hwm()

    def __enter__(self) -> "RSSPeak":
        self.peak_delta = None
        if self.HWM:
            with open("/proc/self/clear_refs", "w") as fh:
                fh.write("5")
            self.start = _status_kb("VmRSS") * 1024
            return self
        import psutil

        self._proc = psutil.Process()
        self.start = self._proc.memory_info().rss
        self._max = self.start
        self._stop = threading.Event()

        def poll():
            while not self._stop.is_set():
                self._max = max(self._max, self._proc.memory_info().rss)
                self._stop.wait(0.002)

        self._thread = threading.Thread(target=poll, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        if self.HWM:
            self.peak_delta = max(0, _status_kb("VmHWM") * 1024 - self.start)
        else:
            self._stop.set()
            self._thread.join()
            self._max = max(self._max, self._proc.memory_info().rss)
            self.peak_delta = max(0, self._max - self.start)

    @classmethod
    def method(cls) -> str:
        return ("VmHWM reset via /proc/self/clear_refs" if cls.HWM
                else "psutil RSS polling every 2 ms")


# ============================================================================ measuring
@dataclass
class Row:
    k: int
    tool: str
    status: str = "ok"                  # ok | skipped | recorded | error
    time_s: Optional[float] = None
    times_s: list = field(default_factory=list)
    traced_peak_b: Optional[float] = None
    rss_peak_b: Optional[float] = None
    lower: Optional[float] = None
    estimate: Optional[float] = None
    upper: Optional[float] = None
    extra: dict = field(default_factory=dict)
    message: str = ""

    @property
    def width(self) -> Optional[float]:
        if self.lower is None or self.upper is None:
            return None
        return self.upper - self.lower


def measure(tool: str, fn: Callable, k: int, repeat: int, trace: bool,
            repeat_budget: float = 30.0) -> Row:
    row = Row(k=k, tool=tool)
    try:
        rss = []
        for i in range(repeat):
            if i > 0 and sum(row.times_s) > repeat_budget:
                break                   # slow cells are not repeated (see --repeat-budget)
            release_memory()
            with RSSPeak() as peak:
                _forget_shared_laws()   # time a cold build of ours every repeat
                t0 = time.perf_counter()
                low, est, up, extra = fn(k)
                dt = time.perf_counter() - t0
            row.times_s.append(dt)
            rss.append(peak.peak_delta)
        row.time_s = min(row.times_s)
        row.rss_peak_b = max(rss)
        row.lower, row.estimate, row.upper, row.extra = low, est, up, extra
        if trace:
            release_memory()
            tracemalloc.start()
            tracemalloc.reset_peak()
            try:
                fn(k)
                row.traced_peak_b = tracemalloc.get_traced_memory()[1]
            finally:
                tracemalloc.stop()
    except MemoryError as err:
        row.status, row.message = "error", f"MemoryError: {err}"
    except Exception as err:  # noqa: BLE001 -- a failing tool is a result, not a crash
        row.status, row.message = "error", f"{type(err).__name__}: {err}"
    release_memory()
    return row


# ============================================================================ output
def _fmt_time(s: Optional[float]) -> str:
    if s is None:
        return "-"
    return f"{s:.3f}" if s < 10 else f"{s:.1f}"


def _fmt_mem(b: Optional[float]) -> str:
    if b is None:
        return "-"
    mb = b / 2**20
    return f"{mb / 1024:.2f} GiB" if mb >= 1024 else f"{mb:.1f} MiB"


def _fmt_eps(x: Optional[float]) -> str:
    return "-" if x is None else f"{x:.4f}"


def _ratio(peer: Optional[float], ours: Optional[float]) -> str:
    if peer is None or ours is None or ours <= 0:
        return "-"
    r = peer / ours
    return f"{r:.1f}x" if r >= 10 else f"{r:.2f}x"


def table(rows: list[Row], markdown: bool) -> str:
    head = ["k", "tool", "time s", "mem (traced)", "rss peak", "lower", "estimate", "upper",
            "width", "time/ours", "mem/ours", "rss/ours", "peer est in ours"]
    body = []
    ours_by_k = {r.k: r for r in rows if r.tool == "ours" and r.status == "ok"}
    for r in rows:
        o = ours_by_k.get(r.k)
        if r.status in ("ok", "recorded"):
            mark = "" if r.status == "ok" else " (not run, recorded)"
            inside = "-"
            if r.tool != "ours" and o is not None and r.status == "ok":
                if r.estimate is not None:
                    inside = "yes" if o.lower <= r.estimate <= o.upper else "NO"
                elif r.upper is not None:   # upper bound only: consistent iff >= our lower
                    inside = ("n/a (upper >= our lower)" if r.upper >= o.lower
                              else "NO (upper < our lower)")
            rss = _fmt_mem(r.rss_peak_b)
            if r.status == "recorded":
                rss = "-" if r.rss_peak_b is None else f"{r.rss_peak_b / 1e9:g} GB"
            body.append([
                f"{r.k:.0e}".replace("+0", ""), r.tool + mark, _fmt_time(r.time_s),
                _fmt_mem(r.traced_peak_b), rss, _fmt_eps(r.lower),
                _fmt_eps(r.estimate), _fmt_eps(r.upper), _fmt_eps(r.width),
                "" if r.tool == "ours" else _ratio(r.time_s, o.time_s if o else None),
                "" if r.tool == "ours" else _ratio(r.traced_peak_b, o.traced_peak_b if o else None),
                "" if r.tool == "ours" else _ratio(r.rss_peak_b, o.rss_peak_b if o else None),
                inside,
            ])
        else:
            body.append([f"{r.k:.0e}".replace("+0", ""), r.tool, r.status + ": " + r.message]
                        + [""] * (len(head) - 3))
    if markdown:
        out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
        for b in body:
            if b[3] == "" and b[2].startswith(("error", "skipped")):
                b = b[:3] + [""] * (len(head) - 3)
            out.append("| " + " | ".join(b) + " |")
        return "\n".join(out)
    widths = [max(len(h), *(len(b[i]) for b in body if not b[2].startswith(("error", "skipped"))))
              if body else len(h) for i, h in enumerate(head)]
    lines = ["  ".join(h.rjust(w) for h, w in zip(head, widths))]
    lines.append("  ".join("-" * w for w in widths))
    for b in body:
        if b[2].startswith(("error", "skipped")):
            lines.append("  ".join([b[0].rjust(widths[0]), b[1].rjust(widths[1]), b[2]]))
        else:
            lines.append("  ".join(c.rjust(w) for c, w in zip(b, widths)))
    return "\n".join(lines)


def summary(rows: list[Row]) -> list[str]:
    out = []
    ours_by_k = {r.k: r for r in rows if r.tool == "ours" and r.status == "ok"}
    for k in sorted({r.k for r in rows}):
        o = ours_by_k.get(k)
        if o is None:
            out.append(f"k={k:.0e}: sampledprv gave no interval")
            continue
        notes = []
        for r in rows:
            if r.k != k or r.tool == "ours" or r.status != "ok":
                continue
            if r.estimate is not None:
                ref = r.estimate
                notes.append(f"{r.tool} estimate {ref:.4f} "
                             f"{'in' if o.lower <= ref <= o.upper else 'NOT in'} ours")
            elif r.upper is not None:
                notes.append(f"{r.tool} gives only an upper bound, {r.upper:.4f}, which is "
                             f"{'>=' if r.upper >= o.lower else 'BELOW'} our lower bound")
            if r.width is not None:
                notes.append(f"ours width {o.width:.4f} {'<=' if o.width <= r.width + 1e-12 else '>'}"
                             f" {r.tool} width {r.width:.4f}")
            if r.lower is not None and r.upper is not None:
                overlap = max(o.lower, r.lower) <= min(o.upper, r.upper)
                notes.append(f"{r.tool} interval {'overlaps' if overlap else 'DISJOINT from'} ours")
        out.append(f"k={k:.0e}: ours [{o.lower:.4f}, {o.upper:.4f}]"
                   + "".join("; " + n for n in notes))
    return out


def environment() -> dict:
    vers = {}
    for d in ("sampledprv", "numpy", "scipy", "numba", "prv-accountant", "opacus", "torch",
              "dp-accounting", "psutil"):
        try:
            vers[d] = importlib.metadata.version(d)
        except importlib.metadata.PackageNotFoundError:
            vers[d] = None
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, cwd=os.path.dirname(os.path.abspath(__file__)),
                                timeout=10).stdout.strip() or None
        dirty = subprocess.run(["git", "status", "--porcelain", "--", ":/sampledprv"],
                               capture_output=True, text=True, timeout=10,
                               cwd=os.path.dirname(os.path.abspath(__file__))).stdout
        if commit and dirty.strip():
            files = [ln[3:].strip() for ln in dirty.splitlines() if ln.strip()]
            commit += (" + uncommitted changes to " + ", ".join(files[:6])
                       + (f" and {len(files) - 6} more" if len(files) > 6 else ""))
    except (OSError, subprocess.SubprocessError):
        commit = None
    mem = None
    try:
        import psutil
        mem = psutil.virtual_memory().total
    except ImportError:
        pass
    return {"date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
            "python": platform.python_version(), "platform": platform.platform(),
            "cpus": os.cpu_count(), "ram_bytes": mem, "git_commit": commit, "versions": vers}


def _print_results(rows: list[Row], markdown: bool) -> None:
    print(table(rows, markdown))
    print()
    if any(r.status == "recorded" for r in rows):
        print("Rows marked 'not run, recorded' show figures recorded in an earlier run (time and peak memory, "
              "the latter in the rss column); they were not measured here.")
    print("Ratios are peer / ours: > 1 means sampledprv is faster or smaller.")
    for line in summary(rows):
        print(line)


def _load() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg()) + f" ({os.cpu_count()} CPUs)"
    except OSError:
        return "n/a"


# ============================================================================ main
def parse_ks(text: str) -> list[int]:
    ks = []
    for part in text.split(","):
        part = part.strip()
        if part:
            v = float(part)
            if v < 1 or v != int(v):
                raise argparse.ArgumentTypeError(f"k must be a positive integer, got {part!r}")
            ks.append(int(v))
    return ks


def parse_peers(text: str) -> list[str]:
    peers = [p.strip() for p in text.split(",") if p.strip()]
    if peers == ["none"]:
        return []
    bad = [p for p in peers if p not in PEERS]
    if bad:
        raise argparse.ArgumentTypeError(f"unknown peers {bad}; choose from {','.join(PEERS)}")
    return peers


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ks", type=parse_ks, default=list(DEFAULT_KS),
                    help="comma-separated step counts (default 1e3,1e4,1e5,1e6)")
    ap.add_argument("--quick", action="store_true", help="k in {1e3, 1e4} only")
    ap.add_argument("--peers", type=parse_peers, default=list(PEERS),
                    help="comma-separated subset of prv,opacus,dpa, or 'none' (default all)")
    ap.add_argument("--skip-slow", action=argparse.BooleanOptionalAction, default=True,
                    help="skip prv-accountant at k=1e6 (~19 GB, ~400 s) and print the "
                         "recorded figure instead (default on)")
    ap.add_argument("--max-peer-seconds", type=float, default=None,
                    help="skip a peer at a k where its time, extrapolated linearly in k "
                         "from its previous k, would exceed this many seconds")
    ap.add_argument("--repeat", type=int, default=1, help="timed runs per cell; best is shown")
    ap.add_argument("--repeat-budget", type=float, default=30.0,
                    help="stop repeating a cell once its runs took this many seconds "
                         "(default 30): slow cells run once")
    ap.add_argument("--no-trace", action="store_true",
                    help="skip the extra tracemalloc run (RSS peak only)")
    ap.add_argument("--no-warmup", action="store_true",
                    help="do not make an untimed k=10 call per tool first")
    ap.add_argument("--opacus-public", action="store_true",
                    help="call opacus get_epsilon (returns the upper bound only)")
    ap.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    ap.add_argument("--json", metavar="PATH", help="also write raw results to PATH")
    ap.add_argument("--render", metavar="PATH",
                    help="do not measure: print the table and summary of a --json file")
    args = ap.parse_args(argv)
    if args.render:
        with open(args.render) as fh:
            saved = json.load(fh)
        rows = []
        for d in saved["rows"]:
            d.pop("width", None)
            rows.append(Row(**d))
        env = saved["env"]
        print(f"# rendered from {args.render}: run of {env['date']}, git {env['git_commit']}")
        _print_results(rows, args.markdown)
        return 0
    if args.repeat < 1:
        ap.error("--repeat must be >= 1")
    ks = [1_000, 10_000] if args.quick else sorted(args.ks)

    tools: dict[str, Callable] = {"ours": run_ours, "prv": run_prv,
                                  "opacus": make_run_opacus(args.opacus_public), "dpa": run_dpa}
    order = ["ours"] + [p for p in PEERS if p in args.peers]

    env = environment()
    print(f"# DP-SGD accounting benchmark  ({env['date']}, git {env['git_commit']})")
    print(f"# sigma={SIGMA} q={Q} delta={DELTA} eps_error={EPS_ERROR}; delta_error: ours "
          f"{OUR_DELTA_ERROR:g}, prv/opacus {PEER_DELTA_ERROR:g}")
    print(f"# python {env['python']} on {env['platform']}, {env['cpus']} CPUs, RAM "
          f"{_fmt_mem(env['ram_bytes'])}")
    print("# versions: " + ", ".join(f"{k} {v}" for k, v in env["versions"].items()))
    print(f"# load average at start: {_load()}")
    print(f"# time: best of {args.repeat} (warm-up {'off' if args.no_warmup else 'on'}); "
          f"mem: tracemalloc peak of a separate run{' (off)' if args.no_trace else ''}; "
          f"rss: RSS high-water minus RSS before ({RSSPeak.method()})")
    sys.stdout.flush()

    if not args.no_warmup:
        for name in order:
            try:
                tools[name](WARMUP_K)
            except Exception as err:  # noqa: BLE001
                print(f"# warm-up of {name} failed: {type(err).__name__}: {err}")
        release_memory()

    rows: list[Row] = []
    last: dict[str, tuple[int, float]] = {}
    for k in ks:
        for name in order:
            if name != "ours":
                skip_why = None
                if args.skip_slow and (name, k) in SLOW:
                    skip_why = "--skip-slow"
                elif args.max_peer_seconds is not None and name in last:
                    k0, t0 = last[name]
                    guess = t0 * k / k0
                    if guess > args.max_peer_seconds:
                        skip_why = (f"--max-peer-seconds {args.max_peer_seconds:g} "
                                    f"(extrapolated {guess:.0f} s)")
                if skip_why is not None:
                    rec = RECORDED.get((name, k))
                    if rec is not None:
                        row = Row(k=k, tool=name, status="recorded", time_s=rec[0],
                                  rss_peak_b=rec[1], message=f"skipped by {skip_why}")
                    else:
                        row = Row(k=k, tool=name, status="skipped", message=f"by {skip_why}")
                    rows.append(row)
                    print(f"  k={k:>8,} {name:<7} not run ({skip_why})", flush=True)
                    continue
            row = measure(name, tools[name], k, args.repeat, trace=not args.no_trace,
                          repeat_budget=args.repeat_budget)
            rows.append(row)
            if row.status == "ok":
                last[name] = (k, row.time_s)
                print(f"  k={k:>8,} {name:<7} {row.time_s:8.3f} s  rss {_fmt_mem(row.rss_peak_b):>10}"
                      f"  traced {_fmt_mem(row.traced_peak_b):>10}  eps "
                      f"[{_fmt_eps(row.lower)}, {_fmt_eps(row.estimate)}, {_fmt_eps(row.upper)}]",
                      flush=True)
            else:
                print(f"  k={k:>8,} {name:<7} {row.status}: {row.message}", flush=True)

    print()
    print(f"# load average at end: {_load()}")
    _print_results(rows, args.markdown)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"env": env, "args": {k: v for k, v in vars(args).items()},
                       "rows": [dict(asdict(r), width=r.width) for r in rows]}, fh, indent=2,
                      default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
