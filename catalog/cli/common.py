"""Shared pieces of the ``liedyn`` subcommands: resolving NAME (catalog entry or TOML file), JSON output,
and a progress indicator on stderr that appears only on a terminal and only after one second."""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path

import numpy as np
from integrators.core.progress import quiet


def add_entry_args(p):
    """NAME plus ``-p key=value`` parameter overrides."""
    p.add_argument("name", metavar="NAME", help="catalog entry name (see `liedyn list`) or a path to a .toml file")
    p.add_argument("-p", "--param", action="append", default=[], metavar="KEY=VALUE",
                   help="override a documented default parameter, or for a TOML file any number of it "
                        "(b[0]=0.5, inertia[1][1]=2, w[0]=1, t_end=20) (repeatable)")


def add_common(p):
    p.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    p.add_argument("--debug", action="store_true", help="show tracebacks on errors")


def resolve(name, params=()):
    """The :class:`catalog.Entry` for NAME: a path to a TOML file if it ends in .toml or exists, else a catalog name."""
    from ..registry import CatalogError, get, parse_params
    from ..entries.toml_loader import from_file

    if name.endswith(".toml") or Path(name).is_file():
        return from_file(name, **parse_params(params))
    return get(name, **parse_params(params))


def to_jsonable(obj):
    """numpy arrays and scalars to lists and floats, recursively."""
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return to_jsonable(obj.tolist())
    if isinstance(obj, (np.floating, float)):
        v = float(obj)
        return v if np.isfinite(v) else str(v)
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (np.bool_,)):
        return bool(obj)
    if isinstance(obj, complex):
        return {"re": obj.real, "im": obj.imag}
    return obj


def emit_json(obj):
    print(json.dumps(to_jsonable(obj), indent=2))


def is_json_path(path):
    """True when an ``--out`` path asks for JSON (its suffix is .json)."""
    return Path(str(path)).suffix.lower() == ".json"


def write_json(path, obj):
    """Write ``obj`` (numpy arrays allowed) as JSON to ``path``."""
    Path(path).write_text(json.dumps(to_jsonable(obj), indent=2) + "\n")


class Progress:
    """``with Progress("simulating") as p: ... p.update("entry 3/12")``: a one-line status on stderr,
    redrawn every 0.2 s, shown only when stderr is a terminal and the work has taken more than 1 s."""

    def __init__(self, label, stream=None, delay=1.0):
        self.label = label
        self.stream = stream or sys.stderr
        self.delay = delay
        self.text = ""
        self._stop = threading.Event()
        self._thread = None
        self._shown = False
        self.enabled = bool(getattr(self.stream, "isatty", lambda: False)())

    def update(self, text):
        self.text = text

    def _loop(self):
        t0 = time.perf_counter()
        spin = "|/-\\"
        k = 0
        while not self._stop.wait(0.2):
            el = time.perf_counter() - t0
            if el < self.delay:
                continue
            self._shown = True
            self.stream.write(f"\r{spin[k % 4]} {self.label} {self.text} ({el:.0f} s)\033[K")
            self.stream.flush()
            k += 1

    def __enter__(self):
        self._quiet = quiet()  # the runs inside draw no line of their own under this one
        self._quiet.__enter__()
        if self.enabled:
            self._thread = threading.Thread(target=self._loop, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc):
        self._quiet.__exit__(*exc)
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            if self._shown:
                self.stream.write("\r\033[K")
                self.stream.flush()
        return False
