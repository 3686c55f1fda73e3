"""``python -m voirdire.cli``: the ``voirdire`` command."""

import sys

from voirdire.cli import main

sys.exit(main())
