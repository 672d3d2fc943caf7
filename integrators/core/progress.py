"""Progress of one :func:`integrators.integrate` run: a tqdm line on a stream that says what runs and for
how long.

``progress`` (the argument of ``integrate``):

* ``None`` (default): a line on stderr only when stderr is a terminal, the environment does not say
  ``LIEDYN_PROGRESS=0``, no caller has silenced it (:func:`quiet`, used by the ``liedyn`` command line,
  which draws its own status) and the run has lasted more than :data:`AUTO_DELAY` seconds (short runs
  print nothing);
* ``False``: nothing is ever written;
* ``True``: the line is drawn on stderr from the start; a writable text stream: drawn on that stream.

The line shows the method, the number of trajectories and the elapsed time, redrawn every
:data:`INTERVAL` seconds by a daemon thread, and on completion the number of steps taken. It does not
show a fraction done: the generated kernels (:mod:`integrators.backends.fastpath`)
run all steps in one call, so the driver does not see the time reached until the end. The thread only
reads the clock, never the state, so a run gives bit-for-bit the same result with or without the line.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Iterator
from typing import Any, TextIO

from tqdm import tqdm

from .errors import IntegrationInputError

__all__ = ["AUTO_DELAY", "INTERVAL", "RunProgress", "enabled", "quiet"]

AUTO_DELAY = 1.0
"""Seconds a run lasts before the automatic line (``progress=None``) appears."""
INTERVAL = 0.25
"""Seconds between redraws of the line."""

_silenced = [0]


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """``with quiet(): ...``: runs inside draw no automatic line (``progress=None``); an explicit
    ``progress=True`` or stream still draws. For callers with a status display of their own."""
    _silenced[0] += 1
    try:
        yield
    finally:
        _silenced[0] -= 1


def _is_stream(progress: object) -> bool:
    return not isinstance(progress, (bool, type(None))) and callable(getattr(progress, "write", None))


def enabled(progress: object, stream: TextIO | None = None) -> bool:
    """Whether ``progress`` asks for a line on ``stream`` (default stderr); see the module docstring."""
    if progress is None:
        stream = stream if stream is not None else sys.stderr
        return (_silenced[0] == 0 and os.environ.get("LIEDYN_PROGRESS", "1") != "0"
                and bool(getattr(stream, "isatty", lambda: False)()))
    if _is_stream(progress):
        return True
    if isinstance(progress, bool):
        return progress
    raise IntegrationInputError(f"progress must be None, True, False or a writable text stream, got {progress!r:.60}")


class RunProgress:
    """``with RunProgress(progress, "rkmk4", 64) as p: res = ...; p.done(res.nsteps)``: the line of one run,
    or nothing when ``progress`` does not ask for it (see :func:`enabled`)."""

    def __init__(self, progress: object, method: str, trajectories: int) -> None:
        self.bar: tqdm | None = None
        self._thread: threading.Thread | None = None
        if not enabled(progress):   # the common case: nothing to draw, nothing built (a short run's cost)
            return
        self._stop = threading.Event()
        stream = progress if _is_stream(progress) else sys.stderr
        self.delay = AUTO_DELAY if progress is None else 0.0
        what = f"{trajectories} trajectories" if trajectories != 1 else "1 trajectory"
        self.bar = tqdm(total=None, desc=f"integrate {method} ({what})", file=stream, delay=self.delay,
                        bar_format="{desc}: {elapsed} elapsed{postfix}", leave=progress is not None, dynamic_ncols=True)

    def _loop(self) -> None:
        while not self._stop.wait(INTERVAL):
            if self.bar is not None and self.bar.format_dict["elapsed"] >= self.delay:
                self.bar.refresh()

    def done(self, nsteps: int) -> None:
        """Say on the line that the run finished after ``nsteps`` steps."""
        if self.bar is not None:
            self.bar.set_postfix_str(f"done: {nsteps} steps", refresh=False)

    def __enter__(self) -> RunProgress:
        if self.bar is not None:
            self._thread = threading.Thread(target=self._loop, daemon=True, name="liedyn-progress")
            self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
        if self.bar is not None:
            if self.bar.format_dict["elapsed"] >= self.delay:
                self.bar.refresh()
            self.bar.close()
