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
  "$PY" -m venv .venv
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
if ! { .venv/bin/python -m pip install -q --upgrade pip \
       && .venv/bin/python -m pip install -q "torch==2.13.0" \
            -e ".[test,torch,plot,opacus,docs,distributed]"; } >"$LOG" 2>&1; then
  grep -v -E "^WARNING: Location|is ignored" "$LOG" | tail -40 >&2
  echo "sampledprv: installing into .venv failed (the whole log: $LOG)" >&2
  exit 1
fi
.venv/bin/python -c "import sampledprv, torch" && echo "$KEY" > "$STAMP"
echo "sampledprv: .venv is ready" >&2
