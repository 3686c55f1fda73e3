"""``python -m voirdire`` is the ``voirdire`` command."""

from __future__ import annotations

import sys

from voirdire.cli import main

if __name__ == "__main__":
    sys.exit(main())
