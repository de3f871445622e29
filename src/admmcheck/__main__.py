"""``python -m admmcheck``: the same as the ``admmcheck`` command."""

import sys

from admmcheck.cli import main

sys.exit(main())
