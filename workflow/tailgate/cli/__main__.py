"""``python -m tailgate.cli``: the ``tailgate`` command."""

import sys

from tailgate.cli import main

sys.exit(main())
