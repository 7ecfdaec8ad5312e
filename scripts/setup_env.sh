#!/usr/bin/env bash
# Create ./.venv (if missing) and install sampledprv with everything the demo and tests use.
# torch is pinned to the CPU build available on this machine type; an unpinned torch
# would pull several GB of CUDA wheels.
# The install is skipped when .venv is up to date: a stamp file records a hash of
# pyproject.toml and this script (sampledprv itself is installed in editable mode, so
# code changes need no reinstall). Set SAMPLEDPRV_REINSTALL=1 to force it.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  # without ensurepip's copy of pip (3 s): the interpreter's own pip installs the current
  # pip into it below, with the core dependencies (where it cannot, ensurepip does)
  "$PY" -m venv --without-pip .venv
fi
STAMP=.venv/.sampledprv-install-stamp
KEY=$(.venv/bin/python - <<'PYEOF'
import hashlib, sys
h = hashlib.sha256(sys.version.encode())
for name in ("pyproject.toml", "scripts/setup_env.sh"):
    with open(name, "rb") as f:
        h.update(f.read())
print(h.hexdigest())
PYEOF
)
if [ -z "${SAMPLEDPRV_REINSTALL:-}" ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$KEY" ] \
    && .venv/bin/python -c "import sampledprv" 2>/dev/null; then
  exit 0   # up to date
fi
# everything below reports on stderr, so that stdout carries only the demo's or the tests'
# output; pip's own output goes to a log, shown if the install fails
LOG=.venv/install.log
echo "sampledprv: setting up .venv (sampledprv with PyTorch 2.13.0 CPU, Opacus, dp-accounting," \
     "Dask, matplotlib and the docs tools): about 2 minutes the first time; log in $LOG" >&2
# --no-compile: pip would byte-compile all ~11,000 modules it installs (half of the
# install's time); instead the modules the library, its tests and its tools import are
# compiled below, by importing them once, and any other one when first imported
# pyproject.toml's core dependencies (numpy, scipy, numba, tqdm) go in first: then the
# package's Numba kernels compile into their disk cache (tests/numba_warmup.py) while pip
# installs the rest, which keeps only one core busy.  Python 3.10 has no tomllib: there
# everything is installed in one step and the kernels compile when first used.
CORE=$(.venv/bin/python - <<'PYEOF'
try:
    import tomllib
except ImportError:
    raise SystemExit(0)
with open("pyproject.toml", "rb") as f:
    print("\n".join(tomllib.load(f)["project"]["dependencies"]))
PYEOF
)
CORE_DEPS=()
[ -n "$CORE" ] && mapfile -t CORE_DEPS <<<"$CORE"
failed() {
  grep -v -E "^WARNING: Location|is ignored" "$LOG" | tail -40 >&2
  echo "sampledprv: installing into .venv failed (the whole log: $LOG)" >&2
  exit 1
}
# the current pip and the core dependencies in one step by the interpreter's own pip
# (pip 22.3 or later installs into another environment with --python), so that the
# kernels start compiling about 3 s sooner; else (or where .venv has a pip already) the
# venv's pip, from ensurepip where it has none, upgrades itself first
: >"$LOG"
VENV_PIP=
.venv/bin/python -m pip --version >/dev/null 2>&1 && VENV_PIP=1
if [ -n "$VENV_PIP" ] || ! "$PY" -m pip --python .venv/bin/python install -q --no-compile \
    --upgrade pip "${CORE_DEPS[@]}" >>"$LOG" 2>&1; then
  { { [ -n "$VENV_PIP" ] || .venv/bin/python -m ensurepip; } \
    && .venv/bin/python -m pip install -q --upgrade pip \
    && { [ ${#CORE_DEPS[@]} -eq 0 ] \
         || .venv/bin/python -m pip install -q --no-compile "${CORE_DEPS[@]}"; }; } >>"$LOG" 2>&1 \
    || failed
fi
WARM_JOB=
if [ ${#CORE_DEPS[@]} -gt 0 ] && [ -f tests/numba_warmup.py ]; then
  env -u PYTHONDONTWRITEBYTECODE .venv/bin/python tests/numba_warmup.py --all \
    "$(nproc 2>/dev/null || echo 2)" >"$LOG.numba" 2>&1 &
  WARM_JOB=$!
fi
.venv/bin/python -m pip install -q --no-compile "torch==2.13.0" \
  -e ".[test,torch,plot,opacus,docs,distributed]" >>"$LOG" 2>&1 \
  || { [ -z "$WARM_JOB" ] || wait "$WARM_JOB" || true; failed; }
# write the bytecode of what is imported, even where the environment says not to
# (PYTHONDONTWRITEBYTECODE): without it every later process would compile these again.
# Two processes (torch's own modules take as long as all the others together).  A module
# that fails to import is compiled when first used, except sampledprv and torch: then the
# install did not work (exit status 3), and .venv gets no stamp.
precompile() {
  env -u PYTHONDONTWRITEBYTECODE .venv/bin/python - "$@" <<'PYEOF'
import compileall, importlib, pathlib, sys
status = 0
for name in sys.argv[1:]:
    try:
        mod = importlib.import_module(name)
        if name == "sampledprv":
            compileall.compile_dir(str(pathlib.Path(mod.__file__).parent), quiet=1)
    except Exception as exc:   # an optional tool that is missing: compiled when first used
        print(f"not precompiled: {name}: {exc!r}")
        if name in ("sampledprv", "torch"):
            status = 3
sys.exit(status)
PYEOF
}
precompile torch torch.func opacus >"$LOG.torch" 2>&1 &
TORCH_JOB=$!
ok=1
precompile sampledprv numpy scipy.stats scipy.special scipy.optimize scipy.fft \
  scipy.integrate scipy.signal numba dp_accounting dp_accounting.pld dp_accounting.rdp \
  dask.distributed matplotlib.pyplot sklearn.datasets sklearn.model_selection mkdocs \
  mkdocs.commands.build pytest xdist mpmath prv_accountant >>"$LOG" 2>&1 || ok=0
wait "$TORCH_JOB" || ok=0
cat "$LOG.torch" >>"$LOG" && rm -f "$LOG.torch"
# a kernel the warm-up could not compile is compiled when first used (its lines are logged)
if [ -n "$WARM_JOB" ]; then
  wait "$WARM_JOB" || true
  cat "$LOG.numba" >>"$LOG" && rm -f "$LOG.numba"
fi
if [ "$ok" != 1 ]; then
  grep "not precompiled" "$LOG" >&2 || true
  echo "sampledprv: sampledprv or torch does not import in .venv (the whole log: $LOG)" >&2
  exit 1
fi
echo "$KEY" > "$STAMP"
echo "sampledprv: .venv is ready" >&2
