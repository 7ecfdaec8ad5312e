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
    "test_docs.py", "test_interop_dp_accounting.py", "test_random_allocation.py",
    "test_examples_gg.py", "test_cli.py", "test_gg_vector.py", "test_examples.py",
    "test_calibration.py", "test_family_contract.py", "test_long_compositions.py",
    "test_cold_start.py", "test_properties_analytic.py", "test_fixed_size_sampled.py",
    "test_gg_dimension.py", "test_compose_regrid.py", "test_example_audit.py",
    "test_concurrency.py", "test_docs_site.py",
)


def pytest_collection_modifyitems(config, items):
    rank = {name: i for i, name in enumerate(LONG_FILES)}
    last = len(rank)
    # a stable sort on the file's rank: each file stays contiguous and in its own order
    items.sort(key=lambda item: rank.get(os.path.basename(str(item.fspath)), last))
