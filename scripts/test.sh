#!/usr/bin/env bash
# One command: set up the environment and run the whole test suite (and build the docs).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup_env.sh
# two worker processes (pytest-xdist): the suite is dominated by single-threaded work
.venv/bin/python -m pytest -q -n 2 "$@"
if [ -f mkdocs.yml ]; then
  NO_MKDOCS_2_WARNING=1 .venv/bin/python -m mkdocs build --strict -d /tmp/sampledprv-site
fi
