"""Drive the command line in this process: ``sampledprv.cli.main(argv)`` with stdout and
stderr captured, as ``python -m sampledprv`` would see them.

A fresh ``python -m sampledprv`` costs about a second of interpreter and import start-up
before it computes anything; most CLI tests check what a command prints and its exit code,
not the start-up, so they call :func:`run` here.  The tests about the process itself
(``python -m`` entry, exit codes of a real process, Ctrl-C, ``--version``, the console
script) keep real subprocesses (``tests/test_cli.py``, ``run_process``).

What a subprocess gives for free is reproduced: the working directory (``cwd``), no
``SAMPLEDPRV_DEBUG`` in the environment, an 80-column help text (a pipe has no terminal
width), argparse's ``SystemExit`` turned into the exit code, and a fresh warnings state
(so a warning already shown by an earlier call is shown again).
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Optional, Union

from sampledprv.cli import main

__all__ = ["run", "run_process"]

TIMEOUT = 900   # sampled runs in a fresh process may JIT-compile the Numba kernels first


@contextlib.contextmanager
def _environment(cwd: Optional[Union[str, Path]]):
    """The working directory and environment variables of a fresh ``sampledprv`` run."""
    old_cwd = os.getcwd()
    saved = {k: os.environ.get(k) for k in ("SAMPLEDPRV_DEBUG", "COLUMNS")}
    os.environ.pop("SAMPLEDPRV_DEBUG", None)
    os.environ["COLUMNS"] = "80"          # as through a pipe: no terminal, 80 columns
    try:
        if cwd is not None:
            os.chdir(cwd)
        yield
    finally:
        os.chdir(old_cwd)
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _exit_code(exc: SystemExit) -> int:
    """The process exit status ``sys.exit(code)`` would give."""
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    print(exc.code, file=sys.stderr)      # sys.exit("message"): printed, status 1
    return 1


def run(*args: str, cwd: Optional[Union[str, Path]] = None,
        input: Optional[str] = None) -> subprocess.CompletedProcess:
    """``sampledprv <args>`` in this process; the result reads like ``subprocess.run``'s
    (``returncode``, ``stdout``, ``stderr``)."""
    out, err = io.StringIO(), io.StringIO()
    stdin = io.StringIO(input or "")
    with _environment(cwd), warnings.catch_warnings(), \
            contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        old_stdin, sys.stdin = sys.stdin, stdin
        try:
            rc = main(list(args))
        except SystemExit as exc:          # argparse: --help (0) and usage errors (2)
            rc = _exit_code(exc)
        finally:
            sys.stdin = old_stdin
    return subprocess.CompletedProcess(["sampledprv", *args], rc, out.getvalue(),
                                       err.getvalue())


def run_process(*args: str, cwd: Optional[Union[str, Path]] = None, timeout: float = TIMEOUT,
                input: Optional[str] = None) -> subprocess.CompletedProcess:
    """``python -m sampledprv <args>`` as a real subprocess (no ``SAMPLEDPRV_DEBUG``)."""
    env = dict(os.environ)
    env.pop("SAMPLEDPRV_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "sampledprv", *args], capture_output=True,
                          text=True, timeout=timeout, cwd=cwd, env=env, input=input)
