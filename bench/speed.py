"""The speed benchmark harness (``bench/speed/``): ``python bench/speed.py --help``, the same as
``python -m bench.speed``."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository, for ``bench.speed`` as a script

from bench.speed.cli import main

if __name__ == "__main__":
    main()
