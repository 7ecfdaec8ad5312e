#!/usr/bin/env bash
# One command: set up the environment and run the main demo.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup_env.sh
.venv/bin/python examples/quickstart.py "$@"
