"""``python -m core``: feature selection from the command line (:mod:`core.cli`)."""

import sys

from .cli import main

sys.exit(main())
