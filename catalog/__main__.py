"""``python -m catalog`` runs the ``liedyn`` command line."""

import sys

from .cli.main import main

sys.exit(main())
