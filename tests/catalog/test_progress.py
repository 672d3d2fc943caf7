"""The progress line: only on a terminal, only after the delay, erased at the end."""

import io
import time

from catalog.cli.common import Progress


class FakeTTY(io.StringIO):
    def isatty(self):
        return True


def test_progress_on_a_terminal_after_the_delay():
    s = FakeTTY()
    with Progress("working", stream=s, delay=0.05) as p:
        p.update("3/7")
        time.sleep(0.6)
    out = s.getvalue()
    assert "working 3/7" in out and out.endswith("\r\033[K")


def test_no_progress_when_fast_or_not_a_terminal():
    s = FakeTTY()
    with Progress("quick", stream=s, delay=5.0):
        time.sleep(0.3)
    assert s.getvalue() == ""
    s = io.StringIO()  # not a terminal (a pipe or a file)
    with Progress("piped", stream=s, delay=0.0):
        time.sleep(0.3)
    assert s.getvalue() == ""
