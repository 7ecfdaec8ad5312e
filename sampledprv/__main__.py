"""``python -m sampledprv``: the command line (:mod:`sampledprv.cli`)."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
