"""``python -m sampledprv.cli``: the same as ``python -m sampledprv``."""

import sys

from . import main

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
