"""What a new user sees: import cost, compile notice, install hints, no dangling citations."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from cli_inprocess import run

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 900


def _python(code: str, env: dict | None = None) -> subprocess.CompletedProcess:
    e = dict(os.environ)
    e["PYTHONPATH"] = str(ROOT) + os.pathsep + e.get("PYTHONPATH", "")
    e.update(env or {})
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=TIMEOUT, env=e, cwd=ROOT)


# ---- import cost ---------------------------------------------------------------------------

def test_import_does_not_load_heavy_modules():
    code = ("import sys, sampledprv as sp\n"
            "assert sp.__file__.startswith(%r), sp.__file__\n"
            "heavy = ('numba', 'scipy.stats', 'scipy.fft', 'scipy.optimize', 'tqdm', "
            "'matplotlib', 'torch')\n"
            "print(' '.join(m for m in heavy if m in sys.modules))\n" % str(ROOT))
    p = _python(code)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "", f"import sampledprv imported: {p.stdout.strip()}"


def test_cli_imports_the_batch_samplers_only_for_their_kinds():
    """A command without a batch-sampler kind starts without sampledprv.batch (and so
    without Numba); naming one of its kinds, or asking for the list of kinds, loads it."""
    code = ("import sys, io, contextlib, sampledprv.cli as c\n"
            "from sampledprv.cli.mechanism_strings import KINDS, parse_mechanism\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    rc = c.main(['epsilon', '--delta', '1e-5', '-m', "
            "'subsampled-gaussian sigma=1 q=0.01', '-c', '10', '--json'])\n"
            "print(rc, 'sampledprv.batch' in sys.modules, 'numba' in sys.modules)\n"
            "m = parse_mechanism('bnb sigma=1 steps=10').build()\n"
            "print(type(m).__name__, 'sampledprv.batch' in sys.modules)\n"
            "print('random-allocation' in KINDS, 'balls-and-bins' in list(KINDS))\n")
    p = _python(code)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == ["0 False False", "BallsAndBins True", "True True"]


def test_lazy_names_resolve_and_are_listed():
    code = ("import sampledprv as sp\n"
            "missing = [n for n in sp.__all__ if not hasattr(sp, n)]\n"
            "assert not missing, missing\n"
            "assert set(sp.__all__) <= set(dir(sp))\n"
            "from sampledprv import Accountant, SampledAccountant, calibrate\n"
            "assert Accountant.__module__ == 'sampledprv.analytic.accountant'\n"
            "try:\n    sp.no_such_name\nexcept AttributeError as e:\n    print('ok', e)\n")
    p = _python(code)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("ok") and "no_such_name" in p.stdout


# ---- the first sampled call announces Numba's compilation ------------------------------------

def test_first_sampled_call_announces_compilation(tmp_path):
    """Cold Numba cache: one line on stderr (with an estimate) before the compile of the
    kernel of the kind sampled; warm cache: silent.

    The cold run uses its own empty cache directory and is stopped as soon as the notice
    appears (the compilation itself is not the point, and would cost 20 s)."""
    args = ["epsilon", "--delta", "1e-2", "-m", "gaussian sigma=1", "-c", "2",
            "--accountant", "sampled", "--n-samples", "20000", "--no-progress"]
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               NUMBA_CACHE_DIR=str(tmp_path / "numba-cache"))
    proc = subprocess.Popen([sys.executable, "-m", "sampledprv", *args], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = proc.stderr.readline()      # the notice comes before any long wait
    finally:
        proc.kill()
        proc.communicate(timeout=60)
    assert first.startswith("sampledprv: compiling the gaussian sampling kernel"), first
    assert "cached" in first and " s;" in first          # an estimate in seconds
    # warm: the first run (in this process, with the suite's cache directory) compiles if
    # that cache is cold, a fresh process after it does not
    first = run(*args)
    assert first.returncode == 0, first.stderr
    code = f"import sys, sampledprv.cli as c; sys.exit(c.main({args!r}))"
    second = _python(code)
    assert second.returncode == 0, second.stderr
    assert "compiling" not in second.stderr, second.stderr
    assert second.stdout == first.stdout


# ---- optional dependencies give install hints ------------------------------------------------

def test_torch_subpackage_without_torch_gives_install_hint():
    p = _python("import sys; sys.modules['torch'] = None\nimport sampledprv.torch\n")
    assert p.returncode != 0
    last = p.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError:") and "pip install 'sampledprv[torch]'" in last


def test_progress_without_tqdm():
    # automatic progress is silently off; asking for bars is a clear error, not a crash
    code = ("import sys; sys.modules['tqdm'] = None\n"
            "import sampledprv as sp\n"
            "sp.SampledAccountant(1000, progress=None)\n"
            "try:\n    sp.SampledAccountant(1000, progress=True)\n"
            "except ImportError as e:\n    print('lib:', e)\n"
            "import sampledprv.cli as c\n"
            "rc = c.main(['plan', '--delta', '1e-5', '-m', 'gaussian sigma=1', '--progress'])\n"
            "print('rc:', rc)\n")
    p = _python(code)
    assert p.returncode == 0, p.stderr
    assert "lib: progress=True needs the tqdm package" in p.stdout
    assert "rc: 2" in p.stdout
    assert "--progress needs the tqdm package" in p.stderr and "pip install tqdm" in p.stderr
    assert "internal error" not in p.stderr


# ---- no citations of files outside the repository, no issue numbers -------------------------

_BAD = re.compile(r"DESIGN\.md|\bshared/|\.\./shared|\bissue\s*#?\d+|\(issue", re.I)


def test_no_citations_of_files_outside_the_repository():
    files = [ROOT / "README.md", *sorted((ROOT / "sampledprv").rglob("*.py")),
             *sorted((ROOT / "docs").rglob("*.md")), *sorted((ROOT / "examples").rglob("*.py")),
             *sorted((ROOT / "scripts").glob("*.sh")),
             *sorted((ROOT / "benchmarks").glob("*.py")), *sorted((ROOT / "benchmarks").glob("*.md"))]
    assert len(files) > 40
    hits = [f"{f.relative_to(ROOT)}:{i}: {ln.strip()}"
            for f in files for i, ln in enumerate(f.read_text().splitlines(), 1)
            if _BAD.search(ln)]
    assert not hits, "\n".join(hits)


# ---- Generalized Gaussian: the GG paper's parameterization, GGNMax's documented value -------

def test_from_paper_matches_definition_8():
    import math

    import numpy as np
    from scipy import stats

    import sampledprv as sp

    rng = np.random.default_rng(3)
    for beta, sig in [(1.0, 0.7), (1.5, 2.0), (2.0, 3.0), (3.7, 0.05)]:
        g = sp.GeneralizedGaussian.from_paper(beta, sig)
        assert math.isclose(g.sigma_paper, sig, rel_tol=1e-12)
        x = rng.normal(0, 2, 50)
        # Definition 8: p(x) = beta / (2 sigma^(1/beta) Gamma(1/beta)) exp(-|x|^beta / sigma)
        paper = beta / (2 * sig ** (1 / beta) * math.gamma(1 / beta)) * np.exp(-np.abs(x) ** beta / sig)
        np.testing.assert_allclose(stats.gennorm(beta, scale=g.scale).pdf(x), paper, rtol=1e-12)
    # Algorithm 1's N_beta(0, sigma * Delta): same mechanism object as the scale form
    g = sp.GeneralizedGaussian.from_paper(2.0, 4.0 * 0.5, sensitivity=0.5)
    assert g == sp.GeneralizedGaussian(2.0, math.sqrt(2.0), sensitivity=0.5)
    for bad in [dict(beta=0.5, sigma_paper=1.0), dict(beta=2.0, sigma_paper=0.0)]:
        try:
            sp.GeneralizedGaussian.from_paper(**bad)
        except ValueError as e:
            assert next(iter(k for k in bad if k in str(e)))
        else:
            raise AssertionError(bad)


def test_ggnmax_documented_delta0_is_exact():
    import math

    from scipy.stats import norm

    import sampledprv as sp

    exact_one = 2 * norm.cdf(1 / (2 * math.sqrt(2))) - 1       # GG(2, 2) = N(0, 2), shift 1
    exact_two = 2 * norm.cdf(math.sqrt(2) / (2 * math.sqrt(2))) - 1   # shift (1, -1)
    doc = sp.GGNMax.__doc__
    assert f"{exact_one:.4f}" in doc and f"{exact_two:.4f}" in doc
    acc = sp.Accountant(eps_error=1e-3, delta_error=1e-12)
    iv = acc.compose(sp.GGNMax(2.0, 2.0)).delta(0.0)
    assert iv.lower <= exact_one <= iv.upper


# ---- packaging: no setuptools deprecation, no reinstall when up to date ----------------------

def test_pyproject_metadata_has_no_setuptools_warnings():
    p = _python("import warnings\n"
                "warnings.simplefilter('error')\n"
                "from setuptools.dist import Distribution\n"
                "from setuptools.config.pyprojecttoml import apply_configuration\n"
                "d = apply_configuration(Distribution(), 'pyproject.toml')\n"
                "print(d.metadata.license_expression, d.metadata.license_files)\n")
    assert p.returncode == 0, p.stderr
    assert p.stdout.split()[0] == "MIT" and "LICENSE" in p.stdout


def test_setup_env_skips_an_up_to_date_venv(tmp_path):
    """scripts/setup_env.sh reinstalls only when pyproject.toml (or itself) changed.

    Runs the real script in a scratch copy whose ``.venv/bin/python`` is a wrapper that
    logs pip calls and fakes them (no network), and logs the modules the closing
    precompile step asks for instead of importing them (about 6 CPU s each install; what
    pip would have installed is faked anyway)."""
    import shutil
    import stat

    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "setup_env.sh", tmp_path / "scripts")
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    bindir = tmp_path / ".venv" / "bin"
    bindir.mkdir(parents=True)
    log = tmp_path / "pip.log"
    wrapper = bindir / "python"
    precompiled = tmp_path / "precompile.log"
    warmed = tmp_path / "warm-up.log"
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "numba_warmup.py").write_text("# logged by the wrapper, not run\n")
    wrapper.write_text(
        "#!/bin/sh\n"
        f'if [ "$1" = "-m" ] && [ "$2" = "pip" ]; then echo "$@" >> "{log}"; exit 0; fi\n'
        # the Numba warm-up started while pip installs the rest: logged, not run
        f'if [ "$1" = "tests/numba_warmup.py" ]; then echo "$@" >> "{warmed}"; exit 0; fi\n'
        # the precompile step (python - MODULE ...; the stamp's hash is python - alone):
        # logged, its script read and not run
        f'if [ "$1" = "-" ] && [ -n "$2" ]; then shift; echo "$@" >> "{precompiled}"; '
        'cat >/dev/null; exit 0; fi\n'
        f'PYTHONPATH="{ROOT}" exec "{sys.executable}" "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)

    def setup() -> list[str]:
        if log.exists():
            log.unlink()
        p = subprocess.run(["bash", "scripts/setup_env.sh"], cwd=tmp_path, capture_output=True,
                           text=True, timeout=120)
        assert p.returncode == 0, p.stderr
        return log.read_text().splitlines() if log.exists() else []

    first = setup()
    assert any("install" in ln and "-e" in ln for ln in first)     # installs the first time
    # without byte-compiling everything; what is imported is compiled by importing it
    installs = [ln for ln in first if "install" in ln and "--upgrade pip" not in ln]
    assert len(installs) == 2 and all("--no-compile" in ln for ln in installs)
    # pyproject's core dependencies first, then the Numba kernels compile (in the
    # background) while the second install runs
    import tomllib
    with open(ROOT / "pyproject.toml", "rb") as f:
        core = tomllib.load(f)["project"]["dependencies"]
    assert "numba>=0.58" in core and installs[0].split()[-len(core):] == core
    assert warmed.read_text().split()[:2] == ["tests/numba_warmup.py", "--all"]
    asked = precompiled.read_text().split()
    assert {"sampledprv", "torch", "numpy", "scipy.stats"} <= set(asked)
    assert (tmp_path / ".venv" / ".sampledprv-install-stamp").exists()
    assert setup() == []                                             # then reuses .venv
    with open(tmp_path / "pyproject.toml", "a") as f:
        f.write("\n# changed\n")
    assert setup() != []                                             # reinstalls on change
    assert setup() == []
