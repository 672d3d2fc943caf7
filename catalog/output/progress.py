"""Progress on long work, from the API as from the command line: a tqdm bar on stderr.

``progress=None`` (the default of the API functions) shows the bar only when stderr is a terminal and
the environment does not say ``LIEDYN_PROGRESS=0``; ``False`` never shows it, ``True`` always does;
any object with an ``update(text)`` method (the command line's one-line status) is used as it is.
"""

from __future__ import annotations

import os
import sys
from typing import TextIO

from tqdm import tqdm

from integrators.core.progress import quiet

__all__ = ["Steps", "enabled"]


def enabled(progress: object = None, stream: TextIO | None = None) -> bool:
    """Whether to draw a bar for ``progress`` (None: only on a terminal, unless LIEDYN_PROGRESS=0)."""
    if progress is None:
        stream = stream or sys.stderr
        return os.environ.get("LIEDYN_PROGRESS", "1") != "0" and bool(getattr(stream, "isatty", lambda: False)())
    return bool(progress)


class Steps:
    """``with Steps(total, "report", progress) as s: s.update("entry 3")``: a tqdm bar advanced by one per
    update, a caller's status object, or nothing."""

    def __init__(self, total, desc, progress=None, stream=None):
        self.custom = progress if hasattr(progress, "update") and not isinstance(progress, bool) else None
        self.bar = None
        if self.custom is None and enabled(progress, stream):
            self.bar = tqdm(total=total, desc=desc, file=stream or sys.stderr, leave=False, dynamic_ncols=True)

    def update(self, text):
        if self.custom is not None:
            self.custom.update(text)
        elif self.bar is not None:
            self.bar.set_postfix_str(text, refresh=False)
            self.bar.update(1)

    def __enter__(self):
        self._quiet = quiet()  # the integrations inside draw no line of their own under this bar
        self._quiet.__enter__()
        return self

    def __exit__(self, *exc):
        self._quiet.__exit__(*exc)
        if self.bar is not None:
            self.bar.close()
