"""Where a report comes from: the date, liedyn's version and commit, and the versions of the libraries its
numbers depend on (Python, numpy, scipy, sympy, matplotlib). The report prints it on its index so a reader
can tell two reports apart and rebuild one."""

from __future__ import annotations

import datetime
import importlib.metadata
import platform
import subprocess
from pathlib import Path

LIBRARIES = ("numpy", "scipy", "sympy", "matplotlib")


def _version(dist):
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def commit(path=None):
    """The git commit of the checkout holding ``path`` (this package by default), with " (modified)" when the
    work tree differs from it; "unknown" outside a git checkout or without git."""
    where = Path(path or __file__).resolve().parent
    try:
        head = subprocess.run(["git", "-C", str(where), "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=10)
        if head.returncode != 0:
            return "unknown"
        dirty = subprocess.run(["git", "-C", str(where), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return head.stdout.strip() + (" (modified)" if dirty.stdout.strip() else "")


def provenance(now=None):
    """[(label, value)]: date (UTC), liedyn version, commit, Python and the libraries of :data:`LIBRARIES`."""
    now = now or datetime.datetime.now(datetime.timezone.utc)
    return ([("date", now.strftime("%Y-%m-%d %H:%M UTC")), ("liedyn", _version("liedyn")), ("commit", commit()),
             ("Python", platform.python_version())] + [(lib, _version(lib)) for lib in LIBRARIES])
