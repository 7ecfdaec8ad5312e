#!/usr/bin/env bash
# One command: set up the environment and run the whole test suite (and build the docs).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup_env.sh
# the docs' browser test (tests/test_docs_site.py) renders pages in headless Chromium; where
# it is missing and Debian's apt can install it, install it (else that test skips, saying why)
if ! command -v chromium >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1 \
    && [ "$(id -u)" = 0 ]; then
  echo "installing Debian's chromium for the docs' browser test..." >&2
  (apt-get install -y -q chromium >/dev/null 2>&1 \
    || (apt-get update -q >/dev/null 2>&1 && apt-get install -y -q chromium >/dev/null 2>&1)) \
    || echo "chromium could not be installed: the browser test will skip" >&2
fi
# the suite starts many Python processes (the workers, and the examples, benchmarks and
# command lines the tests run) that import the package: let them share its bytecode, as
# Python does by default, where the environment turned that off
unset PYTHONDONTWRITEBYTECODE
# glibc's malloc gives freed blocks of more than 128 KiB (up to 32 MiB as it adapts) back
# to the kernel and trims the top of its heap, so the next large numpy temporary of the
# same size is mapped and zero-filled page by page again.  Keep the heap instead (no block
# is mapped on its own below 1 GiB, nothing trimmed below 4 GiB, the heap grown 256 MiB at
# a time): the suite's kernel time went from 49 s to 34 s (benchmarks/RESULTS.md).  Only
# where memory comes from changes, not a computed value; a value set by the caller wins
export MALLOC_MMAP_THRESHOLD_="${MALLOC_MMAP_THRESHOLD_:-1073741824}"
export MALLOC_TRIM_THRESHOLD_="${MALLOC_TRIM_THRESHOLD_:-4294967296}"
export MALLOC_TOP_PAD_="${MALLOC_TOP_PAD_:-268435456}"
# worker processes (pytest-xdist): one per core, at most 4 (each holds up to about 3 GB);
# SAMPLEDPRV_TEST_WORKERS sets the number.  The suite is dominated by single-threaded
# work.  A third worker on the 2-core machine kept the cores busier in place (1.97 against
# 1.92 cores) but saved no time from a fresh clone (benchmarks/RESULTS.md).  Before they
# start, the controller compiles the Numba kernels once (tests/conftest.py)
CORES=$(nproc 2>/dev/null || echo 2)
WORKERS=${SAMPLEDPRV_TEST_WORKERS:-$(( CORES < 4 ? CORES : 4 ))}
.venv/bin/python -m pytest -q -n "$WORKERS" "$@"
# the whole suite already builds the site with --strict (tests/test_docs_site.py); build it
# here only when the arguments may have left that test out
if [ -f mkdocs.yml ] && [ $# -gt 0 ]; then
  NO_MKDOCS_2_WARNING=1 .venv/bin/python -m mkdocs build --strict -d /tmp/sampledprv-site
fi
