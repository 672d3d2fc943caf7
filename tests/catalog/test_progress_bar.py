"""Progress from the API (catalog.output.progress): a tqdm bar only on a terminal unless asked, never
with LIEDYN_PROGRESS=0 or progress=False, and a caller's status object used as it is."""

import io

from catalog.output.progress import Steps, enabled


class TTY(io.StringIO):
    def isatty(self):
        return True


def test_auto_only_on_a_terminal(monkeypatch):
    monkeypatch.delenv("LIEDYN_PROGRESS", raising=False)
    assert enabled(None, io.StringIO()) is False
    assert enabled(None, TTY()) is True
    monkeypatch.setenv("LIEDYN_PROGRESS", "0")
    assert enabled(None, TTY()) is False
    assert enabled(True, io.StringIO()) is True and enabled(False, TTY()) is False


def test_bar_counts_the_steps():
    stream = TTY()
    with Steps(3, "report", True, stream) as s:
        for k in range(3):
            s.update(f"entry {k}")
        assert s.bar.n == 3
    assert "report" in stream.getvalue()


def test_no_bar_when_off_and_status_objects_pass_through():
    stream = TTY()
    with Steps(2, "report", False, stream) as s:
        s.update("x")
    assert stream.getvalue() == "" and s.bar is None

    class Status:
        def __init__(self):
            self.seen = []

        def update(self, text):
            self.seen.append(text)

    st = Status()
    with Steps(2, "report", st, stream) as s:
        s.update("a")
        s.update("b")
    assert st.seen == ["a", "b"] and stream.getvalue() == ""
