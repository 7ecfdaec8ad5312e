"""Machine description printed beside every benchmark table."""

from __future__ import annotations

import platform
import subprocess


def cpu_model() -> str:
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout
        for line in out.splitlines():
            if line.startswith("Model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def load() -> str:
    """The load averages, for the line beside a timing."""
    import os
    return "load average %.2f %.2f %.2f" % os.getloadavg()


def run_cases(script: str, cases: dict, default_n: dict, all_cases: tuple,
              doc: str) -> None:
    """The command line of a benchmark made of numbered cases: ``--case N`` runs one
    case in this process (``cases[N](n)``); without it, each case of ``all_cases`` runs
    in a fresh process one after the other (so each time includes imports and
    compilation).  ``--n`` overrides the draws of the case(s)."""
    import argparse
    import os
    import sys
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--case", type=int, choices=tuple(cases))
    ap.add_argument("--n", type=float, help="draws per histogram (default per case)")
    args = ap.parse_args()
    if args.case is None:
        print(f"CPU: {cpu_model()}, {os.cpu_count()} cores; {load()}")
        for c in all_cases:
            cmd = [sys.executable, script, "--case", str(c)]
            if args.n:
                cmd += ["--n", str(args.n)]
            subprocess.run(cmd, check=False)
        print(f"after: {load()}")
        return
    n = int(args.n) if args.n else default_n[args.case]
    print(f"CPU: {cpu_model()}; {load()}")
    cases[args.case](n)
    print(f"  after      {load()}")
