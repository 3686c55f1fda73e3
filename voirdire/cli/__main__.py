"""``python -m voirdire.cli``: the ``voirdire`` command."""

import sys

from voirdire.cli.main import main

sys.exit(main())
