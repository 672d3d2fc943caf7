"""catalog.cli: the ``liedyn`` command line, one file per subcommand (``main`` holds the parser)."""

from .main import main

__all__ = ["main"]
