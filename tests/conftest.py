import os
import sys

sys.path.insert(0, os.path.dirname(__file__))

#: The test files that take longest, longest first (CPU seconds per file, measured with
#: ``pytest -n 2 --durations``).  ``scripts/test.sh`` runs ``pytest -n 2 --dist loadfile
#: --no-loadscope-reorder``: every file runs whole on one worker (its module fixtures -- a
#: ``mkdocs build``, a Dask ``LocalCluster``, shared accountants -- are built once, not once
#: per worker) and files are handed out in collection order, so these go first and the
#: run does not end with one worker alone on a long file.  Order only; nothing is skipped.
LONG_FILES = (
)


def pytest_collection_modifyitems(config, items):
    rank = {name: i for i, name in enumerate(LONG_FILES)}
    last = len(rank)
    # a stable sort on the file's rank: each file stays contiguous and in its own order
    items.sort(key=lambda item: rank.get(os.path.basename(str(item.fspath)), last))
