"""Every code block of README.md and docs/quickstart.md runs (how-to pages too).

* ``python`` blocks are executed in order, one namespace per file, in a temporary
  working directory (so files they write land there) with matplotlib's Agg backend;
* ``bash`` blocks: each ``sampledprv ...`` command line (backslash continuations joined)
  runs through the CLI's ``main(argv)`` in this process (the installed entry point and
  ``python -m sampledprv`` as a subprocess are tested in tests/test_cli*.py; in-process
  saves an interpreter start and the package import per command) and must exit 0;
  ``--help`` / ``--version`` still run as ``python -m sampledprv``; environment-setup lines (venv,
  pip, the scripts/ wrappers, mkdocs) are recognised and not run here -- CI runs
  scripts/test.sh itself -- and any other command fails the test, so a new kind of block
  cannot go untested silently.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
REQUIRED = ["README.md", "docs/quickstart.md"]
HOWTO = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs" / "howto").glob("*.md")) \
    if (ROOT / "docs" / "howto").is_dir() else []

FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```\s*$", re.S | re.M)
SETUP = ("bash scripts/", "python -m venv", "pip ", ".venv/bin/pip", ".venv/bin/mkdocs",
         "source ", "cd ", "mkdocs ", "git clone",
         "dask scheduler", "dask worker")   # long-running cluster daemons


def blocks(path: Path) -> list[tuple[str, str, int]]:
    """``(language, code, line)`` of every fenced block of a Markdown file."""
    text = path.read_text(encoding="utf-8")
    out = []
    for m in FENCE.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        out.append((m.group(1).lower(), m.group(2), line))
    return out


def commands(code: str) -> list[str]:
    joined = re.sub(r"\s*\\\n\s*", " ", code)
    return [ln.strip() for ln in joined.splitlines()
            if ln.strip() and not ln.strip().startswith("#")]


def run_file(rel: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> int:
    path = ROOT / rel
    if not path.exists():
        pytest.skip(f"{rel} does not exist yet")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    ns: dict = {"__name__": "__docs__"}
    ran = 0
    for lang, code, line in blocks(path):
        where = f"{rel}:{line}"
        if lang in ("python", "py"):
            try:
                exec(compile(code, where, "exec"), ns)
            except Exception as exc:  # pragma: no cover - reported with the block's place
                raise AssertionError(f"python block at {where} failed: {exc!r}") from exc
            finally:
                _close_figures()
            ran += 1
        elif lang in ("bash", "sh", "shell", "console"):
            for cmd in commands(code):
                cmd = cmd[2:] if cmd.startswith("$ ") else cmd
                if cmd.startswith("sampledprv "):
                    _run_cli(cmd, where, tmp_path)
                    ran += 1
                elif cmd.startswith(SETUP):
                    continue
                else:
                    raise AssertionError(f"{where}: don't know how to test shell command {cmd!r};"
                                         " teach tests/test_docs.py")
    return ran


def _close_figures() -> None:
    if "matplotlib.pyplot" in sys.modules:
        sys.modules["matplotlib.pyplot"].close("all")


def _cli_in_process(argv: list[str], cwd: Path) -> tuple[int, str, str]:
    """``sampledprv.cli.main(argv)`` in this process with ``cwd`` as the working directory
    (``cli_inprocess.run``): exit code, stdout and stderr."""
    from cli_inprocess import run  # noqa: PLC0415 - only the docs' CLI lines need the CLI

    try:
        p = run(*argv, cwd=cwd)
    finally:
        _close_figures()
    return p.returncode, p.stdout, p.stderr


def _run_cli(cmd: str, where: str, cwd: Path) -> None:
    pipe = None
    if " | " in cmd:   # 'sampledprv ... | python -c ...': feed the first part's stdout
        cmd, pipe = cmd.split(" | ", 1)
    argv = shlex.split(cmd)
    redirect = None
    if ">" in argv:
        i = argv.index(">")
        redirect, argv = argv[i + 1], argv[:i]
    if argv[1] in ("--help", "--version"):
        p = subprocess.run([sys.executable, "-m", "sampledprv", *argv[1:]],
                           capture_output=True, text=True, cwd=cwd, timeout=900,
                           env={**os.environ, "MPLBACKEND": "Agg"})
        code, stdout, stderr = p.returncode, p.stdout, p.stderr
    else:
        code, stdout, stderr = _cli_in_process([*argv[1:], "--no-progress"], cwd)
    assert code == 0, f"{where}: {cmd!r} exited {code}: {stderr}"
    if redirect:
        (cwd / redirect).write_text(stdout)
    if pipe:
        pargv = shlex.split(pipe)
        assert pargv[0] == "python", f"{where}: only '| python ...' pipes are supported"
        q = subprocess.run([sys.executable, *pargv[1:]], input=stdout, capture_output=True,
                           text=True, cwd=cwd, timeout=120)
        assert q.returncode == 0, f"{where}: pipe {pipe!r} failed: {q.stderr}"


@pytest.mark.parametrize("rel", REQUIRED)
def test_required_code_blocks_run(rel, tmp_path, monkeypatch):
    ran = run_file(rel, tmp_path, monkeypatch)
    assert ran > 0, f"{rel} has no runnable code block"


@pytest.mark.slow
@pytest.mark.parametrize("rel", HOWTO)
def test_howto_code_blocks_run(rel, tmp_path, monkeypatch):
    run_file(rel, tmp_path, monkeypatch)


def test_block_parser():
    md = "x\n```python\nprint(1)\n```\ntext\n```bash\nsampledprv a \\\n  --b 1\n# c\n```\n"
    got = [(lang, code) for lang, code, _ in
           [(m.group(1), m.group(2), 0) for m in FENCE.finditer(md)]]
    assert got == [("python", "print(1)\n"), ("bash", "sampledprv a \\\n  --b 1\n# c\n")]
    assert commands(got[1][1]) == ["sampledprv a --b 1"]
