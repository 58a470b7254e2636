"""``python -m tools.cli``: the ``tooldeck`` command."""

import sys

from tools.cli import main

sys.exit(main())
