#!/usr/bin/env bash
# One command: set up the environment and run the whole test suite (and build the docs).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup_env.sh
# two worker processes (pytest-xdist): the suite is dominated by single-threaded work
.venv/bin/python -m pytest -q -n 2 "$@"
# the whole suite already builds the site with --strict (tests/test_docs_site.py); build it
# here only when the arguments may have left that test out
if [ -f mkdocs.yml ] && [ $# -gt 0 ]; then
  NO_MKDOCS_2_WARNING=1 .venv/bin/python -m mkdocs build --strict -d /tmp/sampledprv-site
fi
